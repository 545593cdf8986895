"""Users, passwords, API tokens and web sessions."""

from scholarstream.accounts._api_tokens import (
    create_api_token,
    list_api_tokens,
    resolve_api_token,
    revoke_api_token,
)
from scholarstream.accounts._http import (
    CurrentUser,
    ReleasedUser,
    RuntimeDep,
    SessionDep,
    bearer_token,
    client_address,
    current_user,
    db_session,
    get_runtime,
    optional_user,
    released_user,
    same_origin_login,
    same_origin_logout,
    set_session_cookie,
)
from scholarstream.accounts._login_throttle import LoginThrottle, throttled_login
from scholarstream.accounts._users import (
    LOCAL_USERNAME,
    authenticate,
    create_user,
    ensure_local_user,
    get_user_by_username,
    list_users,
)
from scholarstream.accounts._web_sessions import (
    SESSION_COOKIE,
    end_session,
    purge_expired_sessions,
    resolve_session,
    start_session,
)

__all__ = [
    "LOCAL_USERNAME",
    "SESSION_COOKIE",
    "CurrentUser",
    "LoginThrottle",
    "ReleasedUser",
    "RuntimeDep",
    "SessionDep",
    "authenticate",
    "bearer_token",
    "client_address",
    "create_api_token",
    "create_user",
    "current_user",
    "db_session",
    "end_session",
    "ensure_local_user",
    "get_runtime",
    "get_user_by_username",
    "list_api_tokens",
    "list_users",
    "optional_user",
    "purge_expired_sessions",
    "released_user",
    "resolve_api_token",
    "resolve_session",
    "revoke_api_token",
    "same_origin_login",
    "same_origin_logout",
    "set_session_cookie",
    "start_session",
    "throttled_login",
]
