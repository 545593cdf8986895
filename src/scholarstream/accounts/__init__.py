"""Users, passwords, API tokens and web sessions."""

from scholarstream.accounts.api_tokens import (
    create_api_token,
    list_api_tokens,
    resolve_api_token,
    revoke_api_token,
)
from scholarstream.accounts.users import (
    LOCAL_USERNAME,
    authenticate,
    create_user,
    ensure_local_user,
    get_user_by_username,
    list_users,
)
from scholarstream.accounts.web_sessions import (
    end_session,
    purge_expired_sessions,
    resolve_session,
    start_session,
)

__all__ = [
    "LOCAL_USERNAME",
    "authenticate",
    "create_api_token",
    "create_user",
    "end_session",
    "ensure_local_user",
    "get_user_by_username",
    "list_api_tokens",
    "list_users",
    "purge_expired_sessions",
    "resolve_api_token",
    "resolve_session",
    "revoke_api_token",
    "start_session",
]
