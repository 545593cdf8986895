"""Models users bring: each user's model per role, the server defaults an admin sets, and
users' own OpenAI-compatible endpoints (Ollama, llama.cpp, vLLM, LM Studio, OpenRouter).

An endpoint's name is the provider part of model strings (``mylocal:qwen2.5``); its key is
stored encrypted with the server secret, like ``provider_keys``. Where an endpoint may
point is the server's choice (``llm.user_endpoints``): a model on the user's own machine
is the normal case in single-user mode, while on a shared server an address on its
network (loopback, private, link-local) would let any user make the server call it (SSRF).
"""

from __future__ import annotations

import re
import uuid
from dataclasses import dataclass
from datetime import datetime
from typing import Literal

import httpx
from sqlalchemy import delete, select
from sqlalchemy.ext.asyncio import AsyncSession

from scholarstream.db import OwnerScope, utcnow
from scholarstream.db.tables import ModelChoiceRow, ModelEndpointRow, User
from scholarstream.errors import InvalidInputError, NotFoundError, PermissionDeniedError
from scholarstream.llm._capabilities import STRUCTURED_OUTPUTS, ModelCapabilities
from scholarstream.llm._providers import (
    LOCAL_SERVER,
    Credential,
    canonical_provider,
    registered_providers,
)
from scholarstream.logs import remember_secret
from scholarstream.public_addresses import (
    Resolver,
    ip_of,
    is_local_name,
    is_public,
    system_resolver,
)
from scholarstream.secret_box import SecretBox
from scholarstream.settings import Settings

__all__ = [
    "ChoiceSource",
    "EndpointInput",
    "ModelChoices",
    "RoleChoice",
    "UserEndpoint",
]

ChoiceSource = Literal["user", "server default", "settings"]

_ENDPOINT_NAME = re.compile(r"[a-z][a-z0-9_-]{0,39}")
_RESERVED = {"test", "none", "offline", "user", "server"}
MAX_BASE_URL = 500
MAX_MODEL_STRING = 200


@dataclass(frozen=True)
class RoleChoice:
    """The model a role uses for one user, where that choice comes from, and what the last
    check of it found (``checked_at`` None: never checked)."""

    role: str
    model: str
    source: ChoiceSource
    endpoint_owner: uuid.UUID | None = None
    """Whose endpoints the model's provider is looked up in besides the user's own (the
    admin who set a server default)."""
    checked_at: datetime | None = None
    check_ok: bool | None = None
    check_detail: str | None = None


@dataclass(frozen=True)
class EndpointInput:
    name: str
    base_url: str
    api_key: str | None = None
    """``None`` keeps a stored key; ``""`` removes it."""
    structured_output: str | None = None
    supports_tools: bool | None = None
    compact_prompt: bool | None = None


@dataclass(frozen=True)
class UserEndpoint:
    name: str
    base_url: str
    has_key: bool
    structured_output: str | None
    supports_tools: bool | None
    compact_prompt: bool | None
    detected_structured_output: str | None
    detected_supports_tools: bool | None
    checked_model: str | None
    checked_at: datetime | None
    check_ok: bool | None
    check_detail: str | None

    @classmethod
    def of(cls, row: ModelEndpointRow) -> UserEndpoint:
        return cls(
            name=row.name,
            base_url=row.base_url,
            has_key=row.key_ciphertext is not None,
            structured_output=row.structured_output,
            supports_tools=row.supports_tools,
            compact_prompt=row.compact_prompt,
            detected_structured_output=row.detected_structured_output,
            detected_supports_tools=row.detected_supports_tools,
            checked_model=row.checked_model,
            checked_at=row.checked_at,
            check_ok=row.check_ok,
            check_detail=row.check_detail,
        )

    def capabilities(self) -> ModelCapabilities:
        """A local server's defaults, then what the check found, then the user's overrides."""
        return LOCAL_SERVER.replace(
            structured_output=self.detected_structured_output,
            supports_tools=self.detected_supports_tools,
        ).replace(
            structured_output=self.structured_output,
            supports_tools=self.supports_tools,
            compact_prompt=self.compact_prompt,
        )


