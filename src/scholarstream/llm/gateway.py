"""The one way product code runs a pydantic-ai agent: pick the role's model for this user,
apply the timeout, translate provider failures into ``LLMError``, record the usage."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeVar

from pydantic_ai import Agent
from pydantic_ai.agent import AgentRunResult
from pydantic_ai.exceptions import ModelHTTPError, UnexpectedModelBehavior
from pydantic_ai.messages import ModelMessage
from pydantic_ai.settings import ModelSettings

from scholarstream.db.scope import OwnerScope
from scholarstream.errors import LLMError
from scholarstream.llm.roles import DEFAULT_ROLE, ModelRegistry, ResolvedModel
from scholarstream.llm.usage import record_usage
from scholarstream.settings import Settings

DepsT = TypeVar("DepsT")
OutputT = TypeVar("OutputT")


class LLMGateway:
    def __init__(self, settings: Settings, registry: ModelRegistry) -> None:
        self.settings = settings
        self.registry = registry

    @property
    def offline(self) -> bool:
        return self.registry.offline

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
        settings: ModelSettings = {"timeout": self.settings.llm.timeout_seconds}
        try:
            result = await agent.run(
                prompt,
                model=resolved.model,
                deps=deps,
                model_settings=settings,
                message_history=message_history,
            )
        except (ModelHTTPError, UnexpectedModelBehavior) as exc:
            raise model_error(exc, resolved) from exc
        await record_usage(
            scope, self.settings, feature=feature, resolved=resolved, usage=result.usage
        )
        return result


def model_error(exc: ModelHTTPError | UnexpectedModelBehavior, resolved: ResolvedModel) -> LLMError:
    """A provider's failure as the product's ``LLMError``, with what to do about it."""
    if isinstance(exc, ModelHTTPError):
        return LLMError(
            f"{resolved.model_string} answered HTTP {exc.status_code}.",
            hint=_hint_for_status(exc.status_code),
        )
    return LLMError(
        f"{resolved.model_string} gave an answer that could not be used: {exc.message}",
        hint="Try again, or configure a stronger model for this role.",
    )


def _hint_for_status(status: int) -> str:
    hints: dict[int, str] = {
        401: "The API key was refused: update it under Settings or in the server configuration.",
        403: "The key has no access to this model: pick another model or check the account.",
        404: "The model name is unknown to the provider: check the model string.",
        429: "The provider is rate-limiting or out of quota: wait and retry, or raise the quota.",
    }
    return hints.get(status, "The provider failed; try again shortly.")
