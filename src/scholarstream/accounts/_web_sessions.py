"""Server-side login sessions behind the web UI's cookie."""

from __future__ import annotations

from datetime import timedelta

from sqlalchemy import delete, select
from sqlalchemy.ext.asyncio import AsyncSession

from scholarstream.accounts._secret_tokens import digest, new_secret
from scholarstream.db import utcnow
from scholarstream.db.tables import User, WebSession
from scholarstream.errors import AuthenticationError

SESSION_COOKIE = "scholarstream_session"


async def start_session(session: AsyncSession, user: User, *, days: int) -> str:
    plaintext = new_secret("sess")
    session.add(
        WebSession(
            owner_id=user.id,
            token_hash=digest(plaintext),
            expires_at=utcnow() + timedelta(days=days),
        )
    )
    await session.flush()
    return plaintext


async def resolve_session(session: AsyncSession, plaintext: str) -> User:
    row = await session.execute(
        select(User)
        .join(WebSession, WebSession.owner_id == User.id)
        .where(WebSession.token_hash == digest(plaintext), WebSession.expires_at > utcnow())
    )
    user = row.scalar_one_or_none()
    if user is None or not user.is_active:
        raise AuthenticationError("Your session has expired.", hint="Log in again.")
    return user


async def end_session(session: AsyncSession, plaintext: str) -> None:
    await session.execute(delete(WebSession).where(WebSession.token_hash == digest(plaintext)))


async def purge_expired_sessions(session: AsyncSession) -> int:
    result = await session.execute(delete(WebSession).where(WebSession.expires_at <= utcnow()))
    return int(result.rowcount or 0)  # type: ignore[attr-defined]
