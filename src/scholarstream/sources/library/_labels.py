"""What a person adds to their records: collections (named sets, a record in many), tags
and one note per record. Every row is the owner's; nothing here changes a record itself,
so the search index is not rebuilt when a label changes."""

from __future__ import annotations

import re
import uuid
from collections import Counter
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time, timedelta

from sqlalchemy import ColumnElement, delete, func, insert, select
from sqlalchemy.ext.asyncio import AsyncSession

from scholarstream.db import OwnerScope, utcnow
from scholarstream.db.tables import (
    LibraryCollection,
    LibraryCollectionRecord,
    LibraryNote,
    LibraryRecord,
    LibraryTag,
)
from scholarstream.errors import InvalidInputError, NotFoundError
from scholarstream.sources.library._collections import (
    collection_info,
    next_position,
    owned_records,
)
from scholarstream.sources.library._models import (
    CollectionCount,
    CollectionRef,
    FacetCount,
    LibraryItem,
    LibraryQuery,
)

MAX_TAG = 100
MAX_NOTE = 20_000
"""Characters of a note (about ten pages): a note is a reader's remark, not the paper."""
_CHUNK = 500
_SPACES = re.compile(r"\s+")


# -- names, in the product's words -------------------------------------------------------------


def tag_names(texts: Iterable[str]) -> dict[str, str]:
    """Tags by key (case-folded), as typed: "RCT, dogs" gives two; blank ones are left out."""
    tags: dict[str, str] = {}
    for text in texts:
        for part in text.split(","):
            name = _SPACES.sub(" ", part).strip()
            if not name:
                continue
            if len(name) > MAX_TAG:
                raise InvalidInputError(
                    f"A tag may be {MAX_TAG} characters long; “{name[:40]}…” has {len(name)}.",
                    hint="Use a shorter tag (a word or two), and the note for longer remarks.",
                )
            tags.setdefault(name.casefold(), name)
    return tags


def note_text(text: str) -> str:
    """The note as kept (trailing spaces and blank lines dropped); "" deletes it."""
    kept = "\n".join(line.rstrip() for line in text.strip().splitlines())
    if len(kept) > MAX_NOTE:
        raise InvalidInputError(
            f"A note may be {MAX_NOTE:,} characters long; this one has {len(kept):,}.",
            hint="Shorten it, or keep the long text in a file of its own.",
        )
    return kept


# -- filters -----------------------------------------------------------------------------------


def _day_start(day: date) -> datetime:
    return datetime.combine(day, time.min, tzinfo=UTC)


def label_clauses(owner_id: uuid.UUID, query: LibraryQuery) -> list[ColumnElement[bool]]:
    """The query's collection, tag, note and added-date filters: those the search index
    does not hold, answered by the database."""
    clauses: list[ColumnElement[bool]] = []
    if query.added_from is not None:
        clauses.append(LibraryRecord.created_at >= _day_start(query.added_from))
    if query.added_to is not None:
        clauses.append(LibraryRecord.created_at < _day_start(query.added_to + timedelta(days=1)))
    if query.collection is not None:
        clauses.append(
            LibraryRecord.id.in_(
                select(LibraryCollectionRecord.record_id).where(
                    LibraryCollectionRecord.owner_id == owner_id,
                    LibraryCollectionRecord.collection_id == query.collection,
                )
            )
        )
    if query.tag:
        key = _SPACES.sub(" ", query.tag).strip().casefold()
        clauses.append(
            LibraryRecord.id.in_(
                select(LibraryTag.record_id).where(
                    LibraryTag.owner_id == owner_id, LibraryTag.key == key
                )
            )
        )
    if query.has_note is not None:
        noted = select(LibraryNote.record_id).where(LibraryNote.owner_id == owner_id)
        clauses.append(
            LibraryRecord.id.in_(noted) if query.has_note else LibraryRecord.id.not_in(noted)
        )
    return clauses


async def passing(
    session: AsyncSession, owner_id: uuid.UUID, query: LibraryQuery
) -> set[uuid.UUID]:
    """The owner's records passing the query's collection, tag, note and added-date
    filters."""
    result = await session.scalars(
        select(LibraryRecord.id).where(
            LibraryRecord.owner_id == owner_id, *label_clauses(owner_id, query)
        )
    )
    return set(result)


async def check_filters(
    session: AsyncSession, owner_id: uuid.UUID, query: LibraryQuery
) -> str | None:
    """The name of the query's collection (``NotFoundError`` when the owner has none of
    that id); ``InvalidInputError`` for a tag no record has, naming those there are."""
    name = None
    if query.collection is not None:
        try:
            name = (await collection_info(session, owner_id, query.collection)).name
        except NotFoundError:
            raise NotFoundError(
                "That collection is not in your library (deleted, or someone else's).",
                hint="Choose one of your collections, or search without one.",
            ) from None
    if query.tag:
        key = _SPACES.sub(" ", query.tag).strip().casefold()
        held = await tag_counts(session, owner_id)
        if key not in {tag.value.casefold() for tag in held}:
            if not held:
                raise InvalidInputError(
                    f"No record in your library has a tag, so none has “{query.tag}”.",
                    hint="Tag records first (select them, then Tag), or leave the tag out.",
                )
            shown = ", ".join(f"{tag.value} ({tag.count})" for tag in held[:12])
            more = f" and {len(held) - 12} more" if len(held) > 12 else ""
            raise InvalidInputError(
                f"No record in your library has the tag “{query.tag}”. Your tags: {shown}{more}.",
                hint="Give one of these (case does not matter), or leave the tag out.",
            )
    return name


