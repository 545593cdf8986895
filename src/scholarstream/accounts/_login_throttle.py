"""Logins counted by the process's ``LoginThrottle`` (``scholarstream.login_throttle``)."""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncSession

from scholarstream.accounts._users import authenticate
from scholarstream.db.tables import User
from scholarstream.login_throttle import MAX_TRACKED_KEYS, LoginThrottle

__all__ = ["MAX_TRACKED_KEYS", "LoginThrottle", "throttled_login"]


async def throttled_login(
    throttle: LoginThrottle, session: AsyncSession, username: str, password: str, address: str
) -> User:
    """``accounts.authenticate``, refused while a limit is reached, counting failures."""
    return await throttle.attempt(
        username, address, lambda: authenticate(session, username, password)
    )
