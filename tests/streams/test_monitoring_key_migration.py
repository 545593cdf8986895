"""Migration 0012 (issue 20, point 16): the title keys a stream reported before it, for
items that carry identifiers, are rewritten to name those identifiers' kinds, so a
same-titled notice with another DOI is no longer hidden by them after an upgrade. A
real run on the recorded responses writes the keys; a downgrade writes them back the way
0011 stored them; the upgrade must restore exactly what the current code writes."""

from __future__ import annotations

import uuid

from alembic import command
from sqlalchemy import Connection, select
from sqlalchemy.ext.asyncio import create_async_engine

from scholarstream.db import alembic_config, upgrade_async
from scholarstream.db.tables import StreamReportedItemRow
from scholarstream.papers import Identifiers, Paper
from scholarstream.runtime import Runtime
from scholarstream.settings import Settings
from scholarstream.streams.monitoring import ReportStore, already_reported, run_stream_now
from tests.search.world import LiteratureWorld
from tests.streams.conftest import Make
from tests.streams.runner import runner
from tests.streams.test_monitoring import NOW, new_stream


async def stored_keys(runtime: Runtime, stream_id: uuid.UUID) -> set[str]:
    async with runtime.database.session() as session:
        keys = await session.scalars(
            select(StreamReportedItemRow.key).where(StreamReportedItemRow.stream_id == stream_id)
        )
        return set(keys)


async def downgrade_to_0011(url: str) -> None:
    engine = create_async_engine(url)

    def down(connection: Connection) -> None:
        command.downgrade(alembic_config(connection), "0011")

    try:
        async with engine.begin() as conn:
            await conn.run_sync(down)
    finally:
        await engine.dispose()


async def test_the_upgrade_rewrites_title_keys_of_items_with_identifiers(
    make: Make, db_settings: Settings
) -> None:
    runtime = make(LiteratureWorld())
    owner, stream = await new_stream(runtime)
    stored = await run_stream_now(runner(runtime), owner.id, stream.id, now=NOW)
    assert stored.report is not None
    current = await stored_keys(runtime, stream.id)
    named = {key for key in current if key.startswith("title:") and "|" in key}
    assert named, "items with identifiers store title keys naming their kinds"

    await downgrade_to_0011(db_settings.app_database_url)
    legacy = await stored_keys(runtime, stream.id)
    assert not any("|" in key for key in legacy)
    item = next(
        i.record for i in stored.report.items if isinstance(i.record, Paper) and i.record.ids.doi
    )
    # Another work with the same title and year: only its DOI is its own.
    notice = item.model_copy(update={"ids": Identifiers(doi="10.9999/other")})
    assert already_reported(notice, legacy)  # the bug, as 0011 stored the keys

    await upgrade_async(db_settings.app_database_url)

    assert await stored_keys(runtime, stream.id) == current
    start = await ReportStore(runtime.database).begin(owner.id, stream.id, now=NOW)
    assert not already_reported(notice, start.reported)
    assert already_reported(item, start.reported)
