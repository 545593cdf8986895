"""Named model roles mapped to model strings, resolved to ready pydantic-ai models."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from pydantic import BaseModel
from pydantic_ai.models import Model

from scholarstream.db import OwnerScope
from scholarstream.errors import MissingCredentialsError, OfflineModeError, UnknownProviderError
from scholarstream.llm._capabilities import ModelCapabilities
from scholarstream.llm._credentials import CredentialStore
from scholarstream.llm._model_cache import ModelCache
from scholarstream.llm._providers import get_provider, split_model_string
from scholarstream.settings import Settings

DEFAULT_ROLE = "default"
# Roles the product asks for; any other configured role name works too.
KNOWN_ROLES: dict[str, str] = {
    "default": "chat, tools, search skills, the stream guide",
    "fast": "titles, classification, cheap per-item steps",
    "synthesis": "multi-LLM synthesis and long reports",
}


@dataclass(frozen=True)
class ResolvedModel:
    role: str
    model_string: str
    provider: str
    model: Model
    credential_source: str
    from_provider: bool = False
    """Built by a provider from a credential (the registry's own models), as opposed to a
    test's override: only these go through the product's retry policy (``llm.retries``)."""
    capabilities: ModelCapabilities = field(default_factory=ModelCapabilities)


class RoleStatus(BaseModel):
    """A role as this user sees it: its model and whether it can be called."""

    role: str
    purpose: str
    model: str | None
    provider: str | None
    ready: bool
    problem: str | None


class ModelRegistry:
    """``overrides`` replaces real models by role (tests pass pydantic-ai's TestModel or
    FunctionModel); an override for ``default`` serves every role, as a configured default does.
    A model string as key (``openai:gpt-4.1-mini``) replaces that model where it is chosen by
    name (multi-LLM research); the credential is still looked up, as for the real model.

    Resolving looks the credential up each time (a user's key may change in any process);
    the model built from it is reused while the credential stays the same (``ModelCache``)."""

    def __init__(
        self,
        settings: Settings,
        credentials: CredentialStore,
        overrides: Mapping[str, Model] | None = None,
    ) -> None:
        self._settings = settings
        self._credentials = credentials
        self._overrides = dict(overrides or {})
        self._models = ModelCache()

    @property
    def offline(self) -> bool:
        return not self._overrides and self.model_string(DEFAULT_ROLE) is None

    def roles(self) -> list[str]:
        configured = [r for r in self._settings.llm.roles if r not in KNOWN_ROLES]
        return [*KNOWN_ROLES, *sorted(configured)]

    def model_string(self, role: str) -> str | None:
        roles = self._settings.llm.roles
        return roles.get(role) or roles.get(DEFAULT_ROLE)

    async def resolve(self, role: str, scope: OwnerScope | None) -> ResolvedModel:
        override = self._overrides.get(role) or self._overrides.get(DEFAULT_ROLE)
        if override is not None:
            return ResolvedModel(role, f"test:{override.model_name}", "test", override, "none")
        model_string = self.model_string(role)
        if model_string is None:
            raise OfflineModeError(
                f"No model is configured for the {role!r} role: ScholarStream runs in offline mode."
            )
        return await self.resolve_model_string(model_string, scope, role=role)

    async def resolve_model_string(
        self, model_string: str, scope: OwnerScope | None, *, role: str = DEFAULT_ROLE
    ) -> ResolvedModel:
        provider, model_name = split_model_string(model_string)
        credential = await self._credentials.resolve(scope, provider)
        override = self._overrides.get(model_string) or self._overrides.get(DEFAULT_ROLE)
        if override is not None:
            return ResolvedModel(role, model_string, provider, override, credential.source)
        configured = self._settings.llm.providers.get(provider)
        spec = get_provider(
            provider, configured_base_url=configured.base_url if configured else None
        )
        model = self._models.get(spec.build, spec.name, model_name, credential)
        capabilities = spec.capabilities
        if configured is not None:
            capabilities = capabilities.replace(
                structured_output=configured.structured_output,
                supports_tools=configured.supports_tools,
                compact_prompt=configured.compact_prompt,
                max_tokens={**capabilities.max_tokens, **configured.max_tokens} or None,
            )
        return ResolvedModel(
            role,
            model_string,
            provider,
            model,
            credential.source,
            from_provider=True,
            capabilities=capabilities,
        )

    async def status(self, scope: OwnerScope | None) -> list[RoleStatus]:
        statuses = []
        for role in self.roles():
            purpose = KNOWN_ROLES.get(role, "custom role")
            model_string = self.model_string(role)
            provider: str | None = None
            problem: str | None = None
            if role in self._overrides or DEFAULT_ROLE in self._overrides:
                model_string, provider = "test", "test"
            elif model_string is None:
                problem = "not configured (offline mode)"
            else:
                try:
                    provider, _ = split_model_string(model_string)
                    await self._credentials.resolve(scope, provider)
                except (MissingCredentialsError, UnknownProviderError) as exc:
                    problem = exc.message
            statuses.append(
                RoleStatus(
                    role=role,
                    purpose=purpose,
                    model=model_string,
                    provider=provider,
                    ready=problem is None,
                    problem=problem,
                )
            )
        return statuses
