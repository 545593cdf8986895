"""Exporting the library in any registered format, with bounded memory.

The writers are synchronous and want one iterable; the records come from the async
database a batch at a time. The writer runs in a thread and pulls records through a small
queue that the event loop fills, so neither side ever holds the whole library.
"""

from __future__ import annotations

import asyncio
import queue
import uuid
from collections.abc import AsyncIterator, Iterator, Sequence
from dataclasses import dataclass
from typing import TextIO

from scholarstream.db import Database
from scholarstream.papers import Record
from scholarstream.papers.formats import get_format
from scholarstream.sources.library._models import LibraryQuery
from scholarstream.sources.library._store import (
    filter_clauses,
    items_by_id,
    iter_rows,
    record_of,
)

_DONE = object()
_QUEUE_BATCHES = 4
_SELECTION_BATCH = 500


def _drain(batches: queue.Queue[list[Record] | object]) -> Iterator[Record]:
    while (batch := batches.get()) is not _DONE:
        assert isinstance(batch, list)
        yield from batch


async def _write(
    format_name: str, out: TextIO, batches_of_records: AsyncIterator[list[Record]]
) -> int:
    """Streams the batches to the format's writer (in a thread); returns records written."""
    file_format = get_format(format_name, for_export=True)
    assert file_format.write is not None
    write = file_format.write
    batches: queue.Queue[list[Record] | object] = queue.Queue(maxsize=_QUEUE_BATCHES)
    writer = asyncio.create_task(asyncio.to_thread(write, _drain(batches), out))

    async def put(item: list[Record] | object) -> None:
        # Never block the event loop on a full queue; give the writer time instead.
        while True:
            try:
                batches.put_nowait(item)
                return
            except queue.Full:
                if writer.done():
                    return
                await asyncio.sleep(0.005)

    try:
        async for batch in batches_of_records:
            await put(batch)
            if writer.done():
                break
    finally:
        await put(_DONE)
    return await writer


async def export_records(
    database: Database,
    owner_id: uuid.UUID,
    format_name: str,
    out: TextIO,
    *,
    query: LibraryQuery | None = None,
) -> int:
    """Writes the owner's records (filtered by ``query``'s year/type filters) to ``out``;
    returns how many were written."""
    where = filter_clauses(owner_id, query)[1:] if query else []

    async def records() -> AsyncIterator[list[Record]]:
        async with database.session() as session:
            async for rows in iter_rows(session, owner_id, where=where):
                yield [record_of(row) for row in rows]

    return await _write(format_name, out, records())


async def export_selection(
    database: Database,
    owner_id: uuid.UUID,
    format_name: str,
    out: TextIO,
    ids: Sequence[uuid.UUID],
) -> int:
    """Writes the owner's records among ``ids``, in that order (ids of other owners or of
    deleted records are left out); returns how many were written."""

    async def records() -> AsyncIterator[list[Record]]:
        async with database.session() as session:
            for start in range(0, len(ids), _SELECTION_BATCH):
                chunk = ids[start : start + _SELECTION_BATCH]
                found = await items_by_id(session, owner_id, chunk)
                yield [found[i].record for i in chunk if i in found]

    return await _write(format_name, out, records())


@dataclass(frozen=True)
class Export:
    """The records one export will write, counted before anything is written: a selection
    (``ids``, in order) or every record passing ``query``'s filters."""

    database: Database
    owner_id: uuid.UUID
    count: int
    ids: Sequence[uuid.UUID] | None = None
    query: LibraryQuery | None = None

    async def write(self, format_name: str, out: TextIO) -> int:
        """Writes the records to ``out`` in ``format_name``; returns how many."""
        if self.ids is not None:
            return await export_selection(self.database, self.owner_id, format_name, out, self.ids)
        return await export_records(
            self.database, self.owner_id, format_name, out, query=self.query
        )
