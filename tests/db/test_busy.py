"""A write the database cannot take because another writer holds it (SQLite's one write
lock held by a second connection; a PostgreSQL lock wait that times out) ends in
``DatabaseBusyError`` after a bounded wait, and nothing of its transaction is stored."""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from sqlalchemy import create_engine, func, select, text, update
from sqlalchemy.engine import make_url

from scholarstream.db import BUSY_TIMEOUT_SECONDS, Database, upgrade, upgrade_async
from scholarstream.db.tables import User
from scholarstream.errors import DatabaseBusyError, ScholarStreamError


@contextmanager
def sqlite_writer(url: str) -> Iterator[sqlite3.Connection]:
    """A second connection holding SQLite's write lock (a write transaction left open)."""
    path = make_url(url).database
    assert path is not None
    connection = sqlite3.connect(path, isolation_level=None)
    try:
        connection.execute("PRAGMA journal_mode=WAL")  # as every ScholarStream process leaves it
        connection.execute("BEGIN IMMEDIATE")
        yield connection
    finally:
        connection.rollback()
        connection.close()


async def _add_users(database: Database, *names: str, write: bool = False) -> None:
    async with database.session(write=write) as session:
        session.add_all(User(username=name) for name in names)


async def _usernames(database: Database) -> list[str]:
    async with database.session() as session:
        return sorted((await session.scalars(select(User.username))).all())


@pytest.fixture
def sqlite_url(data_dir: Path) -> str:
    url = f"sqlite+aiosqlite:///{data_dir / 'scholarstream.sqlite'}"
    upgrade(url)
    return url


@pytest.mark.parametrize("write", [False, True], ids=["session", "write-session"])
async def test_a_write_behind_another_sqlite_writer_is_busy_and_stores_nothing(
    sqlite_url: str, write: bool
) -> None:
    database = Database(sqlite_url, busy_timeout_seconds=0.3)
    try:
        with sqlite_writer(sqlite_url):
            started = time.monotonic()
            with pytest.raises(DatabaseBusyError) as caught:
                await _add_users(database, "first", "second", write=write)
            waited = time.monotonic() - started
        assert 0.2 < waited < 5, waited
        error = caught.value
        assert isinstance(error, ScholarStreamError)
        assert (error.http_status, error.code) == (503, "database_busy")
        assert int(error.response_headers["Retry-After"]) >= 1
        assert "Nothing was saved" in str(error.hint) and "again" in str(error.hint)
        assert "locked" not in error.message and "sqlite" not in error.message.lower()
        assert database.engine.pool.checkedout() == 0  # type: ignore[attr-defined]
        # Nothing of the refused transaction was stored; the same write now succeeds.
        assert await _usernames(database) == []
        await _add_users(database, "first", write=write)
        assert await _usernames(database) == ["first"]
    finally:
        await database.dispose()


async def test_the_default_busy_wait_is_short(sqlite_url: str) -> None:
    assert BUSY_TIMEOUT_SECONDS <= 5
    database = Database(sqlite_url)
    try:
        with sqlite_writer(sqlite_url):
            started = time.monotonic()
            with pytest.raises(DatabaseBusyError):
                await _add_users(database, "late")
            waited = time.monotonic() - started
        assert BUSY_TIMEOUT_SECONDS - 0.5 < waited < BUSY_TIMEOUT_SECONDS + 3, waited
    finally:
        await database.dispose()


async def test_a_read_is_not_held_up_by_a_writer(sqlite_url: str) -> None:
    database = Database(sqlite_url, busy_timeout_seconds=0.3)
    try:
        with sqlite_writer(sqlite_url):
            assert await _usernames(database) == []  # WAL: readers never wait for the writer
    finally:
        await database.dispose()


@pytest.mark.postgres
async def test_a_postgresql_lock_wait_that_times_out_is_busy(postgres_url: str) -> None:
    await upgrade_async(postgres_url)
    database = Database(postgres_url)
    holder = create_engine(postgres_url.replace("+asyncpg", "+psycopg", 1))
    try:
        await _add_users(database, "locked")

        async def add_then_update_the_locked_row() -> None:
            async with database.session() as session:
                await session.execute(text("SET LOCAL lock_timeout = '200ms'"))
                session.add(User(username="partial"))
                await session.flush()
                await session.execute(
                    update(User).where(User.username == "locked").values(display_name="x")
                )

        with holder.connect() as other:
            other.execute(text("SELECT id FROM users WHERE username = 'locked' FOR UPDATE"))
            with pytest.raises(DatabaseBusyError):
                await add_then_update_the_locked_row()
            other.rollback()
        assert await _usernames(database) == ["locked"]
        async with database.session() as session:
            count = await session.scalar(select(func.count()).select_from(User))
        assert count == 1
    finally:
        holder.dispose()
        await database.dispose()
