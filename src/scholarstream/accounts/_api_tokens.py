"""Bearer API tokens for the API and the CLI."""

from __future__ import annotations

import uuid
from datetime import timedelta

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from scholarstream.accounts._secret_tokens import digest, new_secret
from scholarstream.db import OwnerScope, utcnow
from scholarstream.db.tables import ApiToken, User
from scholarstream.errors import AuthenticationError, InvalidInputError

LAST_USED_RESOLUTION = timedelta(minutes=1)
TOKEN_PREFIX = "ss"  # noqa: S105 (a label, not a secret)


async def create_api_token(
    scope: OwnerScope, name: str, *, expires_days: int | None = None
) -> tuple[ApiToken, str]:
    """Returns the row and the plaintext token, which is shown once and never stored."""
    if not name.strip():
        raise InvalidInputError("A token needs a name.", hint="Name it after where it is used.")
    if expires_days is not None and expires_days < 1:
        raise InvalidInputError("expires_days must be at least 1.", hint="Omit it for no expiry.")
    plaintext = new_secret(TOKEN_PREFIX)
    token = scope.add(
        ApiToken(
            name=name.strip(),
            token_hash=digest(plaintext),
            prefix=plaintext[:10],
            expires_at=utcnow() + timedelta(days=expires_days) if expires_days else None,
        )
    )
    await scope.session.flush()
    return token, plaintext


async def list_api_tokens(scope: OwnerScope) -> list[ApiToken]:
    query = (
        scope.select(ApiToken).where(ApiToken.revoked_at.is_(None)).order_by(ApiToken.created_at)
    )
    return list((await scope.session.scalars(query)).all())


async def revoke_api_token(scope: OwnerScope, token_id: uuid.UUID) -> None:
    token = await scope.get(ApiToken, token_id, what="API token")
    token.revoked_at = utcnow()


async def resolve_api_token(session: AsyncSession, plaintext: str) -> User:
    row = await session.execute(
        select(ApiToken, User)
        .join(User, User.id == ApiToken.owner_id)
        .where(ApiToken.token_hash == digest(plaintext))
    )
    found = row.first()
    now = utcnow()
    if found is None:
        raise AuthenticationError("The API token is not valid.")
    token, user = found
    if token.revoked_at is not None or (token.expires_at is not None and token.expires_at < now):
        raise AuthenticationError(
            "The API token was revoked or has expired.",
            hint="Create a new one with 'scholarstream tokens create'.",
        )
    if not user.is_active:
        raise AuthenticationError("This account is disabled.", hint="Ask an administrator.")
    # Recorded at most once a minute: every request writing the row would make each API call
    # a write transaction (one writer at a time on SQLite).
    last = token.last_used_at
    if last is None or now - last >= LAST_USED_RESOLUTION:
        token.last_used_at = now
    return user
