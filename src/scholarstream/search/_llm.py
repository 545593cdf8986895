"""How search skills call a model: structured output through a pydantic-ai agent.

Skills depend on ``SkillLLM`` only. In the product it is ``GatewaySkillLLM`` (the user's
models and keys, usage recorded); tests and benchmarks use ``ModelSkillLLM`` with
pydantic-ai's ``TestModel`` or ``FunctionModel``.
"""

from __future__ import annotations

import asyncio
import uuid
from typing import Protocol, TypeVar, runtime_checkable

from pydantic_ai import Agent
from pydantic_ai.exceptions import ModelAPIError, UnexpectedModelBehavior
from pydantic_ai.models import Model

from scholarstream.db import Database, OwnerScope
from scholarstream.errors import LLMError, ScholarStreamError
from scholarstream.llm import DEFAULT_ROLE, LLMGateway, ModelCapabilities

OutputT = TypeVar("OutputT")


class SkillLLM(Protocol):
    async def structured(
        self, agent: Agent[None, OutputT], prompt: str, *, feature: str, role: str = DEFAULT_ROLE
    ) -> OutputT:
        """The agent's validated output; ``LLMError`` when the model fails or keeps
        answering with output that does not validate."""
        ...


@runtime_checkable
class KnowsCapabilities(Protocol):
    """A ``SkillLLM`` that can tell what the model of a role can do (before asking it)."""

    async def capabilities(self, role: str) -> ModelCapabilities | None:
        """``None`` when the role has no usable model (the call will fall back anyway)."""
        ...


class GatewaySkillLLM:
    def __init__(self, gateway: LLMGateway, database: Database, owner_id: uuid.UUID) -> None:
        self.gateway = gateway
        self.database = database
        self.owner_id = owner_id

    async def structured(
        self, agent: Agent[None, OutputT], prompt: str, *, feature: str, role: str = DEFAULT_ROLE
    ) -> OutputT:
        # The whole call's deadline (a stream that keeps producing never trips the per-read
        # timeout); running out is a fallback like any model failure (``FALLBACK_ERRORS``).
        async with (
            asyncio.timeout(self.gateway.settings.llm.deadline_seconds),
            self.database.session() as session,
        ):
            result = await self.gateway.run(
                agent, prompt, scope=OwnerScope(session, self.owner_id), feature=feature, role=role
            )
        return result.output

    async def capabilities(self, role: str) -> ModelCapabilities | None:
        try:
            async with self.database.session() as session:
                resolved = await self.gateway.registry.resolve(
                    role, OwnerScope(session, self.owner_id)
                )
        except ScholarStreamError:
            return None
        return resolved.capabilities


class ModelSkillLLM:
    """Runs the agent on one given model, without the usage ledger."""

    def __init__(self, model: Model) -> None:
        self.model = model

    async def structured(
        self, agent: Agent[None, OutputT], prompt: str, *, feature: str, role: str = DEFAULT_ROLE
    ) -> OutputT:
        try:
            result = await agent.run(prompt, model=self.model)
        except UnexpectedModelBehavior as exc:
            raise LLMError(
                f"The model gave an answer that could not be used: {exc.message}",
                hint="Try again, or configure a stronger model for this role.",
            ) from exc
        except ModelAPIError as exc:
            # As the gateway does: a provider failure is the product's LLMError.
            raise LLMError(f"The model failed: {exc.message}", hint="Try again shortly.") from exc
        return result.output
