"""Login and logout for multi-user mode (the web UI's session cookie)."""

from __future__ import annotations

from fastapi import APIRouter, Depends, Request, Response
from pydantic import BaseModel, Field

from scholarstream.accounts import (
    SESSION_COOKIE,
    RuntimeDep,
    SessionDep,
    client_address,
    end_session,
    same_origin_login,
    same_origin_logout,
    set_session_cookie,
    start_session,
    throttled_login,
)
from scholarstream.api.routes.me import UserOut
from scholarstream.errors import ConflictError

router = APIRouter(prefix="/auth", tags=["auth"])


class LoginIn(BaseModel):
    username: str = Field(min_length=1, max_length=64)
    password: str = Field(min_length=1, max_length=1024)


@router.post("/login", response_model=UserOut, dependencies=[Depends(same_origin_login)])
async def login(
    body: LoginIn,
    request: Request,
    response: Response,
    runtime: RuntimeDep,
    session: SessionDep,
) -> UserOut:
    if not runtime.settings.server.multi_user:
        raise ConflictError(
            "This server runs in single-user mode: there is nothing to log in to.",
            hint="Set SCHOLARSTREAM_SERVER__MULTI_USER=true to enable accounts.",
        )
    user = await throttled_login(
        runtime.login_throttle, session, body.username, body.password, client_address(request)
    )
    token = await start_session(session, user, days=runtime.settings.server.session_days)
    set_session_cookie(response, runtime, token)
    return UserOut.from_user(user, runtime)


@router.post("/logout", status_code=204, dependencies=[Depends(same_origin_logout)])
async def logout(request: Request, response: Response, session: SessionDep) -> None:
    cookie = request.cookies.get(SESSION_COOKIE)
    if cookie:
        await end_session(session, cookie)
    response.delete_cookie(SESSION_COOKIE, path="/")
