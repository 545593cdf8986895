"""The model check: what a model, as its server runs it, can do. The web UI's "Test"
button, the API and ``scholarstream models --check [ROLE]`` run it.

==============  ===========================================================================
step            what is asked; ok when
==============  ===========================================================================
``reachable``   ``GET {base_url}/models`` of an OpenAI-compatible server answers (a cloud
                provider is reached through the completion); the model ids it lists
``completion``  a one-token-ish answer (``max_tokens`` 8): any text comes back
``tools``       one trivial tool with the call required (``tool_choice``): a real tool call
                comes back. A call written as text, as small local models do, is a no
``json_schema`` the answer as JSON with a schema (``response_format`` json_schema): the
                answer parses and fits the schema
==============  ===========================================================================

Each step is bounded (``reachable`` by 10 s, the others by ``llm.timeout_seconds``), sent
once (no retries: a check reports what happens, it does not hide it) and described in plain
words: a failure is the ``LLMError`` text the product would show (``model_errors``), e.g.
"cannot call tools as its server runs ... Start llama-server with --jinja ...". When the
server cannot be reached or does not answer a plain completion, the later steps are not
tried.

``CheckReport.suggested`` is what the provider's settings should say: ``structured_output``
``native`` when JSON-schema output works, else ``tool`` when tool calls work, else
``prompted``; ``supports_tools`` when tool calls work. A model that is not usable keeps the
capabilities it had (nothing was learnt about it).
"""

from __future__ import annotations

import asyncio
import json
import re
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Literal

import httpx
from pydantic import BaseModel, ValidationError
from pydantic_ai import Agent, NativeOutput, ToolOutput, capture_run_messages
from pydantic_ai.exceptions import UserError
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart
from pydantic_ai.settings import ModelSettings

from scholarstream.errors import ApiKeyInvalidError, LLMError
from scholarstream.llm._calls import answer_budget
from scholarstream.llm._capabilities import ModelCapabilities
from scholarstream.llm._model_errors import MODEL_FAILURES, model_error
from scholarstream.llm._roles import ResolvedModel
from scholarstream.settings import Settings

__all__ = [
    "CHECK_FEATURE",
    "CheckName",
    "CheckReport",
    "CheckStep",
    "check_model",
    "list_endpoint_models",
]

CheckName = Literal["reachable", "completion", "tools", "json_schema"]
CHECK_FEATURE = "models.check"
REACHABLE_TIMEOUT_SECONDS = 10.0
COMPLETION_MAX_TOKENS = 8
_NOT_TRIED = "Not tried: "


@dataclass(frozen=True)
class CheckStep:
    name: CheckName
    ok: bool
    detail: str
    seconds: float


@dataclass(frozen=True)
class CheckReport:
    model_string: str
    steps: tuple[CheckStep, ...]
    suggested: ModelCapabilities
    """What the provider's settings should say, from what worked."""

    @property
    def usable(self) -> bool:
        """The server is reached and answers a plain completion."""
        return self.ok("reachable") and self.ok("completion")

    def ok(self, name: CheckName) -> bool:
        return any(step.name == name and step.ok for step in self.steps)

    def step(self, name: CheckName) -> CheckStep | None:
        return next((step for step in self.steps if step.name == name), None)


class _Sum(BaseModel):
    """The answer of the structured steps: any integer fits (the check is about the form,
    not about the arithmetic of a small model)."""

    answer: int


_QUESTION = "What is 2 + 3? Give the answer as a number."
_TOOL_NAME = "give_answer"


async def list_endpoint_models(
    base_url: str,
    api_key: str | None,
    *,
    timeout: float = 10,  # noqa: ASYNC109 - one HTTP request's timeout, given to httpx
    transport: httpx.AsyncBaseTransport | None = None,
) -> list[str]:
    """The model ids an OpenAI-compatible server lists (``GET {base_url}/models``), in its
    order. Raises ``LLMError`` saying in plain words what is wrong with the address, the key
    or the server."""
    url = base_url.rstrip("/") + "/models"
    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    try:
        async with httpx.AsyncClient(timeout=timeout, transport=transport) as client:
            response = await client.get(url, headers=headers)
    except httpx.TimeoutException as exc:
        raise LLMError(
            f"{base_url} did not answer within {timeout:g} s.",
            hint="Check that the server is running and not busy, then try again.",
        ) from exc
    except (httpx.HTTPError, ValueError) as exc:
        raise LLMError(
            f"Could not reach {base_url}: nothing answered there.",
            hint="Check the address (scheme, host and port, usually ending in /v1) and that "
            "the server is running (llama-server --port 8080, ollama serve).",
        ) from exc
    if response.status_code in (401, 403):
        raise ApiKeyInvalidError(
            f"{base_url} refused the key (HTTP {response.status_code}).",
            hint="Enter the endpoint's API key (a local server without --api-key needs none).",
        )
    if response.status_code == 404:
        raise LLMError(
            f"{url} does not exist (HTTP 404).",
            hint="Use the server's OpenAI-compatible base URL: it usually ends in /v1 "
            "(http://127.0.0.1:8080/v1 for llama-server, http://127.0.0.1:11434/v1 for Ollama).",
        )
    if response.status_code >= 400:
        raise LLMError(
            f"{base_url} answered HTTP {response.status_code} when asked for its models.",
            hint="Check the server's log, then try again.",
        )
    ids = _model_ids(response)
    if ids is None:
        raise LLMError(
            f"{base_url} did not answer like an OpenAI-compatible server.",
            hint="Use the server's OpenAI-compatible base URL: it usually ends in /v1.",
        )
    return ids


