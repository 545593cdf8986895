"""The one way product code runs a pydantic-ai agent: pick the role's model for this user,
apply the answer budget (``max_tokens`` per feature), the per-read timeout, the retry policy
(``llm.retries``) and the total deadline (``llm.calls``: cancelled on the wire when it
passes), translate provider failures into ``LLMError`` (``llm.model_errors``), log them, and
record the usage.

Code that calls pydantic-ai itself (a streamed chat turn, the stream guide) takes the same
budget from ``LLMGateway.call(resolved, feature)``: a ``ModelCall`` with ``model_settings``,
``capabilities`` (the retry policy), the deadline and the error translation (see
``llm.calls``)."""

from __future__ import annotations

from collections.abc import AsyncIterable, Sequence
from typing import Any, TypeVar

from pydantic_ai import Agent, RunContext
from pydantic_ai.agent import AgentRunResult
from pydantic_ai.messages import AgentStreamEvent, ModelMessage
from pydantic_ai.settings import ModelSettings

from scholarstream.db import OwnerScope
from scholarstream.llm._calls import ModelCall, answer_budget
from scholarstream.llm._capabilities import output_spec
from scholarstream.llm._model_errors import model_error
from scholarstream.llm._roles import DEFAULT_ROLE, ModelRegistry, ResolvedModel
from scholarstream.llm._usage import record_usage
from scholarstream.settings import Settings

__all__ = ["LLMGateway", "model_error"]


async def _drain(_: RunContext[Any], events: AsyncIterable[AgentStreamEvent]) -> None:
    async for _event in events:
        pass


DepsT = TypeVar("DepsT")
OutputT = TypeVar("OutputT")


class LLMGateway:
    def __init__(self, settings: Settings, registry: ModelRegistry) -> None:
        self.settings = settings
        self.registry = registry

    @property
    def offline(self) -> bool:
        return self.registry.offline

    def max_tokens(self, resolved: ResolvedModel, feature: str) -> int:
        """The answer budget of ``feature`` on this model: the provider's override, the
        server's setting, the built-in default, in that order."""
        return answer_budget(resolved, self.settings.llm, feature)

    def model_settings(self, resolved: ResolvedModel, feature: str) -> ModelSettings:
        """What every request of ``feature`` to this model carries: the per-read timeout
        and the answer budget."""
        return self.call(resolved, feature).model_settings

    def call(self, resolved: ResolvedModel, feature: str) -> ModelCall:
        """One call's budget, deadline and error handling, for code that calls pydantic-ai
        itself: ``async with llm.call(resolved, feature) as call: ...`` (``llm.calls``)."""
        return ModelCall.of(resolved, feature, self.settings.llm)

    async def run(
        self,
        agent: Agent[DepsT, OutputT],
        prompt: str,
        *,
        scope: OwnerScope,
        feature: str,
        role: str = DEFAULT_ROLE,
        deps: DepsT = None,  # type: ignore[assignment]
        message_history: Sequence[ModelMessage] | None = None,
    ) -> AgentRunResult[OutputT]:
        resolved = await self.registry.resolve(role, scope)
        return await self.run_with(
            agent,
            prompt,
            resolved,
            scope=scope,
            feature=feature,
            deps=deps,
            message_history=message_history,
        )

    async def run_with(
        self,
        agent: Agent[DepsT, OutputT],
        prompt: str,
        resolved: ResolvedModel,
        *,
        scope: OwnerScope,
        feature: str,
        deps: DepsT = None,  # type: ignore[assignment]
        message_history: Sequence[ModelMessage] | None = None,
    ) -> AgentRunResult[OutputT]:
        """``agent`` answering ``prompt`` on ``resolved``; raises ``LLMError`` (logged)
        when the model fails, cannot do what is asked (``ModelCapabilityError``), or has not
        finished within ``llm.deadline_seconds``."""
        async with self.call(resolved, feature) as call:
            result: AgentRunResult[OutputT] = await agent.run(
                prompt,
                output_type=output_spec(agent.output_type, resolved.capabilities),
                model=resolved.model,
                deps=deps,
                model_settings=call.model_settings,
                message_history=message_history,
                capabilities=call.capabilities,
                # A handler makes the run stream its requests (see ``streamed_requests``).
                event_stream_handler=_drain if resolved.capabilities.streamed_requests else None,
            )
        await record_usage(
            scope, self.settings, feature=feature, resolved=resolved, usage=result.usage
        )
        return result
