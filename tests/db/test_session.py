"""The session context: commit or roll back, and the connection always back in the pool,
whether the block ends, fails or is cancelled."""

from __future__ import annotations

import asyncio
import uuid

import pytest
from sqlalchemy import func, select

from scholarstream.db import Database
from scholarstream.db.tables import User
from scholarstream.settings import Settings


async def _users(database: Database) -> int:
    async with database.session() as session:
        return int(await session.scalar(select(func.count()).select_from(User)) or 0)


def _checked_out(database: Database) -> int:
    checked_out: int = database.engine.pool.checkedout()  # type: ignore[attr-defined]
    return checked_out


async def test_a_session_commits_rolls_back_and_gives_its_connection_back(
    db_settings: Settings,
) -> None:
    database = Database(db_settings.app_database_url)
    try:
        for write in (False, True):
            async with database.session(write=write) as session:
                session.add(User(username=f"u-{uuid.uuid4().hex[:8]}"))
            assert _checked_out(database) == 0
        assert await _users(database) == 2

        async def failing() -> None:
            async with database.session() as session:
                session.add(User(username="rolled-back"))
                await session.flush()
                raise RuntimeError("the block fails")

        with pytest.raises(RuntimeError):
            await failing()
        assert _checked_out(database) == 0
        assert await _users(database) == 2
        async with database.session() as session:
            pass  # never touched the database: nothing to give back
        assert _checked_out(database) == 0
    finally:
        await database.dispose()


async def test_a_cancelled_session_rolls_back_and_gives_its_connection_back(
    db_settings: Settings,
) -> None:
    database = Database(db_settings.app_database_url)
    inside = asyncio.Event()

    async def writer() -> None:
        async with database.session(write=True) as session:
            session.add(User(username="cancelled"))
            await session.flush()
            inside.set()
            await asyncio.sleep(30)

    try:
        task = asyncio.create_task(writer())
        await inside.wait()
        assert _checked_out(database) == 1
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert _checked_out(database) == 0
        assert await _users(database) == 0
        async with database.session(write=True) as session:  # the write lock was released
            session.add(User(username="after"))
        assert await _users(database) == 1
    finally:
        await database.dispose()
