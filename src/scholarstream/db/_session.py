"""The async database handle: one engine and session factory per process.

A write the database cannot take because another writer holds it raises
``DatabaseBusyError`` (503 ``database_busy`` in the API), whatever code runs it: on SQLite
after a busy wait of at most ``busy_timeout_seconds`` for the one write lock (another
process, a long import); on PostgreSQL on a lock timeout, a deadlock or a serialization
failure. The transaction is rolled back, so nothing of it is stored."""

from __future__ import annotations

import asyncio
import sqlite3
import weakref
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from functools import partial
from typing import Any

from sqlalchemy import event
from sqlalchemy.engine import ExceptionContext
from sqlalchemy.ext.asyncio import (
    AsyncEngine,
    AsyncSession,
    async_sessionmaker,
    create_async_engine,
)

from scholarstream.errors import DatabaseBusyError

BUSY_TIMEOUT_SECONDS = 5.0
"""Longest wait of a SQLite write for the write lock another connection holds. Writes of
this process queue on ``Database.session(write=True)`` instead; what waits here is
mostly another process's write, and a request should not hang long behind it."""

_SQLITE_BUSY_CODES = frozenset({sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED})
# lock_not_available (lock_timeout, NOWAIT), serialization_failure, deadlock_detected
_POSTGRES_BUSY_STATES = frozenset({"55P03", "40001", "40P01"})


def is_busy(error: BaseException) -> bool:
    """Whether a driver's error says another writer held what this one needed."""
    sqlite_code = getattr(error, "sqlite_errorcode", None)
    if isinstance(sqlite_code, int):
        return sqlite_code & 0xFF in _SQLITE_BUSY_CODES  # extended codes: BUSY_SNAPSHOT ...
    if isinstance(error, sqlite3.OperationalError):
        return "database is locked" in str(error)
    return getattr(error, "sqlstate", None) in _POSTGRES_BUSY_STATES


def _busy_error() -> DatabaseBusyError:
    return DatabaseBusyError("The database is busy with another write, so this was not saved.")


def _raise_busy(context: ExceptionContext) -> None:
    """Every statement, commit and rollback of the engine: a busy database becomes
    ``DatabaseBusyError`` (SQLAlchemy cleans up and raises it instead of its own)."""
    if is_busy(context.original_exception):
        raise _busy_error() from context.sqlalchemy_exception


def _sqlite_pragmas(busy_timeout_ms: int, dbapi_connection: Any, _record: Any) -> None:
    cursor = dbapi_connection.cursor()
    try:
        # First, so that the statements below wait for a lock as every later one does.
        cursor.execute(f"PRAGMA busy_timeout={busy_timeout_ms}")
        # WAL lets the API read while a worker writes; foreign keys make ON DELETE
        # CASCADE work.
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute("PRAGMA foreign_keys=ON")
        # Safe with WAL (a power cut may lose the last commits, never corrupt the file), and
        # halves the time of each write transaction, which serialise on SQLite.
        cursor.execute("PRAGMA synchronous=NORMAL")
    except sqlite3.Error as exc:
        if is_busy(exc):
            raise _busy_error() from exc
        raise
    finally:
        cursor.close()


async def _close(session: AsyncSession) -> None:
    """Closes a session as ``async with session`` does, without its cost when there is
    nothing to give back. The library closes in a task of its own, shielded, so that a
    cancelled caller cannot abandon the close halfway through giving the connection back:
    three passes of the event loop for every session, which under load is as many waits
    behind everything else that is ready to run. Once the transaction has ended (committed
    or rolled back), the connection is back in the pool and closing does no I/O, so it
    cannot be interrupted and runs here; otherwise the library's way is kept."""
    if session.in_transaction():
        await session.__aexit__(None, None, None)
    else:
        await session.close()


class Database:
    def __init__(
        self,
        url: str,
        *,
        echo: bool = False,
        busy_timeout_seconds: float = BUSY_TIMEOUT_SECONDS,
    ) -> None:
        self.url = url
        # A SQLite file has no connection to lose; the ping would cost every session a
        # round trip to the driver's thread.
        is_sqlite = url.startswith("sqlite")
        self.engine: AsyncEngine = create_async_engine(url, echo=echo, pool_pre_ping=not is_sqlite)
        if is_sqlite:
            busy_timeout_ms = max(1, round(busy_timeout_seconds * 1000))
            event.listen(
                self.engine.sync_engine, "connect", partial(_sqlite_pragmas, busy_timeout_ms)
            )
        event.listen(self.engine.sync_engine, "handle_error", _raise_busy)
        self.sessionmaker = async_sessionmaker(self.engine, expire_on_commit=False)
        self._serialise_writes = is_sqlite
        self._write_locks: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Lock] = (
            weakref.WeakKeyDictionary()
        )

    @asynccontextmanager
    async def session(self, *, write: bool = False) -> AsyncIterator[AsyncSession]:
        """A session in a transaction: committed on success, rolled back on error.

        ``write=True`` marks a transaction that writes on a hot path (every chat turn). On
        SQLite, which has one writer at a time, such transactions queue here in order
        instead of in SQLite's busy handler, which retries on a timer, is not first come
        first served, and fails after ``busy_timeout`` when the process is busy."""
        session = self.sessionmaker()
        try:
            async with AsyncExitStack() as stack:
                if write and self._serialise_writes:
                    # Inside the session, so that giving its connection back is not waited for.
                    await stack.enter_async_context(self._write_lock())
                await stack.enter_async_context(session.begin())
                yield session
        finally:
            await _close(session)

    def _write_lock(self) -> asyncio.Lock:
        loop = asyncio.get_running_loop()
        lock = self._write_locks.get(loop)
        if lock is None:
            lock = self._write_locks[loop] = asyncio.Lock()
        return lock

    async def ping(self) -> None:
        from sqlalchemy import text

        async with self.engine.connect() as conn:
            await conn.execute(text("SELECT 1"))

    async def dispose(self) -> None:
        await self.engine.dispose()
