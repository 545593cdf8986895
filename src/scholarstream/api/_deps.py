"""Request dependencies: the runtime, a transaction, the current user and their scope.

What the web pages share with the API (the caller, CSRF rules, the session cookie) lives
in ``scholarstream.accounts._http``; this module re-exports it for the routes."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends

from scholarstream.accounts import (
    CurrentUser,
    ReleasedUser,
    RuntimeDep,
    SessionDep,
    bearer_token,
    current_user,
    db_session,
    get_runtime,
    optional_user,
    released_user,
    same_origin_login,
    same_origin_logout,
)
from scholarstream.db import OwnerScope

__all__ = [
    "CurrentUser",
    "ReleasedUser",
    "RuntimeDep",
    "ScopeDep",
    "SessionDep",
    "bearer_token",
    "current_user",
    "db_session",
    "get_runtime",
    "optional_user",
    "owner_scope",
    "released_user",
    "same_origin_login",
    "same_origin_logout",
]


async def owner_scope(user: CurrentUser, session: SessionDep) -> OwnerScope:
    return OwnerScope(session, user.id)


ScopeDep = Annotated[OwnerScope, Depends(owner_scope)]
