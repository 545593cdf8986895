"""The async database handle: one engine and session factory per process."""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from typing import Any

from sqlalchemy import event
from sqlalchemy.ext.asyncio import (
    AsyncEngine,
    AsyncSession,
    async_sessionmaker,
    create_async_engine,
)


def _sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
    cursor = dbapi_connection.cursor()
    # WAL lets the API read while a worker writes; foreign keys make ON DELETE CASCADE work.
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.execute("PRAGMA busy_timeout=10000")
    # Safe with WAL (a power cut may lose the last commits, never corrupt the file), and
    # halves the time of each write transaction, which serialise on SQLite.
    cursor.execute("PRAGMA synchronous=NORMAL")
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
    def __init__(self, url: str, *, echo: bool = False) -> None:
        self.url = url
        # A SQLite file has no connection to lose; the ping would cost every session a
        # round trip to the driver's thread.
        is_sqlite = url.startswith("sqlite")
        self.engine: AsyncEngine = create_async_engine(url, echo=echo, pool_pre_ping=not is_sqlite)
        if is_sqlite:
            event.listen(self.engine.sync_engine, "connect", _sqlite_pragmas)
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
