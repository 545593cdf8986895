"""Collections: named sets of a person's records (a record may be in many). Renaming or
deleting one never touches its records."""

from __future__ import annotations

import re
import uuid
from collections.abc import Sequence
from typing import Any

from sqlalchemy import Select, delete, func, insert, select
from sqlalchemy.ext.asyncio import AsyncSession

from scholarstream.db import OwnerScope, utcnow
from scholarstream.db.tables import LibraryCollection, LibraryCollectionRecord, LibraryRecord
from scholarstream.errors import ConflictError, InvalidInputError, NotFoundError
from scholarstream.sources.library._models import CollectionInfo

MAX_NAME = 200
_CHUNK = 500
_SPACES = re.compile(r"\s+")


def collection_name(text: str) -> tuple[str, str]:
    """The name as shown (spaces collapsed) and its key (case-folded): two collections never
    differ only by case."""
    name = _SPACES.sub(" ", text).strip()
    if not name:
        raise InvalidInputError(
            "A collection needs a name.", hint="Give it a few words, e.g. “Included studies”."
        )
    if len(name) > MAX_NAME:
        raise InvalidInputError(
            f"A collection's name may be {MAX_NAME} characters long; this one has {len(name)}.",
            hint="Give it a shorter name.",
        )
    return name, name.casefold()


# -- collections -------------------------------------------------------------------------------


async def _collection(
    session: AsyncSession, owner_id: uuid.UUID, collection_id: uuid.UUID
) -> LibraryCollection:
    return await OwnerScope(session, owner_id).get(
        LibraryCollection, collection_id, what="Collection"
    )


async def _info(session: AsyncSession, row: LibraryCollection) -> CollectionInfo:
    count = await session.scalar(
        select(func.count())
        .select_from(LibraryCollectionRecord)
        .where(LibraryCollectionRecord.collection_id == row.id)
    )
    return CollectionInfo(
        id=row.id,
        name=row.name,
        records=count or 0,
        created_at=row.created_at,
        updated_at=row.updated_at,
    )


async def collection_info(
    session: AsyncSession, owner_id: uuid.UUID, collection_id: uuid.UUID
) -> CollectionInfo:
    return await _info(session, await _collection(session, owner_id, collection_id))


async def list_collections(session: AsyncSession, owner_id: uuid.UUID) -> list[CollectionInfo]:
    """The owner's collections by name, with how many records each holds."""
    counts: dict[uuid.UUID, int] = {
        row[0]: row[1]
        for row in await session.execute(
            select(LibraryCollectionRecord.collection_id, func.count())
            .where(LibraryCollectionRecord.owner_id == owner_id)
            .group_by(LibraryCollectionRecord.collection_id)
        )
    }
    rows = await session.scalars(
        select(LibraryCollection)
        .where(LibraryCollection.owner_id == owner_id)
        .order_by(LibraryCollection.name_key)
    )
    return [
        CollectionInfo(
            id=row.id,
            name=row.name,
            records=counts.get(row.id, 0),
            created_at=row.created_at,
            updated_at=row.updated_at,
        )
        for row in rows
    ]


async def _taken(session: AsyncSession, owner_id: uuid.UUID, key: str) -> LibraryCollection | None:
    row: LibraryCollection | None = await session.scalar(
        select(LibraryCollection).where(
            LibraryCollection.owner_id == owner_id, LibraryCollection.name_key == key
        )
    )
    return row


async def create_collection(
    session: AsyncSession, owner_id: uuid.UUID, name: str
) -> LibraryCollection:
    shown, key = collection_name(name)
    if await _taken(session, owner_id, key) is not None:
        raise ConflictError(
            f"You already have a collection named “{shown}”.",
            hint="Add the records to it, or give the new collection another name.",
        )
    now = utcnow()
    row = LibraryCollection(
        id=uuid.uuid4(), owner_id=owner_id, name=shown, name_key=key, created_at=now, updated_at=now
    )
    session.add(row)
    await session.flush()
    return row


async def rename_collection(
    session: AsyncSession, owner_id: uuid.UUID, collection_id: uuid.UUID, name: str
) -> CollectionInfo:
    row = await _collection(session, owner_id, collection_id)
    shown, key = collection_name(name)
    other = await _taken(session, owner_id, key)
    if other is not None and other.id != row.id:
        raise ConflictError(
            f"You already have a collection named “{shown}”.",
            hint="Choose another name, or delete that collection first.",
        )
    row.name, row.name_key, row.updated_at = shown, key, utcnow()
    await session.flush()
    return await _info(session, row)


