"""What the server cannot do is a capability error: not retried, with the provider's own
words and what to change. Driven through the real client stack (the registry's model for an
OpenAI-compatible endpoint, pydantic-ai, the openai SDK, httpx) against the fake server
answering as llama-server and OpenAI do."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel
from pydantic_ai import Agent
from pydantic_ai.exceptions import ModelHTTPError, ModelTimeoutError

from scholarstream.db import OwnerScope, upgrade_async
from scholarstream.errors import LLMError, ModelCapabilityError
from scholarstream.llm import (
    ResolvedModel,
    RetryPolicy,
    missing_capability,
    model_error,
    provider_message,
)
from scholarstream.runtime import Runtime
from scholarstream.settings import load_settings
from tests.fake_openai import FakeOpenAI, Status, Text
from tests.helpers import make_runtime, new_user
from tests.llm.fault_world import FAKE, provider_settings

NAME = "local-model"
MODEL = f"{FAKE}:{NAME}"

JINJA = "tools param requires --jinja flag"
NO_SCHEMA = (
    "Invalid parameter: 'response_format' of type 'json_schema' is not supported with this model."
)
CONTEXT = "the request exceeds the available context size, try increasing it"


class Verdict(BaseModel):
    relevant: bool
    reason: str


async def _runtime(fake: FakeOpenAI, data_dir: Path, **provider: Any) -> Runtime:
    providers: dict[str, dict[str, Any]] = provider_settings(fake)
    providers[FAKE].update(provider)
    settings = load_settings(
        data_dir=data_dir,
        llm={"roles": {"default": MODEL}, "providers": providers, "timeout_seconds": 5.0},
    )
    await upgrade_async(settings.app_database_url)
    return make_runtime(settings)


@pytest.fixture
async def runtime(fake: FakeOpenAI, data_dir: Path) -> AsyncIterator[Runtime]:
    built = await _runtime(fake, data_dir)
    yield built
    await built.close()


async def _run(runtime: Runtime, agent: Agent[None, Any], feature: str = "search.score") -> Any:
    user = await new_user(runtime)
    async with runtime.database.session() as session:
        return await runtime.llm.run(
            agent, "Is this paper relevant?", scope=OwnerScope(session, user.id), feature=feature
        )


async def test_a_server_without_tool_support_is_told_once_with_its_words_and_the_flag(
    fake: FakeOpenAI, data_dir: Path
) -> None:
    # llama-server without --jinja answers any request with tools HTTP 500 (a status the
    # policy would retry three times); this provider asks for structured output as a tool.
    fake.default(NAME, Status(500, message=JINJA))
    runtime = await _runtime(fake, data_dir, structured_output="tool")
    try:
        with pytest.raises(ModelCapabilityError) as caught:
            await _run(runtime, Agent(output_type=Verdict))
    finally:
        await runtime.close()

    error = caught.value
    assert (error.code, error.capability) == ("model_capability", "tools")
    assert fake.calls(NAME) == 1  # not retried: the same request fails the same way
    assert JINJA in error.message  # the provider's own words
    assert error.hint is not None
    assert "--jinja" in error.hint and "supports_tools = false" in error.hint
    assert "service failed" not in error.message


async def test_a_refused_json_schema_is_a_capability_error_naming_the_setting(
    runtime: Runtime, fake: FakeOpenAI
) -> None:
    # An OpenAI-compatible endpoint asks for JSON-schema output by default (native).
    fake.default(NAME, Status(400, message=NO_SCHEMA))

    with pytest.raises(ModelCapabilityError) as caught:
        await _run(runtime, Agent(output_type=Verdict))

    assert caught.value.capability == "json_schema"
    assert NO_SCHEMA in caught.value.message
    assert caught.value.hint is not None and 'structured_output = "tool"' in caught.value.hint
    assert fake.calls(NAME) == 1
    (request,) = fake.received
    assert request.body["response_format"]["type"] == "json_schema"


@pytest.mark.parametrize("status", [400, 500])
async def test_a_prompt_longer_than_the_context_is_not_retried_and_says_raise_c(
    runtime: Runtime, fake: FakeOpenAI, status: int
) -> None:
    fake.default(NAME, Status(status, message=CONTEXT))

    with pytest.raises(ModelCapabilityError) as caught:
        await _run(runtime, Agent(output_type=str), feature="chat")

    assert caught.value.capability == "context"
    assert CONTEXT in caught.value.message
    assert caught.value.hint is not None and "-c 8192" in caught.value.hint
    assert fake.calls(NAME) == 1


async def test_an_ordinary_500_is_still_retried_and_keeps_the_provider_words(
    runtime: Runtime, fake: FakeOpenAI
) -> None:
    fake.default(NAME, Status(500, message="slot unavailable"))

    with pytest.raises(LLMError) as caught:
        await _run(runtime, Agent(output_type=str), feature="chat")

    assert not isinstance(caught.value, ModelCapabilityError)
    assert fake.calls(NAME) == 3
    assert caught.value.message.endswith('The provider said: "slot unavailable"')


async def test_a_good_answer_after_a_transient_fault_is_unaffected(
    runtime: Runtime, fake: FakeOpenAI
) -> None:
    fake.script(NAME, Status(503), Text("fine"))
    result = await _run(runtime, Agent(output_type=str), feature="chat")
    assert result.output == "fine"


# The registry of patterns, on the errors pydantic-ai raises for each server's body.


def _http(status: int, body: object) -> ModelHTTPError:
    return ModelHTTPError(status_code=status, model_name=NAME, body=body)


@pytest.mark.parametrize(
    ("status", "body", "capability"),
    [
        (500, {"code": 500, "message": JINJA, "type": "server_error"}, "tools"),
        (400, {"error": "registry.ollama.ai/library/gemma:2b does not support tools"}, "tools"),
        (
            400,
            {
                "message": '"auto" tool choice requires --enable-auto-tool-choice and '
                "--tool-call-parser to be set"
            },
            "tools",
        ),
        (400, {"message": NO_SCHEMA, "param": "response_format"}, "json_schema"),
        (400, {"message": CONTEXT, "type": "exceed_context_size_error"}, "context"),
        (
            400,
            '{"error": {"message": "This model\'s maximum context length is 8192 tokens.",'
            ' "code": "context_length_exceeded"}}',
            "context",
        ),
        (500, {"message": "slot unavailable"}, None),
        # A rate limit is never about capabilities, whatever its words.
        (429, {"message": "tools are not supported on the free tier right now"}, None),
    ],
)
def test_capability_patterns(status: int, body: object, capability: str | None) -> None:
    error = _http(status, body)
    assert missing_capability(error) == capability
    assert RetryPolicy(10.0).is_transient(error) is (capability is None and status >= 429)


def test_the_provider_message_is_read_from_every_body_shape_and_redacted() -> None:
    assert provider_message(_http(400, {"message": "  two\n words "})) == "two words"
    assert provider_message(_http(400, {"error": {"message": "nested"}})) == "nested"
    assert provider_message(_http(400, '{"error": "ollama says"}')) == "ollama says"
    assert provider_message(_http(400, "plain text")) == "plain text"
    assert provider_message(_http(400, None)) is None
    leaked = provider_message(_http(401, {"message": "bad key sk-abcdefghijklmnopqrstuv"}))
    assert leaked is not None and "klmnopqrstuv" not in leaked


def _resolved() -> ResolvedModel:
    from pydantic_ai.models.test import TestModel

    return ResolvedModel("default", MODEL, FAKE, TestModel(), "server", from_provider=True)


def test_did_not_answer_only_when_nothing_came() -> None:
    silent = ModelTimeoutError(NAME, "timed out")
    assert model_error(silent, _resolved(), timeout_seconds=7).message == (
        f"{MODEL} did not answer within 7 s."
    )
    stalled = ModelTimeoutError(NAME, "timed out", in_stream=True)
    message = model_error(stalled, _resolved(), timeout_seconds=7).message
    assert "did not answer" not in message
    assert "after its answer had started" in message and "7 s" in message
