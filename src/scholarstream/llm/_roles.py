"""Named model roles mapped to model strings, resolved to ready pydantic-ai models."""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Literal

from pydantic import BaseModel
from pydantic_ai.models import Model

from scholarstream.db import Database, OwnerScope
from scholarstream.errors import OfflineModeError, ScholarStreamError
from scholarstream.llm._capabilities import ModelCapabilities
from scholarstream.llm._choices import ChoiceSource, ModelChoices, RoleChoice, UserEndpoint
from scholarstream.llm._credentials import CredentialStore
from scholarstream.llm._model_cache import ModelCache
from scholarstream.llm._providers import (
    Credential,
    ProviderSpec,
    canonical_provider,
    get_provider,
    registered_providers,
    split_model_string,
)
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


RoleState = Literal["offline", "problem", "configured", "checked", "check_failed"]


class RoleStatus(BaseModel):
    """A role as this user sees it: its model, where the choice comes from, and what is
    known about it. ``ready`` says only that it can be asked (a model and a credential);
    whether it answers is known after a check (``state`` "checked" or "check_failed")."""

    role: str
    purpose: str
    model: str | None
    provider: str | None
    ready: bool
    problem: str | None
    source: ChoiceSource | Literal["test"] | None = None
    state: RoleState = "configured"
    status: str = ""
    """In plain words: "configured (not checked)", "checked OK at ...", the problem."""
    checked_at: datetime | None = None


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
        self.choices = ModelChoices(settings, credentials.box)

    @property
    def offline(self) -> bool:
        """No model for anyone who has not chosen one: the server's settings name none.
        Whether one user can ask a model is ``offline_for(scope)``."""
        return not self._overrides and self.model_string(DEFAULT_ROLE) is None

    async def offline_for(self, scope: OwnerScope | None) -> bool:
        """Whether this user has no model for the default role: no choice of theirs, no
        server default an admin set, nothing in the settings."""
        if self._overrides or self.model_string(DEFAULT_ROLE) is not None:
            return False
        return await self.choices.pick(DEFAULT_ROLE, scope, DEFAULT_ROLE) is None

    async def offline_for_owner(self, database: Database, owner_id: uuid.UUID) -> bool:
        """``offline_for`` where the caller holds no session (reads only when the server's
        settings name no default model)."""
        if self._overrides or self.model_string(DEFAULT_ROLE) is not None:
            return False
        async with database.session() as session:
            return await self.offline_for(OwnerScope(session, owner_id))

    async def choice(self, role: str, scope: OwnerScope | None) -> RoleChoice | None:
        """The model ``role`` uses for this user and where that choice comes from."""
        return await self.choices.pick(role, scope, DEFAULT_ROLE)

    def roles(self) -> list[str]:
        configured = [r for r in self._settings.llm.roles if r not in KNOWN_ROLES]
        return [*KNOWN_ROLES, *sorted(configured)]

    def model_string(self, role: str) -> str | None:
        """The settings' model for ``role`` (what the server names, whoever asks)."""
        roles = self._settings.llm.roles
        return roles.get(role) or roles.get(DEFAULT_ROLE)

    async def resolve(self, role: str, scope: OwnerScope | None) -> ResolvedModel:
        override = self._overrides.get(role) or self._overrides.get(DEFAULT_ROLE)
        if override is not None:
            return ResolvedModel(role, f"test:{override.model_name}", "test", override, "none")
        choice = await self.choice(role, scope)
        if choice is None:
            raise OfflineModeError(
                f"No model is configured for the {role!r} role: "
                "ScholarStream runs in offline mode.",
                hint="Choose a model under Settings -> Models (PUT /api/v1/models/roles/default), "
                "or have the server set SCHOLARSTREAM_LLM__ROLES__DEFAULT=openai:gpt-4.1-mini.",
            )
        return await self.resolve_model_string(
            choice.model, scope, role=role, endpoint_owner=choice.endpoint_owner
        )

    async def resolve_model_string(
        self,
        model_string: str,
        scope: OwnerScope | None,
        *,
        role: str = DEFAULT_ROLE,
        endpoint_owner: uuid.UUID | None = None,
    ) -> ResolvedModel:
        """``endpoint_owner``: besides the user's own endpoints, whose endpoints the
        provider may name (the admin who set a server default)."""
        provider, model_name = split_model_string(model_string)
        endpoint = await self._endpoint(provider, scope, endpoint_owner)
        if endpoint is not None:
            spec, credential, capabilities = endpoint
        else:
            credential = await self._credentials.resolve(scope, provider)
        override = self._overrides.get(model_string) or self._overrides.get(DEFAULT_ROLE)
        if override is not None:
            return ResolvedModel(role, model_string, provider, override, credential.source)
        if endpoint is not None:
            model = self._models.get(spec.build, spec.name, model_name, credential)
            return ResolvedModel(
                role,
                model_string,
                provider,
                model,
                credential.source,
                from_provider=True,
                capabilities=capabilities,
            )
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
                streamed_requests=configured.streamed_requests,
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

    async def can_call(self, scope: OwnerScope | None, model_string: str) -> bool:
        """Whether this user has what ``model_string`` needs: their endpoint of that name,
        or a credential for the provider (``UnknownProviderError`` for a provider nobody
        configured)."""
        provider, _ = split_model_string(model_string)
        if await self._endpoint(provider, scope, None) is not None:
            return True
        return await self._credentials.has_credential(scope, provider)

    async def user_models(self, scope: OwnerScope | None) -> list[str]:
        """The models this user works with: each role's (their choices, the server
        defaults, the settings) and the model each of their endpoints was checked with."""
        models: dict[str, None] = {}
        for role in await self.roles_for(scope):
            choice = await self.choice(role, scope)
            if choice is not None:
                models[choice.model] = None
        if scope is not None:
            for endpoint in await self.choices.endpoints(scope):
                if endpoint.checked_model and endpoint.check_ok:
                    models[endpoint.checked_model] = None
        return list(models)

    def is_server_provider(self, provider: str) -> bool:
        """A registered provider or one the server's settings configure (as opposed to a
        user's endpoint)."""
        provider = canonical_provider(provider)
        return provider in self._settings.llm.providers or any(
            spec.name == provider for spec in registered_providers()
        )

    async def _endpoint(
        self, provider: str, scope: OwnerScope | None, endpoint_owner: uuid.UUID | None
    ) -> tuple[ProviderSpec, Credential, ModelCapabilities] | None:
        """A user endpoint named ``provider``: the user's own, else the one of whoever set
        the choice (a server default's admin). Server providers come first: an endpoint
        never shadows one."""
        if scope is None or self.is_server_provider(provider):
            return None
        owners = [scope.owner_id, endpoint_owner]
        # A model named outside a role (multi-LLM research) may be a server default's.
        owners += await self.choices.server_default_owners(scope.session, provider)
        for owner in dict.fromkeys(o for o in owners if o):
            row = await self.choices.endpoint_row(scope.session, owner, provider)
            if row is None:
                continue
            if not await self.choices.may_use_private(scope.session, owner):
                # The address was checked when the endpoint was saved; its name may
                # resolve elsewhere since (a shared server must not follow it inside).
                await self.choices.check_address(OwnerScope(scope.session, owner), row.base_url)
            spec = get_provider(provider, configured_base_url=row.base_url)
            return spec, self.choices.credential(row), UserEndpoint.of(row).capabilities()
        return None

    async def status(self, scope: OwnerScope | None) -> list[RoleStatus]:
        statuses = []
        for role in await self.roles_for(scope):
            statuses.append(await self.role_status(role, scope))
        return statuses

    async def roles_for(self, scope: OwnerScope | None) -> list[str]:
        """The known roles, the settings' custom roles and any role this user (or an
        admin's server default) has a choice for."""
        names = self.roles()
        if scope is not None:
            chosen = set(await self.choices.user_choices(scope))
            chosen |= set(await self.choices.server_defaults(scope.session))
            names += sorted(chosen - set(names))
        return names

    async def role_status(self, role: str, scope: OwnerScope | None) -> RoleStatus:
        purpose = KNOWN_ROLES.get(role, "custom role")
        if role in self._overrides or DEFAULT_ROLE in self._overrides:
            return RoleStatus(
                role=role,
                purpose=purpose,
                model="test",
                provider="test",
                ready=True,
                problem=None,
                source="test",
                state="configured",
                status="test model",
            )
        choice = await self.choice(role, scope)
        if choice is None:
            missing = "not configured (offline mode)"
            return RoleStatus(
                role=role,
                purpose=purpose,
                model=None,
                provider=None,
                ready=False,
                problem=missing,
                state="offline",
                status=missing,
            )
        provider: str | None = None
        problem: str | None = None
        try:
            provider, _ = split_model_string(choice.model)
            if await self._endpoint(provider, scope, choice.endpoint_owner) is None:
                await self._credentials.resolve(scope, provider)
        except ScholarStreamError as exc:
            problem = exc.message
        checked_at, ok, detail = choice.checked_at, choice.check_ok, choice.check_detail
        if checked_at is None and provider is not None and scope is not None:
            # A choice of an endpoint's model: the endpoint's check of that model counts.
            checked_at, ok, detail = await self._endpoint_check(scope, provider, choice)
        if problem is not None:
            state: RoleState = "problem"
            text = problem
        elif checked_at is None:
            state, text = "configured", "configured (not checked)"
        elif ok:
            state, text = "checked", f"checked OK at {checked_at:%Y-%m-%d %H:%M} UTC"
        else:
            state = "check_failed"
            text = f"check failed at {checked_at:%Y-%m-%d %H:%M} UTC: {detail or 'no detail'}"
        return RoleStatus(
            role=role,
            purpose=purpose,
            model=choice.model,
            provider=provider,
            ready=problem is None,
            problem=problem,
            source=choice.source,
            state=state,
            status=text,
            checked_at=checked_at,
        )

    async def _endpoint_check(
        self, scope: OwnerScope, provider: str, choice: RoleChoice
    ) -> tuple[datetime | None, bool | None, str | None]:
        for owner in dict.fromkeys(o for o in (scope.owner_id, choice.endpoint_owner) if o):
            row = await self.choices.endpoint_row(scope.session, owner, provider)
            if row is not None and row.checked_model == choice.model:
                return row.checked_at, row.check_ok, row.check_detail
        return None, None, None