def builtin_provider_names(settings: Settings) -> set[str]:
    """Provider names an endpoint may not take: registered providers, their aliases and
    the server's configured providers."""
    names = set(settings.llm.providers) | _RESERVED
    for spec in registered_providers():
        names.add(spec.name)
        names.update(spec.aliases)
    return names


def validate_base_url(base_url: str) -> httpx.URL:
    base_url = base_url.strip()
    problem = None
    try:
        url = httpx.URL(base_url)
    except (httpx.InvalidURL, ValueError):
        url = None
    if url is None or url.scheme not in ("http", "https") or not url.host:
        problem = "The base URL must be an http:// or https:// address."
    elif url.userinfo:
        problem = "The base URL may not contain a user name or password."
    elif url.query or url.fragment or len(base_url) > MAX_BASE_URL:
        problem = "The base URL must be a plain address, without a query or fragment."
    if problem is not None or url is None:
        raise InvalidInputError(
            problem or "The base URL is not valid.",
            hint="Use the server's OpenAI-compatible address, e.g. http://127.0.0.1:11434/v1 "
            "for Ollama or http://127.0.0.1:8080/v1 for llama-server; put the key in the "
            "API key field.",
        )
    return url


class ModelChoices:
    """Per-user role choices, admins' server defaults and users' endpoints, in the database."""

    def __init__(self, settings: Settings, box: SecretBox) -> None:
        self._settings = settings
        self._box = box

    # -- role choices ------------------------------------------------------------------

    async def pick(self, role: str, scope: OwnerScope | None, fallback: str) -> RoleChoice | None:
        """The model ``role`` uses for this user: their choice for the role, their choice
        for ``fallback`` (the default role), the admin's server default for either, then
        the settings' ``llm.roles``."""
        if scope is not None:
            rows = await self._rows(scope.session, scope.owner_id, (role, fallback))
            for wanted, server_default in (
                (role, False),
                (fallback, False),
                (role, True),
                (fallback, True),
            ):
                for row in rows:
                    if row.role == wanted and row.server_default == server_default:
                        return RoleChoice(
                            role=role,
                            model=row.model,
                            source="server default" if server_default else "user",
                            endpoint_owner=row.owner_id,
                            checked_at=row.checked_at,
                            check_ok=row.check_ok,
                            check_detail=row.check_detail,
                        )
        roles = self._settings.llm.roles
        model = roles.get(role) or roles.get(fallback)
        return None if model is None else RoleChoice(role=role, model=model, source="settings")

    async def _rows(
        self, session: AsyncSession, owner_id: uuid.UUID, roles: tuple[str, ...]
    ) -> list[ModelChoiceRow]:
        query = select(ModelChoiceRow).where(
            ModelChoiceRow.role.in_(roles),
            (ModelChoiceRow.owner_id == owner_id) | ModelChoiceRow.server_default.is_(True),
        )
        # Several admins' defaults for one role: the latest wins.
        rows = await session.scalars(query.order_by(ModelChoiceRow.updated_at.desc()))
        return list(rows)

    async def user_choices(self, scope: OwnerScope) -> dict[str, ModelChoiceRow]:
        rows = await scope.session.scalars(
            scope.select(ModelChoiceRow).where(ModelChoiceRow.server_default.is_(False))
        )
        return {row.role: row for row in rows}

    async def server_defaults(self, session: AsyncSession) -> dict[str, ModelChoiceRow]:
        rows = await session.scalars(
            select(ModelChoiceRow)
            .where(ModelChoiceRow.server_default.is_(True))
            .order_by(ModelChoiceRow.updated_at)
        )
        return {row.role: row for row in rows}  # the latest last, so it wins

    async def server_default_owners(self, session: AsyncSession, provider: str) -> list[uuid.UUID]:
        """The admins whose server defaults name a model of their endpoint ``provider``."""
        rows = await session.scalars(
            select(ModelChoiceRow.owner_id).where(
                ModelChoiceRow.server_default.is_(True),
                ModelChoiceRow.model.startswith(f"{provider}:", autoescape=True),
            )
        )
        return list(rows)

    async def set_choice(
        self, scope: OwnerScope, role: str, model: str, *, server_default: bool = False
    ) -> None:
        """Store the choice (the caller has validated ``model`` for this user). A server
        default replaces any other admin's default for the role."""
        if server_default:
            await scope.session.execute(
                delete(ModelChoiceRow).where(
                    ModelChoiceRow.role == role,
                    ModelChoiceRow.server_default.is_(True),
                    ModelChoiceRow.owner_id != scope.owner_id,
                )
            )
        row = await self._own_row(scope, role, server_default)
        now = utcnow()
        if row is None:
            scope.add(
                ModelChoiceRow(
                    role=role, model=model, server_default=server_default, updated_at=now
                )
            )
        elif row.model != model:
            row.model, row.updated_at = model, now
            row.checked_at = row.check_ok = row.check_detail = None  # that check was of another
        await scope.session.flush()

    async def delete_choice(
        self, scope: OwnerScope, role: str, *, server_default: bool = False
    ) -> None:
        if server_default:
            # Any admin may clear the server default, whoever set it.
            await scope.session.execute(
                delete(ModelChoiceRow).where(
                    ModelChoiceRow.role == role, ModelChoiceRow.server_default.is_(True)
                )
            )
            return
        row = await self._own_row(scope, role, server_default)
        if row is not None:
            await scope.delete(row)

    async def record_choice_check(
        self, scope: OwnerScope, role: str, model: str, ok: bool, detail: str
    ) -> None:
        """Remember a check of the user's own choice for ``role`` (if it is still ``model``)."""
        row = await self._own_row(scope, role, False)
        if row is not None and row.model == model:
            row.checked_at, row.check_ok, row.check_detail = utcnow(), ok, detail
            await scope.session.flush()

    async def _own_row(
        self, scope: OwnerScope, role: str, server_default: bool
    ) -> ModelChoiceRow | None:
        return await scope.session.scalar(
            scope.select(ModelChoiceRow).where(
                ModelChoiceRow.role == role, ModelChoiceRow.server_default.is_(server_default)
            )
        )

    # -- endpoints ---------------------------------------------------------------------

    async def endpoints(self, scope: OwnerScope) -> list[UserEndpoint]:
        rows = await scope.session.scalars(
            scope.select(ModelEndpointRow).order_by(ModelEndpointRow.name)
        )
        return [UserEndpoint.of(row) for row in rows]

    async def endpoint_row(
        self, session: AsyncSession, owner_id: uuid.UUID, name: str
    ) -> ModelEndpointRow | None:
        return await session.scalar(
            select(ModelEndpointRow).where(
                ModelEndpointRow.owner_id == owner_id, ModelEndpointRow.name == name
            )
        )

    async def get_endpoint(self, scope: OwnerScope, name: str) -> ModelEndpointRow:
        row = await self.endpoint_row(scope.session, scope.owner_id, name)
        if row is None:
            raise NotFoundError(
                f"You have no endpoint named {name!r}.",
                hint="List your endpoints (GET /api/v1/models/endpoints) or add one.",
            )
        return row

    def credential(self, row: ModelEndpointRow) -> Credential:
        api_key = None
        if row.key_ciphertext is not None:
            api_key = self._box.decrypt(row.key_ciphertext)
            remember_secret(api_key)  # a server's error may echo it into a log line
        return Credential(api_key, row.base_url, "user")

    async def save_endpoint(
        self,
        scope: OwnerScope,
        data: EndpointInput,
        *,
        resolver: Resolver = system_resolver,
    ) -> UserEndpoint:
        """Add or update the user's endpoint ``data.name`` after checking the name, the
        URL and whether this user may reach its address."""
        name = data.name.strip().lower()
        if not _ENDPOINT_NAME.fullmatch(name):
            raise InvalidInputError(
                f"{data.name!r} cannot name an endpoint.",
                hint="Use a short name of lower-case letters, digits, '-' or '_', starting "
                "with a letter (e.g. 'mylocal'): it becomes the provider in 'mylocal:model'.",
            )
        if canonical_provider(name) in builtin_provider_names(self._settings):
            raise InvalidInputError(
                f"{name!r} is already a provider's name.",
                hint="Choose another name for your endpoint (e.g. 'my-" + name + "').",
            )
        if data.structured_output is not None and data.structured_output not in STRUCTURED_OUTPUTS:
            raise InvalidInputError(
                f"Unknown structured output {data.structured_output!r}.",
                hint="Use one of " + ", ".join(STRUCTURED_OUTPUTS) + ", or leave it unset.",
            )
        url = validate_base_url(data.base_url)
        await self.check_address(scope, str(url), resolver=resolver)
        row = await self.endpoint_row(scope.session, scope.owner_id, name)
        if row is None:
            row = scope.add(ModelEndpointRow(name=name, base_url=str(url)))
        elif row.base_url != str(url):
            row.base_url = str(url)
            # What was found at the old address says nothing about the new one.
            row.detected_structured_output = row.detected_supports_tools = None
            row.checked_model = row.checked_at = row.check_ok = row.check_detail = None
        if data.api_key is not None:
            api_key = data.api_key.strip()
            if any(ch.isspace() for ch in api_key):
                raise InvalidInputError(
                    "That does not look like an API key.",
                    hint="Paste the whole key as the server shows it, without spaces.",
                )
            row.key_ciphertext = self._box.encrypt(api_key) if api_key else None
        row.structured_output = data.structured_output
        row.supports_tools = data.supports_tools
        row.compact_prompt = data.compact_prompt
        await scope.session.flush()
        return UserEndpoint.of(row)

    async def delete_endpoint(self, scope: OwnerScope, name: str) -> None:
        await scope.delete(await self.get_endpoint(scope, name))

    async def record_endpoint_check(
        self,
        row: ModelEndpointRow,
        *,
        model: str,
        ok: bool,
        detail: str,
        detected: ModelCapabilities | None,
    ) -> None:
        row.checked_model, row.check_ok, row.check_detail = model, ok, detail
        row.checked_at = utcnow()
        if detected is not None:
            row.detected_structured_output = detected.structured_output
            row.detected_supports_tools = detected.supports_tools

    async def may_use_private(self, session: AsyncSession, owner_id: uuid.UUID) -> bool:
        """Whether this user's endpoints may be on the server's own network."""
        if not self._settings.server.multi_user or self._settings.llm.user_endpoints == "any":
            return True
        user = await session.get(User, owner_id)
        return user is not None and user.is_admin

    async def check_address(
        self, scope: OwnerScope, base_url: str, *, resolver: Resolver = system_resolver
    ) -> None:
        """Refuse an endpoint this user may not have: any, where the server allows none to
        users (``off``), or one on a non-public address unless allowed."""
        if await self.may_use_private(scope.session, scope.owner_id):
            return
        if self._settings.llm.user_endpoints == "off":
            raise PermissionDeniedError(
                "This server does not let users add model endpoints.",
                hint="Ask an administrator to set a server default model, or to allow "
                "endpoints (llm.user_endpoints).",
            )
        url = httpx.URL(base_url)
        host = url.host
        private = is_local_name(host)
        if not private:
            address = ip_of(host)
            if address is not None:
                addresses = [str(address)]
            else:
                try:
                    addresses = list(await resolver(host, url.port or 443))
                except OSError:
                    raise InvalidInputError(
                        f"The host {host!r} cannot be found.",
                        hint="Check the base URL's spelling.",
                    ) from None
            private = not addresses or any(
                (ip := ip_of(a)) is None or not is_public(ip) for a in addresses
            )
        if private:
            raise PermissionDeniedError(
                f"{host} is on this server's own network, which only an administrator's "
                "endpoints may reach.",
                hint="Use a public address for your model server, or ask an administrator "
                "to add the endpoint and set it as a server default.",
            )