# -- what items show ---------------------------------------------------------------------------


async def with_labels(
    session: AsyncSession, owner_id: uuid.UUID, items: Sequence[LibraryItem]
) -> list[LibraryItem]:
    """``items`` with their collections, tags and note."""
    if not items:
        return []
    ids = [item.id for item in items]
    collections: dict[uuid.UUID, list[CollectionRef]] = {}
    tags: dict[uuid.UUID, list[str]] = {}
    notes: dict[uuid.UUID, str] = {}
    for start in range(0, len(ids), _CHUNK):
        part = ids[start : start + _CHUNK]
        for row in await session.execute(
            select(LibraryCollectionRecord.record_id, LibraryCollection.id, LibraryCollection.name)
            .join(LibraryCollection, LibraryCollection.id == LibraryCollectionRecord.collection_id)
            .where(
                LibraryCollectionRecord.owner_id == owner_id,
                LibraryCollectionRecord.record_id.in_(part),
            )
            .order_by(LibraryCollection.name_key)
        ):
            collections.setdefault(row.record_id, []).append(
                CollectionRef(id=row.id, name=row.name)
            )
        for tagged in await session.execute(
            select(LibraryTag.record_id, LibraryTag.name)
            .where(LibraryTag.owner_id == owner_id, LibraryTag.record_id.in_(part))
            .order_by(LibraryTag.key)
        ):
            tags.setdefault(tagged.record_id, []).append(tagged.name)
        for noted in await session.execute(
            select(LibraryNote.record_id, LibraryNote.text).where(
                LibraryNote.owner_id == owner_id, LibraryNote.record_id.in_(part)
            )
        ):
            notes[noted.record_id] = noted.text
    return [
        item.model_copy(
            update={
                "collections": collections.get(item.id, []),
                "tags": tags.get(item.id, []),
                "note": notes.get(item.id),
            }
        )
        for item in items
    ]


@dataclass
class LabelCounts:
    """How many of a set of records are in each collection, have each tag, have a note."""

    collections: list[CollectionCount] = field(default_factory=list)
    tags: list[FacetCount] = field(default_factory=list)
    with_note: int = 0


async def label_counts(
    session: AsyncSession, owner_id: uuid.UUID, records: Collection[uuid.UUID]
) -> LabelCounts:
    """The collections and tags of ``records``, with counts, and how many have a note: read
    for the whole library (a few small tables) and counted here."""
    if not records:
        return LabelCounts()
    wanted = records if isinstance(records, set | frozenset) else set(records)
    in_collection: Counter[uuid.UUID] = Counter()
    for row in await session.execute(
        select(LibraryCollectionRecord.collection_id, LibraryCollectionRecord.record_id).where(
            LibraryCollectionRecord.owner_id == owner_id
        )
    ):
        if row.record_id in wanted:
            in_collection[row.collection_id] += 1
    names = {
        row.id: row.name
        for row in await session.execute(
            select(LibraryCollection.id, LibraryCollection.name).where(
                LibraryCollection.owner_id == owner_id
            )
        )
    }
    tagged: Counter[str] = Counter()
    shown: dict[str, str] = {}
    for tag in await session.execute(
        select(LibraryTag.record_id, LibraryTag.key, LibraryTag.name).where(
            LibraryTag.owner_id == owner_id
        )
    ):
        if tag.record_id in wanted:
            tagged[tag.key] += 1
            shown.setdefault(tag.key, tag.name)
    noted = sum(
        1
        for record_id in await session.scalars(
            select(LibraryNote.record_id).where(LibraryNote.owner_id == owner_id)
        )
        if record_id in wanted
    )
    return LabelCounts(
        collections=sorted(
            (
                CollectionCount(id=collection_id, name=names[collection_id], count=count)
                for collection_id, count in in_collection.items()
                if collection_id in names
            ),
            key=lambda c: c.name.casefold(),
        ),
        tags=[FacetCount(value=shown[key], count=count) for key, count in tagged.most_common()],
        with_note=noted,
    )


# -- tags and notes ----------------------------------------------------------------------------


async def tag_counts(session: AsyncSession, owner_id: uuid.UUID) -> list[FacetCount]:
    """Every tag of the owner, most used first, with how many records have it."""
    result = await session.execute(
        select(LibraryTag.key, func.min(LibraryTag.name), func.count())
        .where(LibraryTag.owner_id == owner_id)
        .group_by(LibraryTag.key)
    )
    counted: list[tuple[str, int]] = [(row[1], row[2]) for row in result]
    return [
        FacetCount(value=name, count=count)
        for name, count in sorted(counted, key=lambda t: (-t[1], t[0].casefold()))
    ]