def _model_ids(response: httpx.Response) -> list[str] | None:
    try:
        body = response.json()
    except ValueError:
        return None
    data = body.get("data") if isinstance(body, dict) else None
    if not isinstance(data, list):
        return None
    ids = [item.get("id") for item in data if isinstance(item, dict)]
    return list(dict.fromkeys(i for i in ids if isinstance(i, str) and i))


class _Checker:
    def __init__(self, resolved: ResolvedModel, settings: Settings) -> None:
        self.resolved = resolved
        self.timeout = settings.llm.timeout_seconds
        self.max_tokens = answer_budget(resolved, settings.llm, CHECK_FEATURE)

    def settings(self, max_tokens: int) -> ModelSettings:
        # Once, no retries: the check reports what happens.
        return {
            "timeout": self.timeout,
            "max_tokens": max_tokens,
            "max_retries": 0,
            "temperature": 0.0,
        }

    async def timed(
        self, name: CheckName, step: Callable[[], Awaitable[tuple[bool, str]]], limit: float
    ) -> CheckStep:
        started = time.monotonic()
        try:
            async with asyncio.timeout(limit):
                ok, detail = await step()
        except TimeoutError:
            ok, detail = False, f"No answer within {limit:g} s."
        except MODEL_FAILURES as exc:
            ok, detail = False, _plain(model_error(exc, self.resolved, timeout_seconds=limit))
        except LLMError as exc:
            ok, detail = False, _plain(exc)
        except UserError:
            # pydantic-ai refuses to ask this kind of model that way before sending anything.
            ok, detail = False, "This kind of model cannot be asked this way: nothing was sent."
        return CheckStep(name, ok, detail, round(time.monotonic() - started, 3))

    async def reachable(self) -> tuple[bool, str]:
        endpoint = _endpoint(self.resolved)
        if endpoint is None:
            raise AssertionError("only called for an OpenAI-compatible endpoint")
        base_url, api_key = endpoint
        ids = await list_endpoint_models(base_url, api_key, timeout=REACHABLE_TIMEOUT_SECONDS)
        name = self.resolved.model_string.partition(":")[2]
        shown = ", ".join(ids[:8]) + (f" and {len(ids) - 8} more" if len(ids) > 8 else "")
        detail = f"{base_url} answers; it serves {shown or 'no model it names'}."
        if ids and name not in ids:
            detail += (
                f" It does not list {name}: llama.cpp answers under any name, other "
                "servers need one of these."
            )
        return True, detail

    async def completion(self) -> tuple[bool, str]:
        agent: Agent[None, str] = Agent(output_type=str, retries=0)
        result = await agent.run(
            "Reply with the single word OK.",
            model=self.resolved.model,
            model_settings=self.settings(COMPLETION_MAX_TOKENS),
        )
        text = " ".join(result.output.split())
        if not text:
            return False, "It answered with no text."
        return True, f"It answered: {text[:60]!r}."

    async def tools(self) -> tuple[bool, str]:
        agent: Agent[None, _Sum] = Agent(
            output_type=ToolOutput(_Sum, name=_TOOL_NAME, description="Give the answer."),
            retries=0,
        )
        with capture_run_messages() as messages:
            try:
                await agent.run(
                    f"{_QUESTION} Call the {_TOOL_NAME} tool with it.",
                    model=self.resolved.model,
                    model_settings=self.settings(self.max_tokens),
                )
            except MODEL_FAILURES as exc:
                response = _first_response(messages)
                if response is None:
                    raise
                return False, _tool_failure(response) or _plain(
                    model_error(exc, self.resolved, timeout_seconds=self.timeout)
                )
        return True, "It called the tool with valid arguments."

    async def json_schema(self) -> tuple[bool, str]:
        agent: Agent[None, _Sum] = Agent(output_type=NativeOutput(_Sum), retries=0)
        with capture_run_messages() as messages:
            try:
                await agent.run(
                    _QUESTION,
                    model=self.resolved.model,
                    model_settings=self.settings(self.max_tokens),
                )
            except MODEL_FAILURES as exc:
                response = _first_response(messages)
                if response is None:
                    raise
                return False, _json_failure(response) or _plain(
                    model_error(exc, self.resolved, timeout_seconds=self.timeout)
                )
        return True, "It answered with JSON that fits the schema."


