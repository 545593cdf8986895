"""Run Alembic migrations from code: ``scholarstream db upgrade`` and every ``serve`` start."""

from __future__ import annotations

import asyncio
from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from sqlalchemy import Connection
from sqlalchemy.engine import make_url
from sqlalchemy.exc import InterfaceError, OperationalError
from sqlalchemy.ext.asyncio import create_async_engine

from scholarstream.errors import DatabaseUnavailableError
from scholarstream.settings import mask_url_password

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
        Path(parsed.database).parent.mkdir(parents=True, exist_ok=True)


async def upgrade_async(url: str, revision: str = "head") -> None:
    _ensure_sqlite_directory(url)
    engine = create_async_engine(url)
    try:
        async with engine.begin() as conn:
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
