"""Importing files into the library: streamed, in batches, malformed records reported and
skipped, records already present counted and left alone."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Callable, Iterator
from itertools import islice
from pathlib import Path
from typing import BinaryIO

from scholarstream.db import Database
from scholarstream.errors import InvalidInputError
from scholarstream.papers.formats import ReadItem, RecordProblem, open_records
from scholarstream.settings import LimitsSettings
from scholarstream.sources.library._models import ImportProblem, ImportReport
from scholarstream.sources.library._store import add_records, to_row

BATCH_SIZE = 500
MAX_PROBLEMS_KEPT = 100

Progress = Callable[[int], None]
"""Called after each batch with the number of records handled so far."""


def _next_batch(items: Iterator[ReadItem]) -> list[ReadItem]:
    return list(islice(items, BATCH_SIZE))


async def import_items(
    database: Database,
    owner_id: uuid.UUID,
    items: Iterator[ReadItem],
    *,
    file: str,
    format_name: str,
    progress: Progress | None = None,
) -> ImportReport:
    """Each batch is its own transaction: an error later in the file keeps what was saved."""
    report = ImportReport(file=file, format=format_name)
    handled = 0
    while batch := await asyncio.to_thread(_next_batch, items):
        rows = []
        for item in batch:
            if isinstance(item, RecordProblem):
                report.skipped += 1
                if len(report.problems) < MAX_PROBLEMS_KEPT:
                    report.problems.append(
                        ImportProblem(
                            record_number=item.record_number,
                            line=item.line,
                            field=item.field,
                            message=item.message,
                        )
                    )
            else:
                rows.append(to_row(item, source_file=file))
        async with database.session() as session:
            added = await add_records(session, owner_id, rows)
        report.imported += added
        report.duplicates += len(rows) - added
        handled += len(batch)
        if progress is not None:
            progress(handled)
    return report


async def import_stream(
    database: Database,
    owner_id: uuid.UUID,
    stream: BinaryIO,
    filename: str,
    *,
    limits: LimitsSettings,
    format_name: str | None = None,
    progress: Progress | None = None,
) -> ImportReport:
    """The file's records, read within ``limits`` (see ``papers.formats``): a record with
    a field over the limit is a problem in the report, and the others are imported."""
    file_format, items = open_records(stream, filename, format_name, limits=limits)
    return await import_items(
        database, owner_id, items, file=filename, format_name=file_format.name, progress=progress
    )


async def import_path(
    database: Database,
    owner_id: uuid.UUID,
    path: Path,
    *,
    limits: LimitsSettings,
    format_name: str | None = None,
    progress: Progress | None = None,
) -> ImportReport:
    try:
        stream = path.open("rb")
    except OSError as exc:
        raise InvalidInputError(
            f"Cannot open {path}: {exc.strerror or exc}.",
            hint="Check the path and that the file is readable.",
        ) from exc
    with stream:
        return await import_stream(
            database,
            owner_id,
            stream,
            path.name,
            limits=limits,
            format_name=format_name,
            progress=progress,
        )
