"""Run Alembic migrations from code: ``scholarstream db upgrade`` and every ``serve`` and
``worker`` start. Processes that start together on one database take turns: the first
migrates, the others wait for it and find the database current (on PostgreSQL an advisory
lock held by the migrating transaction; on SQLite a lock on a file beside the database)."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import os
import sys
from collections.abc import AsyncIterator
from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from sqlalchemy import Connection, text
from sqlalchemy.engine import make_url
from sqlalchemy.exc import InterfaceError, OperationalError
from sqlalchemy.ext.asyncio import create_async_engine

from scholarstream.errors import DatabaseUnavailableError
from scholarstream.settings import make_directory, mask_url_password

MIGRATIONS_DIR = Path(__file__).parent / "migrations"


def alembic_config(connection: Connection | None = None) -> Config:
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS_DIR))
    config.attributes["connection"] = connection
    return config


def _upgrade(connection: Connection, revision: str) -> None:
    command.upgrade(alembic_config(connection), revision)


def _ensure_sqlite_directory(url: str) -> None:
    parsed = make_url(url)
    if parsed.get_backend_name() == "sqlite" and parsed.database not in (None, "", ":memory:"):
        make_directory(
            Path(parsed.database).parent,
            "The SQLite database's directory",
            hint="Set database_url to a file in a directory you can write to.",
        )


# The advisory lock's key: the same in every process and release.
_MIGRATION_LOCK_KEY = int.from_bytes(
    hashlib.blake2b(b"scholarstream/migrations", digest_size=8).digest(), "big", signed=True
)


def _lock_blocking(fd: int) -> None:
    if sys.platform == "win32":
        import msvcrt

        while True:  # LK_LOCK gives up after about 10 s: keep waiting
            with contextlib.suppress(OSError):
                msvcrt.locking(fd, msvcrt.LK_LOCK, 1)
                return
    import fcntl

    fcntl.flock(fd, fcntl.LOCK_EX)


@contextlib.asynccontextmanager
async def _sqlite_migration_lock(url: str) -> AsyncIterator[None]:
    parsed = make_url(url)
    if parsed.get_backend_name() != "sqlite" or parsed.database in (None, "", ":memory:"):
        yield
        return
    database = Path(parsed.database)
    fd = os.open(database.with_name(database.name + ".migrate.lock"), os.O_RDWR | os.O_CREAT, 0o600)
    try:
        await asyncio.to_thread(_lock_blocking, fd)
        yield
    finally:
        os.close(fd)  # releases the lock


async def upgrade_async(url: str, revision: str = "head") -> None:
    _ensure_sqlite_directory(url)
    engine = create_async_engine(url)
    try:
        async with _sqlite_migration_lock(url), engine.begin() as conn:
            if conn.dialect.name == "postgresql":
                # Held until this transaction, and the migration in it, commits.
                await conn.execute(
                    text("SELECT pg_advisory_xact_lock(:key)"), {"key": _MIGRATION_LOCK_KEY}
                )
            await conn.run_sync(_upgrade, revision)
    except (OSError, OperationalError, InterfaceError) as exc:
        raise DatabaseUnavailableError(
            f"Cannot open the database {mask_url_password(url)}: {getattr(exc, 'orig', exc)}"
        ) from exc
    finally:
        await engine.dispose()


def upgrade(url: str, revision: str = "head") -> None:
    asyncio.run(upgrade_async(url, revision))


async def current_revision(url: str) -> str | None:
    engine = create_async_engine(url)
    try:
        async with engine.connect() as conn:
            return await conn.run_sync(
                lambda sync: MigrationContext.configure(sync).get_current_revision()
            )
    finally:
        await engine.dispose()