async def change_tags(
    session: AsyncSession,
    owner_id: uuid.UUID,
    ids: Sequence[uuid.UUID],
    *,
    add: dict[str, str],
    remove: dict[str, str],
) -> tuple[int, int, int]:
    """Adds and removes tags (by key) on the owner's records among ``ids``: ``(records,
    tags added, tags removed)``. A tag both added and removed is added."""
    records = await owned_records(session, owner_id, ids)
    removed = 0
    dropped = [key for key in remove if key not in add]
    if dropped:
        for start in range(0, len(records), _CHUNK):
            result = await session.execute(
                delete(LibraryTag).where(
                    LibraryTag.owner_id == owner_id,
                    LibraryTag.record_id.in_(records[start : start + _CHUNK]),
                    LibraryTag.key.in_(dropped),
                )
            )
            removed += getattr(result, "rowcount", 0) or 0
    added = 0
    if add:
        present: set[tuple[uuid.UUID, str]] = set()
        for start in range(0, len(records), _CHUNK):
            rows = await session.execute(
                select(LibraryTag.record_id, LibraryTag.key).where(
                    LibraryTag.record_id.in_(records[start : start + _CHUNK]),
                    LibraryTag.key.in_(list(add)),
                )
            )
            present.update((row.record_id, row.key) for row in rows)
        # A tag already used keeps the spelling it was first given.
        spelled: dict[str, str] = {
            row[0]: row[1]
            for row in await session.execute(
                select(LibraryTag.key, func.min(LibraryTag.name))
                .where(LibraryTag.owner_id == owner_id, LibraryTag.key.in_(list(add)))
                .group_by(LibraryTag.key)
            )
        }
        now = utcnow()
        new = [
            {
                "record_id": record_id,
                "key": key,
                "name": spelled.get(key, name),
                "owner_id": owner_id,
                "created_at": now,
            }
            for record_id in records
            for key, name in add.items()
            if (record_id, key) not in present
        ]
        for start in range(0, len(new), _CHUNK):
            await session.execute(insert(LibraryTag), new[start : start + _CHUNK])
        added = len(new)
    return len(records), added, removed


async def set_note(
    session: AsyncSession, owner_id: uuid.UUID, record_id: uuid.UUID, text: str
) -> None:
    """The record's note (``""``: none)."""
    await OwnerScope(session, owner_id).get(LibraryRecord, record_id, what="Library record")
    kept = note_text(text)
    row = await session.get(LibraryNote, record_id)
    if not kept:
        if row is not None:
            await session.delete(row)
        return
    if row is None:
        session.add(
            LibraryNote(record_id=record_id, owner_id=owner_id, text=kept, updated_at=utcnow())
        )
    else:
        row.text, row.updated_at = kept, utcnow()


# -- merges --------------------------------------------------------------------------------------


async def move_labels(
    session: AsyncSession, owner_id: uuid.UUID, moves: Iterable[tuple[uuid.UUID, uuid.UUID]]
) -> None:
    """Before records are merged away (``(absorbed, kept)``), the kept record joins their
    collections and gets their tags, and their notes are added to its note."""
    for absorbed, kept in moves:
        await copy_labels(session, owner_id, absorbed, kept, notes=True)


async def copy_labels(
    session: AsyncSession,
    owner_id: uuid.UUID,
    source: uuid.UUID,
    target: uuid.UUID,
    *,
    notes: bool,
) -> None:
    """``target`` joins the collections of ``source`` and gets its tags (and, with
    ``notes``, its note after its own)."""
    now = utcnow()
    collections = set(
        await session.scalars(
            select(LibraryCollectionRecord.collection_id).where(
                LibraryCollectionRecord.record_id == source
            )
        )
    )
    collections -= set(
        await session.scalars(
            select(LibraryCollectionRecord.collection_id).where(
                LibraryCollectionRecord.record_id == target
            )
        )
    )
    for collection_id in sorted(collections):
        await session.execute(
            insert(LibraryCollectionRecord),
            [
                {
                    "collection_id": collection_id,
                    "record_id": target,
                    "owner_id": owner_id,
                    "added_at": now,
                    "position": await next_position(session, collection_id),
                }
            ],
        )
    tags = {
        row.key: row.name
        for row in await session.execute(
            select(LibraryTag.key, LibraryTag.name).where(LibraryTag.record_id == source)
        )
    }
    have = set(await session.scalars(select(LibraryTag.key).where(LibraryTag.record_id == target)))
    new_tags = [
        {"record_id": target, "key": key, "name": name, "owner_id": owner_id, "created_at": now}
        for key, name in sorted(tags.items())
        if key not in have
    ]
    if new_tags:
        await session.execute(insert(LibraryTag), new_tags)
    if notes:
        note = await session.get(LibraryNote, source)
        if note is not None:
            mine = await session.get(LibraryNote, target)
            if mine is None:
                session.add(
                    LibraryNote(record_id=target, owner_id=owner_id, text=note.text, updated_at=now)
                )
            elif note.text not in mine.text:
                mine.text, mine.updated_at = f"{mine.text}\n\n{note.text}"[:MAX_NOTE], now
