from __future__ import annotations

import asyncio
import subprocess
import sys

from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import Connection, inspect
from sqlalchemy.ext.asyncio import create_async_engine

import scholarstream.db.tables  # noqa: F401
from scholarstream.db import Base, alembic_config, current_revision, upgrade
from scholarstream.settings import Settings


def _head() -> str:
    head = ScriptDirectory.from_config(alembic_config()).get_current_head()
    assert head is not None
    return head


async def _inspect(url: str) -> tuple[set[str], list[object]]:
    engine = create_async_engine(url)

    def check(conn: Connection) -> tuple[set[str], list[object]]:
        tables = set(inspect(conn).get_table_names())
        diff = compare_metadata(MigrationContext.configure(conn), Base.metadata)
        return tables, diff

    try:
        async with engine.connect() as conn:
            return await conn.run_sync(check)
    finally:
        await engine.dispose()


def test_migrations_create_every_table_and_match_the_models(db_settings: Settings) -> None:
    url = db_settings.app_database_url
    assert asyncio.run(current_revision(url)) == _head()
    tables, diff = asyncio.run(_inspect(url))
    assert set(Base.metadata.tables) <= tables
    # A model changed without a migration shows up here.
    assert diff == []


def test_upgrade_is_idempotent(db_settings: Settings) -> None:
    upgrade(db_settings.app_database_url)
    assert asyncio.run(current_revision(db_settings.app_database_url)) == _head()


def test_every_user_table_has_an_owner() -> None:
    unowned = {"users"}  # the owners themselves
    for name, table in Base.metadata.tables.items():
        if name in unowned:
            continue
        assert "owner_id" in table.columns, f"{name} has no owner_id"
        (fk,) = table.columns["owner_id"].foreign_keys
        assert fk.column.table.name == "users"


def test_processes_migrating_a_fresh_database_at_once_all_succeed(database_url: str) -> None:
    """Several processes starting together on a new database each migrate it (``serve``
    and ``worker`` do at start): one migrates, the others wait for it and find it current."""
    script = "import sys; from scholarstream.db import upgrade; upgrade(sys.argv[1])"
    processes = [
        subprocess.Popen(
            [sys.executable, "-c", script, database_url],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        for _ in range(4)
    ]
    outputs = [process.communicate(timeout=120)[0] for process in processes]
    assert [process.returncode for process in processes] == [0] * 4, outputs
    assert asyncio.run(current_revision(database_url)) == _head()
    tables, diff = asyncio.run(_inspect(database_url))
    assert set(Base.metadata.tables) <= tables and diff == []
