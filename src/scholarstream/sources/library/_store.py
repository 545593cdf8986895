"""Library rows: converting records to rows and back, reading, deleting."""

from __future__ import annotations

import hashlib
import json
import uuid
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from pydantic import TypeAdapter
from sqlalchemy import ColumnElement, and_, delete, func, or_, select
from sqlalchemy.ext.asyncio import AsyncSession

from scholarstream.db import OwnerScope
from scholarstream.db.tables import LibraryMerge, LibraryRecord
from scholarstream.errors import NotFoundError
from scholarstream.papers import Paper, Record, normalize_doi, normalize_pmid, normalize_title
from scholarstream.sources.library._labels import label_clauses
from scholarstream.sources.library._models import LibraryItem, LibraryQuery

_RECORD = TypeAdapter[Record](Record)


def fingerprint(record: Record) -> str:
    """Stable across re-imports of the same file record: its file id, title, year and DOI."""
    key = [
        record.kind,
        (record.record_id or "").strip(),
        normalize_title(record.title),
        record.year,
        record.ids.doi,
        record.ids.nct_id,
    ]
    return hashlib.sha256(json.dumps(key).encode()).hexdigest()


def _type_list(record: Record) -> str:
    types = record.publication_types if isinstance(record, Paper) else record.phases
    return "".join(f"|{t.lower()}" for t in types) + "|" if types else ""


def record_data(record: Record) -> dict[str, Any]:
    """The record as the ``data`` column holds it."""
    return record.model_dump(mode="json", exclude_none=True, exclude_defaults=True) | {
        "kind": record.kind,
        "title": record.title,
    }


def set_record(row: LibraryRecord, record: Record) -> None:
    """The row's record and the columns drawn from it (the fingerprint stays: it names
    the file record the row was first imported from)."""
    row.kind = record.kind
    row.record_id = record.record_id[:200] if record.record_id else None
    row.title = record.title
    row.year = record.year
    row.doi = record.ids.doi
    row.pmid = record.ids.pmid
    row.publication_types = _type_list(record)
    row.data = record_data(record)


def to_row(record: Record, *, source_file: str | None) -> LibraryRecord:
    row = LibraryRecord(
        fingerprint=fingerprint(record),
        source_file=source_file[:300] if source_file else None,
    )
    set_record(row, record)
    return row


def record_of(row: LibraryRecord) -> Record:
    return _RECORD.validate_python(row.data)


def record_of_data(data: dict[str, Any]) -> Record:
    return _RECORD.validate_python(data)


def item_of(row: LibraryRecord, score: float | None = None) -> LibraryItem:
    return LibraryItem(
        id=row.id,
        record=record_of(row),
        added_at=row.created_at,
        source_file=row.source_file,
        merged_from=row.merged_files or [],
        score=score,
    )


_ITEM_COLUMNS = (
    LibraryRecord.id,
    LibraryRecord.data,
    LibraryRecord.created_at,
    LibraryRecord.source_file,
    LibraryRecord.merged_files,
)


async def items_by_id(
    session: AsyncSession, owner_id: uuid.UUID, ids: Sequence[uuid.UUID]
) -> dict[uuid.UUID, LibraryItem]:
    """Items for ids (the owner's only), read as plain columns: no ORM objects to build,
    which matters on the search path."""
    if not ids:
        return {}
    result = await session.execute(
        select(*_ITEM_COLUMNS).where(
            LibraryRecord.owner_id == owner_id, LibraryRecord.id.in_(list(ids))
        )
    )
    return {
        row.id: LibraryItem(
            id=row.id,
            record=_RECORD.validate_python(row.data),
            added_at=row.created_at,
            source_file=row.source_file,
            merged_from=row.merged_files or [],
        )
        for row in result
    }


def filter_clauses(owner_id: uuid.UUID, query: LibraryQuery) -> list[ColumnElement[bool]]:
    clauses: list[ColumnElement[bool]] = [LibraryRecord.owner_id == owner_id]
    if query.year_from is not None:
        clauses.append(LibraryRecord.year >= query.year_from)
    if query.year_to is not None:
        clauses.append(LibraryRecord.year <= query.year_to)
    if query.publication_type:
        clauses.append(
            LibraryRecord.publication_types.contains(f"|{query.publication_type.lower()}|")
        )
    clauses.extend(label_clauses(owner_id, query))
    return clauses


async def count(session: AsyncSession, owner_id: uuid.UUID, query: LibraryQuery | None) -> int:
    """The owner's records passing ``query``'s filters (all of them without a query)."""
    clauses = filter_clauses(owner_id, query) if query else [LibraryRecord.owner_id == owner_id]
    total = await session.scalar(
        select(func.count()).select_from(LibraryRecord).where(and_(*clauses))
    )
    return total or 0


