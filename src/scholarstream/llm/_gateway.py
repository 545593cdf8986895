"""The one way product code runs a pydantic-ai agent: pick the role's model for this user,
apply the timeout and the retry policy (``llm.retries``), translate provider failures into
``LLMError`` (``llm.model_errors``), record the usage."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeVar

from pydantic_ai import Agent
from pydantic_ai.agent import AgentRunResult
from pydantic_ai.messages import ModelMessage
from pydantic_ai.settings import ModelSettings

from scholarstream.db import OwnerScope
from scholarstream.llm._capabilities import output_spec
from scholarstream.llm._model_errors import MODEL_FAILURES, model_error
from scholarstream.llm._retries import retry_capabilities
from scholarstream.llm._roles import DEFAULT_ROLE, ModelRegistry, ResolvedModel
from scholarstream.llm._usage import record_usage
from scholarstream.settings import DEFAULT_MAX_TOKENS, Settings

__all__ = ["LLMGateway", "model_error"]

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
        for budgets in (
            resolved.capabilities.max_tokens,
            self.settings.llm.max_tokens,
            DEFAULT_MAX_TOKENS,
        ):
            if feature in budgets:
                return budgets[feature]
        return self.settings.llm.max_tokens.get("default", DEFAULT_MAX_TOKENS["default"])

    def model_settings(self, resolved: ResolvedModel, feature: str) -> ModelSettings:
        """What every request of ``feature`` to this model carries: the per-read timeout
        and the answer budget."""
        return {
            "timeout": self.settings.llm.timeout_seconds,
            "max_tokens": self.max_tokens(resolved, feature),
        }

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
        timeout = self.settings.llm.timeout_seconds
        settings = self.model_settings(resolved, feature)
        try:
            result: AgentRunResult[OutputT] = await agent.run(
                prompt,
                output_type=output_spec(agent.output_type, resolved.capabilities),
                model=resolved.model,
                deps=deps,
                model_settings=settings,
                message_history=message_history,
                capabilities=retry_capabilities(resolved, timeout),
            )
        except MODEL_FAILURES as exc:
            raise model_error(exc, resolved, timeout_seconds=timeout) from exc
        await record_usage(
            scope, self.settings, feature=feature, resolved=resolved, usage=result.usage
        )
        return result
