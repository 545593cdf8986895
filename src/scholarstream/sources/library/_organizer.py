"""Collections, tags and notes of one person's records, as the library's callers use them:
records named by id (a selection) or by a search (every record it lists)."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import TYPE_CHECKING

from scholarstream.errors import InvalidInputError, NotFoundError
from scholarstream.sources.library import _collections as collections
from scholarstream.sources.library import _labels as labels
from scholarstream.sources.library._models import (
    CollectionChange,
    CollectionInfo,
    FacetCount,
    LibraryItem,
    LibraryQuery,
    NothingMatchedError,
    TagChange,
)

if TYPE_CHECKING:
    from scholarstream.sources.library._library import Library

MAX_NAMED = 50_000
"""Records one action may name by id."""


def _none_of(count: int) -> str:
    return "The record named is not" if count == 1 else f"None of the {count:,} records named is"


def _unknown(ids: Sequence[uuid.UUID] | None, owned: Sequence[uuid.UUID]) -> int:
    """How many of the ``ids`` named are not among the owner's records."""
    return len(set(ids)) - len(owned) if ids is not None else 0


class LibraryLabels:
    """Every call names the owner and only ever touches that owner's rows."""

    def __init__(self, library: Library) -> None:
        self.library = library
        self.database = library.database

    async def _records(
        self,
        owner_id: uuid.UUID,
        ids: Sequence[uuid.UUID] | None,
        query: LibraryQuery | None,
        action: str,
    ) -> list[uuid.UUID]:
        """The owner's records an action names: those among ``ids`` (``NotFoundError`` when
        none is), or every record ``query`` lists."""
        if ids is not None:
            if len(ids) > MAX_NAMED:
                raise InvalidInputError(
                    f"{len(ids):,} records named; one action takes at most {MAX_NAMED:,}.",
                    hint="Name them by a search instead, or in several parts.",
                )
            async with self.database.session() as session:
                owned = await collections.owned_records(session, owner_id, ids)
            if ids and not owned:
                raise NotFoundError(
                    f"{_none_of(len(set(ids)))} in your library (deleted, or someone "
                    f"else's): nothing was {action}.",
                    hint="Select records in your library, or name them by a search.",
                )
            return owned
        if query is None:
            raise InvalidInputError(
                "No records named.", hint="Select records, or give a search whose records to take."
            )
        try:
            return await self.library.record_ids(owner_id, query)
        except NothingMatchedError as exc:
            raise NothingMatchedError(
                query, related=exc.related, collection=exc.collection, action=action
            ) from None

    # -- collections ------------------------------------------------------------------------

    async def collections(self, owner_id: uuid.UUID) -> list[CollectionInfo]:
        """The owner's collections by name, with how many records each holds."""
        async with self.database.session() as session:
            return await collections.list_collections(session, owner_id)

    async def collection(self, owner_id: uuid.UUID, collection_id: uuid.UUID) -> CollectionInfo:
        async with self.database.session() as session:
            return await collections.collection_info(session, owner_id, collection_id)

    async def find_collection(self, owner_id: uuid.UUID, reference: str) -> CollectionInfo:
        """The collection a person names by its name (any case) or id."""
        async with self.database.session() as session:
            return await collections.find_collection(session, owner_id, reference)

    async def create_collection(
        self,
        owner_id: uuid.UUID,
        name: str,
        *,
        ids: Sequence[uuid.UUID] | None = None,
        query: LibraryQuery | None = None,
    ) -> CollectionChange:
        """A new collection, with the records named (``ids``, or every record ``query``
        lists; neither: empty). A name taken already (any case) is a ``ConflictError``."""
        records = (
            await self._records(owner_id, ids, query, "saved")
            if ids is not None or query is not None
            else []
        )
        async with self.database.session() as session:
            row = await collections.create_collection(session, owner_id, name)
            added, already = await collections.add_records(session, owner_id, row.id, records)
            info = await collections.collection_info(session, owner_id, row.id)
        return CollectionChange(
            collection=info, added=added, already=already, not_in_library=_unknown(ids, records)
        )

    async def rename_collection(
        self, owner_id: uuid.UUID, collection_id: uuid.UUID, name: str
    ) -> CollectionInfo:
        async with self.database.session() as session:
            return await collections.rename_collection(session, owner_id, collection_id, name)

    async def delete_collection(
        self, owner_id: uuid.UUID, collection_id: uuid.UUID
    ) -> CollectionInfo:
        """Deletes the collection, never its records; returns it as it was."""
        async with self.database.session() as session:
            return await collections.delete_collection(session, owner_id, collection_id)

    async def add_to_collection(
        self,
        owner_id: uuid.UUID,
        collection_id: uuid.UUID,
        *,
        ids: Sequence[uuid.UUID] | None = None,
        query: LibraryQuery | None = None,
    ) -> CollectionChange:
        """Puts the records named (``ids``, or every record ``query`` lists) in the
        collection; those in it already are counted, not added twice."""
        async with self.database.session() as session:
            await collections.collection_info(session, owner_id, collection_id)
        records = await self._records(owner_id, ids, query, "added to the collection")
        async with self.database.session() as session:
            added, already = await collections.add_records(
                session, owner_id, collection_id, records
            )
            info = await collections.collection_info(session, owner_id, collection_id)
        return CollectionChange(
            collection=info, added=added, already=already, not_in_library=_unknown(ids, records)
        )

    async def remove_from_collection(
        self, owner_id: uuid.UUID, collection_id: uuid.UUID, ids: Sequence[uuid.UUID]
    ) -> CollectionChange:
        """Takes the records out of the collection; they stay in the library."""
        async with self.database.session() as session:
            removed = await collections.remove_records(session, owner_id, collection_id, ids)
            info = await collections.collection_info(session, owner_id, collection_id)
        return CollectionChange(collection=info, removed=removed)

    async def collection_record_ids(
        self, owner_id: uuid.UUID, collection_id: uuid.UUID
    ) -> list[uuid.UUID]:
        """The ids of the collection's records, in the order they were added
        (``NotFoundError`` when the owner has no such collection)."""
        async with self.database.session() as session:
            await collections.collection_info(session, owner_id, collection_id)
            return list(
                await session.scalars(collections.record_ids_statement(owner_id, collection_id))
            )

    # -- tags and notes -----------------------------------------------------------------------

    async def tags(self, owner_id: uuid.UUID) -> list[FacetCount]:
        """Every tag the owner uses, most used first, with how many records have it."""
        async with self.database.session() as session:
            return await labels.tag_counts(session, owner_id)

    async def tag(
        self,
        owner_id: uuid.UUID,
        *,
        ids: Sequence[uuid.UUID] | None = None,
        query: LibraryQuery | None = None,
        add: Sequence[str] = (),
        remove: Sequence[str] = (),
    ) -> TagChange:
        """Adds and removes tags (several at once; "a, b" is two) on the records named."""
        adding, removing = labels.tag_names(add), labels.tag_names(remove)
        if not adding and not removing:
            raise InvalidInputError(
                "No tag given.", hint="Give the tags to add or to remove, e.g. “include, RCT”."
            )
        records = await self._records(owner_id, ids, query, "tagged")
        async with self.database.session() as session:
            count, added, removed = await labels.change_tags(
                session, owner_id, records, add=adding, remove=removing
            )
        return TagChange(records=count, added=added, removed=removed)

    async def set_note(self, owner_id: uuid.UUID, record_id: uuid.UUID, text: str) -> LibraryItem:
        """The record's note, replaced (``""`` deletes it); returns the record."""
        async with self.database.session() as session:
            await labels.set_note(session, owner_id, record_id, text)
        return await self.library.get(owner_id, record_id)
