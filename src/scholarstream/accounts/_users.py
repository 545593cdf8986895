"""User accounts: the local user of single-user mode and password accounts of multi-user mode."""

from __future__ import annotations

import functools
import re

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from scholarstream.accounts._passwords import (
    MIN_PASSWORD_LENGTH,
    hash_password,
    needs_rehash,
    verify_password,
)
from scholarstream.db.tables import User
from scholarstream.errors import (
    AuthenticationError,
    ConflictError,
    InvalidInputError,
    NotFoundError,
)

LOCAL_USERNAME = "local"
_USERNAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.@-]{1,63}$")


async def get_user_by_username(session: AsyncSession, username: str) -> User:
    user = await session.scalar(select(User).where(User.username == username))
    if user is None:
        raise NotFoundError(
            f"No user named {username!r}.", hint="'scholarstream users list' shows the accounts."
        )
    return user


async def list_users(session: AsyncSession) -> list[User]:
    return list((await session.scalars(select(User).order_by(User.created_at))).all())


async def create_user(
    session: AsyncSession,
    username: str,
    password: str,
    *,
    display_name: str = "",
    is_admin: bool = False,
) -> User:
    if not _USERNAME.match(username):
        raise InvalidInputError(
            f"Username {username!r} is not allowed.",
            hint="Use 2-64 letters, digits, '.', '_', '-' or '@', starting with a letter or digit.",
        )
    if username == LOCAL_USERNAME:
        raise InvalidInputError(f"{LOCAL_USERNAME!r} is reserved.", hint="Choose another username.")
    if len(password) < MIN_PASSWORD_LENGTH:
        raise InvalidInputError(
            "The password is too short.", hint=f"Use at least {MIN_PASSWORD_LENGTH} characters."
        )
    if await session.scalar(select(User.id).where(User.username == username)) is not None:
        raise ConflictError(f"User {username!r} already exists.", hint="Choose another username.")
    user = User(
        username=username,
        display_name=display_name or username,
        password_hash=hash_password(password),
        is_admin=is_admin,
    )
    session.add(user)
    await session.flush()
    return user


async def ensure_local_user(session: AsyncSession) -> User:
    """The single user of single-user mode, created on first use."""
    user = await session.scalar(select(User).where(User.username == LOCAL_USERNAME))
    if user is None:
        user = User(username=LOCAL_USERNAME, display_name="Local user", is_admin=True)
        session.add(user)
        await session.flush()
    return user


async def authenticate(session: AsyncSession, username: str, password: str) -> User:
    user = await session.scalar(select(User).where(User.username == username))
    # Verify against a real hash even for unknown users so timing does not reveal accounts.
    stored = user.password_hash if user is not None and user.password_hash else _dummy_hash()
    valid = verify_password(stored, password)
    if user is None or not user.is_active or user.password_hash is None or not valid:
        raise AuthenticationError("Wrong username or password.", hint="Check both and try again.")
    if needs_rehash(user.password_hash):
        user.password_hash = hash_password(password)
    return user


@functools.cache
def _dummy_hash() -> str:
    return hash_password("not-a-real-password")
