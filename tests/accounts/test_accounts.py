from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from datetime import timedelta

import pytest
from sqlalchemy import select

from scholarstream.accounts import (
    authenticate,
    create_api_token,
    create_user,
    end_session,
    ensure_local_user,
    list_api_tokens,
    purge_expired_sessions,
    resolve_api_token,
    resolve_session,
    revoke_api_token,
    start_session,
)
from scholarstream.db import OwnerScope, utcnow
from scholarstream.db.tables import ApiToken, User, WebSession
from scholarstream.errors import (
    AuthenticationError,
    ConflictError,
    InvalidInputError,
    NotFoundError,
)
from scholarstream.runtime import Runtime
from scholarstream.settings import Settings
from tests.helpers import make_runtime, new_user


@pytest.fixture
async def runtime(db_settings: Settings) -> AsyncIterator[Runtime]:
    runtime = make_runtime(db_settings)
    yield runtime
    await runtime.close()


async def test_create_and_authenticate(runtime: Runtime) -> None:
    async with runtime.database.session() as session:
        user = await create_user(session, "ada", "analytical engine", display_name="Ada")
        assert user.password_hash is not None
        assert "analytical" not in user.password_hash
        assert user.password_hash.startswith("$argon2id$")
    async with runtime.database.session() as session:
        assert (await authenticate(session, "ada", "analytical engine")).id == user.id
        with pytest.raises(AuthenticationError, match="Wrong username or password"):
            await authenticate(session, "ada", "wrong password")
        with pytest.raises(AuthenticationError, match="Wrong username or password"):
            await authenticate(session, "nobody", "analytical engine")


async def test_user_rules(runtime: Runtime) -> None:
    async with runtime.database.session() as session:
        await create_user(session, "grace", "compiler1952")
    async with runtime.database.session() as session:
        with pytest.raises(ConflictError):
            await create_user(session, "grace", "another password")
        with pytest.raises(InvalidInputError, match="too short"):
            await create_user(session, "linus", "short")
        with pytest.raises(InvalidInputError, match="not allowed"):
            await create_user(session, "bad name!", "long enough password")
        with pytest.raises(InvalidInputError, match="reserved"):
            await create_user(session, "local", "long enough password")


async def test_local_user_is_created_once_and_cannot_log_in(runtime: Runtime) -> None:
    async with runtime.database.session() as session:
        first = await ensure_local_user(session)
    async with runtime.database.session() as session:
        assert (await ensure_local_user(session)).id == first.id
        assert len((await session.scalars(select(User))).all()) == 1
        with pytest.raises(AuthenticationError):
            await authenticate(session, "local", "")


async def test_api_tokens_are_hashed_resolved_and_revoked(runtime: Runtime) -> None:
    user = await new_user(runtime)
    async with runtime.database.session() as session:
        token, plaintext = await create_api_token(OwnerScope(session, user.id), "cli")
        assert plaintext.startswith("ss_")
        assert len(plaintext) > 40
        assert token.token_hash != plaintext
        assert plaintext not in token.token_hash
        assert plaintext.startswith(token.prefix)
    async with runtime.database.session() as session:
        assert (await resolve_api_token(session, plaintext)).id == user.id
        stored = await session.scalar(select(ApiToken))
        assert stored is not None
        first_use = stored.last_used_at
        assert first_use is not None
        with pytest.raises(AuthenticationError):
            await resolve_api_token(session, plaintext + "x")
    # Within a minute the use is not written again; after it, it is.
    async with runtime.database.session() as session:
        await resolve_api_token(session, plaintext)
        stored = await session.scalar(select(ApiToken))
        assert stored is not None and stored.last_used_at == first_use
        stored.last_used_at = first_use - timedelta(minutes=2)
    async with runtime.database.session() as session:
        await resolve_api_token(session, plaintext)
        stored = await session.scalar(select(ApiToken))
        assert stored is not None and stored.last_used_at is not None
        assert stored.last_used_at > first_use
    async with runtime.database.session() as session:
        await revoke_api_token(OwnerScope(session, user.id), token.id)
    async with runtime.database.session() as session:
        with pytest.raises(AuthenticationError, match="revoked"):
            await resolve_api_token(session, plaintext)
        assert await list_api_tokens(OwnerScope(session, user.id)) == []


async def test_expired_token_is_refused(runtime: Runtime) -> None:
    user = await new_user(runtime)
    async with runtime.database.session() as session:
        token, plaintext = await create_api_token(
            OwnerScope(session, user.id), "old", expires_days=1
        )
        token.expires_at = utcnow() - timedelta(seconds=1)
    async with runtime.database.session() as session:
        with pytest.raises(AuthenticationError, match="expired"):
            await resolve_api_token(session, plaintext)


async def test_token_input_is_validated(runtime: Runtime) -> None:
    user = await new_user(runtime)
    async with runtime.database.session() as session:
        with pytest.raises(InvalidInputError):
            await create_api_token(OwnerScope(session, user.id), "  ")
        with pytest.raises(InvalidInputError):
            await create_api_token(OwnerScope(session, user.id), "x", expires_days=0)


async def test_another_users_token_is_not_found(runtime: Runtime) -> None:
    alice, bob = await new_user(runtime, "alice"), await new_user(runtime, "bob")
    async with runtime.database.session() as session:
        token, _ = await create_api_token(OwnerScope(session, alice.id), "alice's")
    async with runtime.database.session() as session:
        bob_scope = OwnerScope(session, bob.id)
        assert await list_api_tokens(bob_scope) == []
        with pytest.raises(NotFoundError):
            await revoke_api_token(bob_scope, token.id)
        with pytest.raises(NotFoundError):
            await bob_scope.get(ApiToken, token.id, what="API token")


async def test_web_sessions_expire_end_and_purge(runtime: Runtime) -> None:
    user = await new_user(runtime)
    async with runtime.database.session() as session:
        live = await start_session(session, user, days=1)
        stale = await start_session(session, user, days=1)
    async with runtime.database.session() as session:
        rows = (await session.scalars(select(WebSession))).all()
        assert all(live not in r.token_hash for r in rows)
        for row in rows:
            if row.token_hash != rows[0].token_hash:
                row.expires_at = utcnow() - timedelta(minutes=1)
    async with runtime.database.session() as session:
        resolved: list[uuid.UUID | None] = []
        for token in (live, stale):
            try:
                resolved.append((await resolve_session(session, token)).id)
            except AuthenticationError:
                resolved.append(None)
        assert resolved.count(user.id) == 1
        assert resolved.count(None) == 1
        assert await purge_expired_sessions(session) == 1
    async with runtime.database.session() as session:
        for token in (live, stale):
            await end_session(session, token)
    async with runtime.database.session() as session:
        assert (await session.scalars(select(WebSession))).all() == []


async def test_deleting_a_user_deletes_what_they_own(runtime: Runtime) -> None:
    user = await new_user(runtime)
    async with runtime.database.session() as session:
        await create_api_token(OwnerScope(session, user.id), "cli")
        await start_session(session, user, days=1)
    async with runtime.database.session() as session:
        await session.delete(await session.get(User, user.id))
    async with runtime.database.session() as session:
        assert (await session.scalars(select(ApiToken))).all() == []
        assert (await session.scalars(select(WebSession))).all() == []
