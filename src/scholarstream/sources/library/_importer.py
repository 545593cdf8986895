"""Importing files into the library: streamed, in batches, malformed records reported and
skipped, records already present counted and left alone, and copies of a record (in the
library or earlier in the file) merged into it instead of added again.

Each batch's records are matched against the library by key lookups (identifiers and the
deduplicator's blocking keys, ``_duplicates.match_keys``), never against every record: the
work grows with the batch and the few records sharing its keys, not with the library."""

from __future__ import annotations

import asyncio
import hashlib
import io
import json
import logging
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from itertools import islice
from pathlib import Path
from typing import Any, BinaryIO, cast

from sqlalchemy.ext.asyncio import AsyncSession

from scholarstream.db import Database, utcnow
from scholarstream.db.tables import LibraryRecord
from scholarstream.errors import InvalidInputError
from scholarstream.papers import Record, normalize_title
from scholarstream.papers.formats import (
    SNIFF_BYTES,
    ReadItem,
    RecordProblem,
    formats,
    open_records,
)
from scholarstream.settings import LimitsSettings
from scholarstream.sources.library._duplicates import plan_merges, record_match_keys
from scholarstream.sources.library._merges import (
    Absorbed,
    Merger,
    alternate_fingerprint,
    candidates,
    ensure_keys,
    split_pairs,
    stored_copies,
)
from scholarstream.sources.library._models import ImportProblem, ImportReport
from scholarstream.sources.library._store import fingerprint, record_data, record_of, to_row

log = logging.getLogger(__name__)

BATCH_SIZE = 500
MAX_PROBLEMS_KEPT = 100

Progress = Callable[[int], None]
"""Called after each batch with the number of records handled so far."""


def _next_batch(items: Iterator[ReadItem]) -> list[ReadItem]:
    return list(islice(items, BATCH_SIZE))


@dataclass
class _Run:
    """What one import has seen so far, across its batches."""

    file: str
    report: ImportReport
    seen: dict[str, set[str]] = field(default_factory=dict)
    """The file's records read so far: their contents' digests by fingerprint."""
    stored: set[str] = field(default_factory=set)
    """Fingerprints of the records this import added."""
    created: set[uuid.UUID] = field(default_factory=set)
    """Records this import added (a later copy of one is a duplicate inside the file)."""


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
    run = _Run(file=file[:300], report=report)
    async with database.session() as session:
        await ensure_keys(session, owner_id)
    handled = 0
    while batch := await asyncio.to_thread(_next_batch, items):
        records: list[Record] = []
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
                records.append(item)
        async with database.session() as session:
            await _import_batch(session, owner_id, records, run)
        handled += len(batch)
        if progress is not None:
            progress(handled)
    return report


async def _import_batch(
    session: AsyncSession, owner_id: uuid.UUID, records: list[Record], run: _Run
) -> None:
    report = run.report
    datas = [record_data(record) for record in records]
    prints = [fingerprint(record) for record in records]
    alternates = [alternate_fingerprint(p, d) for p, d in zip(prints, datas, strict=True)]
    stored = await stored_copies(session, owner_id, {*prints, *alternates})
    fresh: list[tuple[Record, str, str]] = []
    for record, data, print_, alternate in zip(records, datas, prints, alternates, strict=True):
        digest = _digest(data)
        if digest in run.seen.get(print_, ()):
            report.in_file_duplicates += 1  # the same record twice in the file
        elif any(data == known for known in (*stored.get(print_, ()), *stored.get(alternate, ()))):
            report.already_present += 1  # imported before, exactly as it is
        else:
            fresh.append((record, print_, alternate))
        run.seen.setdefault(print_, set()).add(digest)
    if not fresh:
        return
    keys = await asyncio.to_thread(lambda: [record_match_keys(item[0]) for item in fresh])
    titles: dict[str, set[str]] = {}
    for (record, _, _), found in zip(fresh, keys, strict=True):
        title = normalize_title(record.title)
        for key in found:
            titles.setdefault(key, set()).add(title)
    library = await candidates(session, owner_id, titles)
    existing = len(library)
    position = {row.id: index for index, row in enumerate(library)}
    apart_pairs = {
        frozenset(position[i] for i in pair)
        for pair in await split_pairs(session, owner_id, list(position))
        if all(i in position for i in pair)
    }
    compared = [record_of(row) for row in library] + [item[0] for item in fresh]
    planned = await asyncio.to_thread(
        lambda: plan_merges(
            compared, existing=existing, apart=lambda i, j: frozenset((i, j)) in apart_pairs
        )
    )
    plan = planned.merges
    log.debug(
        "import of %s: %d records, %d library records sharing a key, %d pairs compared",
        run.file,
        len(fresh),
        existing,
        planned.compared,
    )
    absorbed = {merge.absorbed for merge in plan}
    merger = Merger(session, owner_id)
    added: dict[int, LibraryRecord] = {}
    for index in range(existing, len(compared)):
        if index in absorbed:
            continue
        _, print_, alternate = fresh[index - existing]
        if print_ in stored or print_ in run.stored:
            # Another work holds the fingerprint (two editorials of one year).
            print_ = alternate
            if print_ in stored or print_ in run.stored:
                report.already_present += 1
                continue
        row = to_row(compared[index], source_file=run.file)
        row.fingerprint = print_
        run.stored.add(print_)
        row.id = uuid.uuid4()
        row.owner_id = owner_id
        row.keyed = True
        session.add(row)
        added[index] = row
        run.created.add(row.id)
        merger.changed[row.id] = keys[index - existing]
        report.imported += 1
    await merger.load_originals(library[merge.kept].id for merge in plan if merge.kept < existing)
    for merge in plan:
        if merge.kept < existing:
            kept = library[merge.kept]
        elif merge.kept in added:
            kept = added[merge.kept]
        else:  # its fingerprint was taken: counted above, not added
            report.already_present += 1
            continue
        in_file = merge.kept >= existing or kept.id in run.created
        if in_file:
            report.in_file_duplicates += 1
        else:
            report.merged += 1
        copy = Absorbed(
            id=uuid.uuid4(),
            record=compared[merge.absorbed],
            fingerprint=fresh[merge.absorbed - existing][1],
            source_file=run.file,
            added_at=utcnow(),
        )
        merger.absorb(kept, copy, origin="file" if in_file else "import", evidence=merge.evidence)
    await merger.finish()