async def delete_collection(
    session: AsyncSession, owner_id: uuid.UUID, collection_id: uuid.UUID
) -> CollectionInfo:
    """The collection goes; its records stay in the library."""
    row = await _collection(session, owner_id, collection_id)
    info = await _info(session, row)
    await session.execute(
        delete(LibraryCollectionRecord).where(LibraryCollectionRecord.collection_id == row.id)
    )
    await session.delete(row)
    return info


async def find_collection(
    session: AsyncSession, owner_id: uuid.UUID, reference: str
) -> CollectionInfo:
    """The collection a person names: by its name (case does not matter) or its id."""
    text = reference.strip()
    try:
        return await collection_info(session, owner_id, uuid.UUID(text))
    except ValueError:
        pass
    row = await _taken(session, owner_id, _SPACES.sub(" ", text).casefold())
    if row is None:
        names = [info.name for info in await list_collections(session, owner_id)]
        known = f" Your collections: {', '.join(f'“{n}”' for n in names[:12])}." if names else ""
        raise NotFoundError(
            f"You have no collection named “{text}”.{known}",
            hint="Give one of these names (case does not matter)."
            if names
            else "Save some records as a collection first.",
        )
    return await _info(session, row)


async def owned_records(
    session: AsyncSession, owner_id: uuid.UUID, ids: Sequence[uuid.UUID]
) -> list[uuid.UUID]:
    """``ids`` that are records of the owner, in their order, each once."""
    unique = list(dict.fromkeys(ids))
    found: set[uuid.UUID] = set()
    for start in range(0, len(unique), _CHUNK):
        found.update(
            await session.scalars(
                select(LibraryRecord.id).where(
                    LibraryRecord.owner_id == owner_id,
                    LibraryRecord.id.in_(unique[start : start + _CHUNK]),
                )
            )
        )
    return [record_id for record_id in unique if record_id in found]


async def add_records(
    session: AsyncSession, owner_id: uuid.UUID, collection_id: uuid.UUID, ids: Sequence[uuid.UUID]
) -> tuple[int, int]:
    """Puts the owner's records among ``ids`` in the collection: ``(added, already in)``."""
    row = await _collection(session, owner_id, collection_id)
    records = await owned_records(session, owner_id, ids)
    present: set[uuid.UUID] = set()
    for start in range(0, len(records), _CHUNK):
        present.update(
            await session.scalars(
                select(LibraryCollectionRecord.record_id).where(
                    LibraryCollectionRecord.collection_id == row.id,
                    LibraryCollectionRecord.record_id.in_(records[start : start + _CHUNK]),
                )
            )
        )
    now = utcnow()
    first = await next_position(session, row.id)
    new = [
        {
            "collection_id": row.id,
            "record_id": record_id,
            "owner_id": owner_id,
            "added_at": now,
            "position": first + n,
        }
        for n, record_id in enumerate(r for r in records if r not in present)
    ]
    for start in range(0, len(new), _CHUNK):
        await session.execute(insert(LibraryCollectionRecord), new[start : start + _CHUNK])
    if new:
        row.updated_at = now
    return len(new), len(present)


async def next_position(session: AsyncSession, collection_id: uuid.UUID) -> int:
    """The position the next record put in the collection takes."""
    last = await session.scalar(
        select(func.max(LibraryCollectionRecord.position)).where(
            LibraryCollectionRecord.collection_id == collection_id
        )
    )
    return 0 if last is None else last + 1


async def remove_records(
    session: AsyncSession, owner_id: uuid.UUID, collection_id: uuid.UUID, ids: Sequence[uuid.UUID]
) -> int:
    """Takes ``ids`` out of the collection (they stay in the library); how many were in it."""
    row = await _collection(session, owner_id, collection_id)
    unique = list(dict.fromkeys(ids))
    removed = 0
    for start in range(0, len(unique), _CHUNK):
        result = await session.execute(
            delete(LibraryCollectionRecord).where(
                LibraryCollectionRecord.collection_id == row.id,
                LibraryCollectionRecord.record_id.in_(unique[start : start + _CHUNK]),
            )
        )
        removed += getattr(result, "rowcount", 0) or 0
    if removed:
        row.updated_at = utcnow()
    return removed


def record_ids_statement(owner_id: uuid.UUID, collection_id: uuid.UUID) -> Select[Any]:
    """The collection's records, in the order they were added."""
    return (
        select(LibraryCollectionRecord.record_id)
        .where(
            LibraryCollectionRecord.owner_id == owner_id,
            LibraryCollectionRecord.collection_id == collection_id,
        )
        .order_by(LibraryCollectionRecord.position, LibraryCollectionRecord.record_id)
    )