async def count_ids(session: AsyncSession, owner_id: uuid.UUID, ids: Sequence[uuid.UUID]) -> int:
    """How many of ``ids`` are records of the owner (a batch of ids at a time)."""
    found = 0
    for start in range(0, len(ids), 500):
        found += (
            await session.scalar(
                select(func.count())
                .select_from(LibraryRecord)
                .where(
                    LibraryRecord.owner_id == owner_id,
                    LibraryRecord.id.in_(list(ids[start : start + 500])),
                )
            )
            or 0
        )
    return found


async def browse(
    session: AsyncSession, owner_id: uuid.UUID, query: LibraryQuery
) -> tuple[int, list[LibraryItem]]:
    """Newest first, with the query's filters."""
    where = and_(*filter_clauses(owner_id, query))
    total = await session.scalar(select(func.count()).select_from(LibraryRecord).where(where))
    rows = await session.scalars(
        select(LibraryRecord)
        .where(where)
        .order_by(LibraryRecord.created_at.desc(), LibraryRecord.id)
        .offset(query.offset)
        .limit(query.limit)
    )
    return total or 0, [item_of(row) for row in rows]


async def browse_ids(
    session: AsyncSession, owner_id: uuid.UUID, query: LibraryQuery
) -> list[uuid.UUID]:
    """Every record passing the query's filters, newest first (ids only)."""
    result = await session.scalars(
        select(LibraryRecord.id)
        .where(and_(*filter_clauses(owner_id, query)))
        .order_by(LibraryRecord.created_at.desc(), LibraryRecord.id)
    )
    return list(result)


async def get_item(scope: OwnerScope, record_id: uuid.UUID) -> LibraryItem:
    return item_of(await scope.get(LibraryRecord, record_id, what="Library record"))


async def find_item(scope: OwnerScope, reference: str) -> LibraryItem:
    """The record ``reference`` names: its id in the library, its DOI, its PMID or its own
    identifier at its source ("NCT01234567", "W2741809807")."""
    text = reference.strip()
    try:
        return await get_item(scope, uuid.UUID(text))
    except ValueError:
        pass
    named = [LibraryRecord.record_id == text]
    if (doi := normalize_doi(text)) is not None:
        named.append(LibraryRecord.doi == doi)
    if (pmid := normalize_pmid(text)) is not None:
        named.append(LibraryRecord.pmid == pmid)
    row = await scope.session.scalar(
        scope.select(LibraryRecord).where(or_(*named)).order_by(LibraryRecord.created_at).limit(1)
    )
    if row is None:
        raise NotFoundError(
            f"No record in your library has the identifier {text}.",
            hint="Search your library (scholarstream library search) to see each record's "
            "identifier.",
        )
    return item_of(row)


async def delete_record(scope: OwnerScope, record_id: uuid.UUID) -> None:
    """The record and its merges: a copy of what it absorbed is new again after this."""
    row = await scope.get(LibraryRecord, record_id, what="Library record")
    await scope.session.execute(
        delete(LibraryMerge).where(
            LibraryMerge.owner_id == scope.owner_id,
            LibraryMerge.kept_id == record_id,
            LibraryMerge.split_at.is_(None),
        )
    )
    await scope.delete(row)


@dataclass(frozen=True)
class Revision:
    """Changes whenever the owner's library does (add, delete, update)."""

    count: int
    newest: datetime | None


async def revision(session: AsyncSession, owner_id: uuid.UUID) -> Revision:
    count, newest = (
        await session.execute(
            select(func.count(), func.max(LibraryRecord.updated_at)).where(
                LibraryRecord.owner_id == owner_id
            )
        )
    ).one()
    return Revision(count=count, newest=newest)


async def iter_rows(
    session: AsyncSession,
    owner_id: uuid.UUID,
    *,
    batch: int = 1000,
    where: Sequence[ColumnElement[bool]] = (),
) -> AsyncIterator[list[LibraryRecord]]:
    """Every row of the owner, in id order, a batch at a time (keyset paging: bounded
    memory however large the library)."""
    last: uuid.UUID | None = None
    while True:
        statement = select(LibraryRecord).where(LibraryRecord.owner_id == owner_id, *where)
        if last is not None:
            statement = statement.where(LibraryRecord.id > last)
        rows = list(await session.scalars(statement.order_by(LibraryRecord.id).limit(batch)))
        if not rows:
            return
        yield rows
        last = rows[-1].id
        session.expunge_all()