async def check_model(resolved: ResolvedModel, *, settings: Settings) -> CheckReport:
    """What ``resolved`` can do, step by step (see the module's table)."""
    checker = _Checker(resolved, settings)
    steps: list[CheckStep] = []
    endpoint = _endpoint(resolved)
    if endpoint is not None:
        limit = min(REACHABLE_TIMEOUT_SECONDS, checker.timeout)
        reach = await checker.timed("reachable", checker.reachable, limit)
        steps.append(reach)
        if not reach.ok:
            return _report(resolved, steps, stop=f"{_NOT_TRIED}the server could not be reached.")
    completion = await checker.timed("completion", checker.completion, checker.timeout)
    if endpoint is None:
        steps.append(_reached_through(completion, resolved))
    steps.append(completion)
    if not completion.ok:
        return _report(
            resolved, steps, stop=f"{_NOT_TRIED}the model did not answer a plain request."
        )
    steps.append(await checker.timed("tools", checker.tools, checker.timeout))
    steps.append(await checker.timed("json_schema", checker.json_schema, checker.timeout))
    return _report(resolved, steps)


def _report(resolved: ResolvedModel, steps: list[CheckStep], *, stop: str = "") -> CheckReport:
    done = {step.name for step in steps}
    names: tuple[CheckName, ...] = ("reachable", "completion", "tools", "json_schema")
    steps += [CheckStep(name, False, stop, 0.0) for name in names if name not in done]
    report = CheckReport(resolved.model_string, tuple(steps), resolved.capabilities)
    if not report.usable:
        return report  # nothing was learnt about what it can do
    tools, native = report.ok("tools"), report.ok("json_schema")
    structured = "native" if native else "tool" if tools else "prompted"
    suggested = resolved.capabilities.replace(structured_output=structured, supports_tools=tools)
    return CheckReport(resolved.model_string, tuple(steps), suggested)


def _reached_through(completion: CheckStep, resolved: ResolvedModel) -> CheckStep:
    """A cloud provider (or a test's model) has no models list we ask: it is reached when
    its completion request got any answer from it, even a refusal."""
    if not resolved.from_provider:
        return CheckStep("reachable", True, "A built-in test model: nothing to reach.", 0.0)
    unreached = not completion.ok and completion.detail.startswith("Could not reach")
    if unreached:
        return CheckStep("reachable", False, completion.detail, completion.seconds)
    return CheckStep(
        "reachable", True, f"{resolved.provider} answered the completion request.", 0.0
    )


def _endpoint(resolved: ResolvedModel) -> tuple[str, str | None] | None:
    """The base URL and key of an OpenAI-compatible model, read off its client."""
    from pydantic_ai.models.openai import OpenAIChatModel

    model = resolved.model
    if not resolved.from_provider or not isinstance(model, OpenAIChatModel):
        return None
    client = model.client
    key = client.api_key if client.api_key and client.api_key != "unused" else None
    return str(client.base_url).rstrip("/"), key


def _plain(error: LLMError) -> str:
    return f"{error.message} {error.hint}" if error.hint else error.message


def _first_response(messages: list[ModelMessage]) -> ModelResponse | None:
    return next((m for m in messages if isinstance(m, ModelResponse)), None)


_CALL_AS_TEXT = re.compile(r"<tool_call>|\"name\"\s*:|\"arguments\"\s*:|```json", re.IGNORECASE)


def _tool_failure(response: ModelResponse) -> str | None:
    """Why the response is not a tool call, read off what the model sent."""
    if any(isinstance(part, ToolCallPart) for part in response.parts):
        return "It called the tool, but its arguments did not fit the tool's schema."
    text = _text_of(response)
    if _CALL_AS_TEXT.search(text):
        return (
            "It wrote the tool call as text instead of calling the tool: the server does not "
            "turn it into a tool call (llama-server needs --jinja and a model whose chat "
            "template knows tools)."
        )
    if text:
        return "It answered in text instead of calling the tool."
    return None


def _json_failure(response: ModelResponse) -> str | None:
    text = _text_of(response).strip()
    if not text:
        return None
    fenced = re.fullmatch(r"```(?:json)?\s*(.*?)\s*```", text, re.DOTALL)
    try:
        value: Any = json.loads(fenced.group(1) if fenced else text)
    except ValueError:
        return "It answered with text that is not JSON: the server ignored the JSON schema."
    try:
        _Sum.model_validate(value)
    except ValidationError:
        return "It answered with JSON that does not fit the schema."
    return None  # pragma: no cover - a fitting answer is not a failure


def _text_of(response: ModelResponse) -> str:
    return "".join(part.content for part in response.parts if isinstance(part, TextPart))