def _digest(data: dict[str, Any]) -> str:
    text = json.dumps(data, sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()


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
    a field over the limit is a problem in the report, and the others are imported.

    A file that no format recognises by its content, and whose extension names no one
    format (``.txt`` may be RIS or MEDLINE, ``.xml`` PubMed or EndNote, ``.docx`` none),
    is refused as of an unrecognised format, naming the formats that are read, when the
    format tried on it cannot read it (notes saved as ``.txt``). A file whose extension
    names its format (``.ris``, ``.csv``) gets that reader's own account of what is wrong
    ("has no title column")."""
    buffered = (
        stream
        if isinstance(stream, io.BufferedReader)
        else io.BufferedReader(cast("io.RawIOBase", stream))
    )
    guessed = (
        format_name is None
        and not _recognised_by_content(buffered.peek(SNIFF_BYTES))
        and not _named_by_extension(filename)
    )
    try:
        file_format, items = open_records(buffered, filename, format_name, limits=limits)
    except InvalidInputError as exc:
        if guessed and str(exc).startswith("Cannot tell the format"):
            raise unrecognised_format(filename) from exc
        raise
    if guessed:
        items = _refused_as_unrecognised(items, filename)
    return await import_items(
        database, owner_id, items, file=filename, format_name=file_format.name, progress=progress
    )


def _recognised_by_content(head: bytes) -> bool:
    """Does some format recognise the file by its first bytes? (A compressed file is
    judged after unpacking, by ``open_records``.)"""
    if head[:2] == b"\x1f\x8b" or head[:2] in (b"\xff\xfe", b"\xfe\xff"):
        return True
    return any(f.sniff(head[:SNIFF_BYTES]) for f in formats() if f.read is not None)


def _named_by_extension(filename: str) -> bool:
    """Does the file's extension name exactly one of the formats read?"""
    suffixes = [s.lower() for s in Path(filename).suffixes if s.lower() != ".gz"]
    if not suffixes:
        return False
    claiming = [f for f in formats() if f.read is not None and suffixes[-1] in f.extensions]
    return len(claiming) == 1


def _refused_as_unrecognised(items: Iterator[ReadItem], filename: str) -> Iterator[ReadItem]:
    """``items``; the format guessed from the extension refusing the file before its first
    record becomes an unrecognised format."""
    started = False
    try:
        for item in items:
            started = True
            yield item
    except InvalidInputError as exc:
        if started:
            raise
        raise unrecognised_format(filename) from exc


def unrecognised_format(filename: str) -> InvalidInputError:
    """The error of a file of no format we read, listing those we do (and how to tell
    one: the extensions each usually has)."""
    readable = sorted((f for f in formats() if f.read is not None), key=lambda f: f.label.lower())
    listed = "; ".join(f"{f.label.split(' (')[0]} ({', '.join(f.extensions)})" for f in readable)
    return InvalidInputError(
        f"{filename} is in an unrecognised format: no record in it reads as any format "
        f"ScholarStream imports. It imports {listed}; any of them may be compressed (.gz).",
        hint="Export the references again from your reference manager or database in one of "
        "these formats (RIS works everywhere); if the file is one of them, choose its format: "
        f"{', '.join(f.label for f in readable)}.",
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
