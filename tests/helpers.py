"""Shared test helpers (not fixtures): run async work against a migrated runtime."""

from __future__ import annotations

import uuid
from collections.abc import Mapping

from pydantic_ai.models import Model

from scholarstream.accounts import create_user
from scholarstream.db.scope import OwnerScope
from scholarstream.db.tables import User
from scholarstream.runtime import Runtime, build_runtime
from scholarstream.settings import Settings


def make_runtime(settings: Settings, models: Mapping[str, Model] | None = None) -> Runtime:
    return build_runtime(settings, model_overrides=models)


async def new_user(runtime: Runtime, name: str | None = None) -> User:
    async with runtime.database.session() as session:
        return await create_user(
            session, name or f"user-{uuid.uuid4().hex[:8]}", "correct horse battery"
        )


def scope_for(session: object, user: User) -> OwnerScope:
    from sqlalchemy.ext.asyncio import AsyncSession

    assert isinstance(session, AsyncSession)
    return OwnerScope(session, user.id)
