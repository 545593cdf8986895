"""The guide as a model: one pydantic-ai run per turn with ``GuideAnswer`` as structured
output, streamed so the ``message`` field reaches the user token by token (partial
validation of the output as it is written).

An answer that is not valid JSON or does not fit ``GuideAnswer`` is sent back to the
model once (pydantic-ai's output retries; a ``retry`` event tells the client to clear
the text shown so far); a second failure, or any provider failure, is an ``LLMError``.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Sequence

from pydantic import ValidationError
from pydantic_ai import Agent, ModelRetry
from pydantic_ai.exceptions import UnexpectedModelBehavior, UsageLimitExceeded
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    UserPromptPart,
)
from pydantic_ai.result import AgentStream
from pydantic_ai.settings import ModelSettings
from pydantic_ai.usage import RunUsage, UsageLimits

from scholarstream.errors import LLMError
from scholarstream.llm import (
    MODEL_FAILURES,
    ResolvedModel,
    model_error,
    output_spec,
    retry_capabilities,
)
from scholarstream.streams.core import (
    GuideAnswer,
    GuideMessage,
    GuideRequest,
    GuideRetry,
    GuideStreamItem,
    GuideTextDelta,
)

UsageSink = Callable[[RunUsage], Awaitable[None]]
"""Called with a successful turn's usage (the API records it in the usage ledger)."""

FEATURE = "stream_guide"
RETRY_REASON = "The guide's answer was not in the expected form; it was asked again."


class ModelGuide:
    def __init__(
        self,
        resolved: ResolvedModel,
        *,
        timeout_seconds: float = 60.0,
        output_retries: int = 1,
        on_usage: UsageSink | None = None,
        max_tokens: int | None = None,
    ) -> None:
        self.resolved = resolved
        self.timeout_seconds = timeout_seconds
        self.max_tokens = max_tokens
        """The answer's budget (``LLMGateway.max_tokens`` of ``stream_guide``): a small
        model that rambles stops there instead of writing for minutes."""
        self.output_retries = output_retries
        self.on_usage = on_usage

    async def respond(self, request: GuideRequest) -> AsyncGenerator[GuideStreamItem, None]:
        agent = Agent(
            # Asked for as the model's server supports it (JSON schema, a tool, or prompted).
            output_type=output_spec(GuideAnswer, self.resolved.capabilities),
            instructions=request.system_prompt,
            retries={"output": self.output_retries},
        )
        settings: ModelSettings = {"timeout": self.timeout_seconds}
        if self.max_tokens is not None:
            settings["max_tokens"] = self.max_tokens
        attempts = 0
        try:
            async with agent.iter(
                request.user_prompt,
                model=self.resolved.model,
                message_history=model_history(request.history),
                model_settings=settings,
                usage_limits=UsageLimits(request_limit=self.output_retries + 2),
                capabilities=retry_capabilities(self.resolved, self.timeout_seconds),
            ) as run:
                async for node in run:
                    if not Agent.is_model_request_node(node):
                        continue
                    attempts += 1
                    if attempts > 1:
                        yield GuideRetry(reason=RETRY_REASON)
                    async with node.stream(run.ctx) as stream:
                        async for text in _message_deltas(stream):
                            yield GuideTextDelta(text=text)
                result = run.result
        except MODEL_FAILURES as exc:
            raise model_error(exc, self.resolved, timeout_seconds=self.timeout_seconds) from exc
        except UsageLimitExceeded as exc:
            raise LLMError(
                f"{self.resolved.model_string} kept answering in a form that could not be used.",
                hint="Try again, or configure a stronger model for this role.",
            ) from exc
        if result is None:  # pragma: no cover - the run ended without reaching its end node
            raise LLMError(f"{self.resolved.model_string} gave no answer.", hint="Try again.")
        if self.on_usage is not None:
            await self.on_usage(result.usage)
        yield result.output


async def _message_deltas(stream: AgentStream[None, GuideAnswer]) -> AsyncIterator[str]:
    """The new text of the ``message`` field each time the partial output grows."""
    shown = ""
    try:
        async for partial in stream.stream_output(debounce_by=None):
            message = partial.message
            if len(message) > len(shown) and message.startswith(shown):
                yield message[len(shown) :]
                shown = message
    except UnexpectedModelBehavior as exc:
        if not isinstance(exc.__cause__, ValidationError | ModelRetry):
            raise
        # The finished answer did not validate: the run sends it back to the model (or
        # raises once the retries are used up); nothing to do while streaming.


def _user(content: str) -> ModelMessage:
    return ModelRequest(parts=[UserPromptPart(content=content)])


def _assistant(content: str) -> ModelMessage:
    return ModelResponse(parts=[TextPart(content=content)])


_AS_MODEL_MESSAGE: dict[str, Callable[[str], ModelMessage]] = {
    "user": _user,
    "assistant": _assistant,
}


def model_history(messages: Sequence[GuideMessage]) -> list[ModelMessage]:
    """The conversation as pydantic-ai messages, from the first user message (providers
    want the user to speak first; the opening question is in the system prompt's role)."""
    start = next((i for i, m in enumerate(messages) if m.role == "user"), len(messages))
    return [_AS_MODEL_MESSAGE[m.role](m.as_text()) for m in messages[start:]]
