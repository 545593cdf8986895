"""Where a provider's API key comes from: the user's own stored key first (they pay for
it), then the server's. Users' keys are stored encrypted with the server secret."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from scholarstream.db import OwnerScope
from scholarstream.db.tables import ProviderKey
from scholarstream.errors import InvalidInputError, MissingCredentialsError
from scholarstream.llm._providers import Credential, ProviderSpec, canonical_provider, get_provider
from scholarstream.logs import remember_secret
from scholarstream.secret_box import SecretBox
from scholarstream.settings import Settings


@dataclass(frozen=True)
class StoredKeyInfo:
    provider: str
    created_at: datetime


class CredentialStore:
    def __init__(self, settings: Settings, box: SecretBox) -> None:
        self._settings = settings
        self._box = box

    @property
    def box(self) -> SecretBox:
        """The server secret's box (users' endpoint keys are encrypted with it too)."""
        return self._box

    def server_credential(self, provider: str) -> Credential:
        configured = self._settings.llm.providers.get(canonical_provider(provider))
        spec = get_provider(
            provider, configured_base_url=configured.base_url if configured else None
        )
        base_url = (configured.base_url if configured else None) or spec.default_base_url
        if configured is not None and configured.api_key is not None:
            return Credential(configured.api_key.get_secret_value(), base_url, "server")
        return Credential(None, base_url, "none")

    async def resolve(self, scope: OwnerScope | None, provider: str) -> Credential:
        """The credential to call ``provider`` with for this user; raises if none exists."""
        provider = canonical_provider(provider)
        server = self.server_credential(provider)
        if scope is not None:
            row = await scope.session.scalar(
                scope.select(ProviderKey).where(ProviderKey.provider == provider)
            )
            if row is not None:
                api_key = self._box.decrypt(row.ciphertext)
                remember_secret(api_key)  # a provider's error may echo it into a log line
                return Credential(api_key, server.base_url, "user")
        spec = self._spec(provider)
        if server.api_key is None and spec.needs_api_key:
            raise MissingCredentialsError(
                f"No API key for {spec.label}.",
                hint=f"Add your own key under Settings (PUT /api/v1/me/provider-keys/{provider}), "
                "or have the server set "
                f"SCHOLARSTREAM_LLM__PROVIDERS__{provider.upper()}__API_KEY.",
            )
        return server

    async def has_credential(self, scope: OwnerScope | None, provider: str) -> bool:
        try:
            await self.resolve(scope, provider)
        except MissingCredentialsError:
            return False
        return True

    async def store_user_key(self, scope: OwnerScope, provider: str, api_key: str) -> None:
        provider = canonical_provider(provider)
        self._spec(provider)
        api_key = api_key.strip()
        if len(api_key) < 8 or any(ch.isspace() for ch in api_key):
            raise InvalidInputError(
                "That does not look like an API key.",
                hint="Paste the whole key as the provider shows it, without spaces.",
            )
        row = await scope.session.scalar(
            scope.select(ProviderKey).where(ProviderKey.provider == provider)
        )
        if row is None:
            scope.add(ProviderKey(provider=provider, ciphertext=self._box.encrypt(api_key)))
        else:
            row.ciphertext = self._box.encrypt(api_key)
        await scope.session.flush()

    async def delete_user_key(self, scope: OwnerScope, provider: str) -> None:
        provider = canonical_provider(provider)
        row = await scope.session.scalar(
            scope.select(ProviderKey).where(ProviderKey.provider == provider)
        )
        if row is not None:
            await scope.delete(row)

    async def list_user_keys(self, scope: OwnerScope) -> list[StoredKeyInfo]:
        rows = await scope.session.scalars(scope.select(ProviderKey).order_by(ProviderKey.provider))
        return [StoredKeyInfo(r.provider, r.created_at) for r in rows]

    def _spec(self, provider: str) -> ProviderSpec:
        configured = self._settings.llm.providers.get(provider)
        return get_provider(
            provider, configured_base_url=configured.base_url if configured else None
        )
