"""What the HTTP interfaces (the API and the web pages) share about the caller: the
runtime and a transaction per request, the current user (session cookie, API token, or
the local user of single-user mode), the same-origin rules (CSRF), and the session cookie.

It lives below both interfaces, so neither imports the other."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Annotated
from urllib.parse import urlsplit

from fastapi import Depends, Request, Response
from sqlalchemy.ext.asyncio import AsyncSession

from scholarstream.accounts._api_tokens import resolve_api_token
from scholarstream.accounts._web_sessions import SESSION_COOKIE, resolve_session
from scholarstream.db.tables import User
from scholarstream.errors import AuthenticationError, PermissionDeniedError
from scholarstream.runtime import Runtime

__all__ = [
    "CurrentUser",
    "ReleasedUser",
    "RuntimeDep",
    "SessionDep",
    "bearer_token",
    "check_same_origin",
    "client_address",
    "current_user",
    "db_session",
    "get_runtime",
    "optional_user",
    "released_user",
    "same_origin_login",
    "same_origin_logout",
    "set_session_cookie",
]

_SAFE_METHODS = {"GET", "HEAD", "OPTIONS"}


async def get_runtime(request: Request) -> Runtime:
    # async: FastAPI runs a plain ``def`` dependency in its thread pool, a thread round
    # trip (and a wait for the GIL) on every request for an attribute read.
    runtime: Runtime = request.app.state.runtime
    return runtime


RuntimeDep = Annotated[Runtime, Depends(get_runtime)]


async def db_session(runtime: RuntimeDep) -> AsyncIterator[AsyncSession]:
    async with runtime.database.session() as session:
        yield session


# Ends (commits) when the endpoint returns, before the response is sent: a streamed
# response must not hold a pooled connection for as long as it streams.
SessionDep = Annotated[AsyncSession, Depends(db_session, scope="function")]


def bearer_token(request: Request) -> str | None:
    header = request.headers.get("authorization", "")
    scheme, _, value = header.partition(" ")
    if scheme.lower() == "bearer" and value.strip():
        return value.strip()
    return None


async def optional_user(request: Request, runtime: RuntimeDep, session: SessionDep) -> User | None:
    """The caller, or None when nobody is logged in (multi-user mode only)."""
    if not runtime.settings.server.multi_user:
        # No login here, so a page on another site must not be able to write through the
        # user's browser; tools without a browser (CLI, curl) send no Origin and pass.
        if request.headers.get("origin") is not None:
            check_same_origin(request)
        user = await session.get(User, request.app.state.local_user_id)
        assert user is not None, "the local user is created at start-up"
        return user
    token = bearer_token(request)
    if token is not None:
        return await resolve_api_token(session, token)
    cookie = request.cookies.get(SESSION_COOKIE)
    if cookie:
        check_same_origin(request)
        try:
            return await resolve_session(session, cookie)
        except AuthenticationError:
            return None
    return None


async def current_user(user: Annotated[User | None, Depends(optional_user)]) -> User:
    if user is None:
        raise AuthenticationError("You need to log in for this.")
    return user


CurrentUser = Annotated[User, Depends(current_user)]


async def released_user(request: Request, runtime: RuntimeDep) -> User:
    """The caller, looked up in a transaction of its own that is over before the route runs.
    For routes that open their own sessions (or run long): holding the request's
    connection while they take another would exhaust the pool under load.

    Single-user mode has no login to check: the caller is the local user, read at start-up
    (a detached, read-only snapshot; nothing changes that row while the server runs)."""
    if not runtime.settings.server.multi_user:
        if request.headers.get("origin") is not None:
            check_same_origin(request)
        local: User = request.app.state.local_user
        return local
    async with runtime.database.session() as session:
        user = await optional_user(request, runtime, session)
    if user is None:
        raise AuthenticationError("You need to log in for this.")
    return user


ReleasedUser = Annotated[User, Depends(released_user)]


def check_same_origin(request: Request) -> None:
    """Cookie-authenticated writes must come from our own pages (CSRF defence)."""
    if request.method in _SAFE_METHODS:
        return
    origin = request.headers.get("origin") or request.headers.get("referer")
    if origin is None or urlsplit(origin).netloc != request.headers.get("host"):
        raise PermissionDeniedError(
            "Cross-site request refused.",
            hint="Send writes from the ScholarStream pages, or use an API token, not a cookie.",
        )


async def same_origin_login(request: Request) -> None:
    """Login CSRF: a page on another site must not log the browser into another account.
    A browser names the page that sent a POST (Origin, or at least Referer), and it must
    be one of ours; tools without a browser (the CLI, curl) send neither and may log in,
    since the password is what logging in checks."""
    if request.headers.get("origin") is None and request.headers.get("referer") is None:
        return
    try:
        check_same_origin(request)
    except PermissionDeniedError as exc:
        raise PermissionDeniedError(
            "Login refused: the login was sent from a page on another site.",
            hint="Open the ScholarStream login page yourself and log in there.",
        ) from exc


async def same_origin_logout(request: Request) -> None:
    """Logout CSRF: ending the cookie's session is a cookie write like any other, so it
    takes the same rule (a request without the cookie has no session to end)."""
    if request.cookies.get(SESSION_COOKIE) is not None:
        check_same_origin(request)


def client_address(request: Request) -> str:
    """The client's address (behind a trusted proxy, the one it forwarded)."""
    return request.client.host if request.client else "unknown"


def set_session_cookie(response: Response, runtime: Runtime, token: str) -> None:
    response.set_cookie(
        SESSION_COOKIE,
        token,
        max_age=runtime.settings.server.session_days * 86400,
        httponly=True,
        samesite="lax",
        secure=runtime.settings.server.cookie_secure,
        path="/",
    )
