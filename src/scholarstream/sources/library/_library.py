"""The local library of each user: import (merging duplicates), search, read, delete,
export, and the merges: list, split, find duplicates on demand."""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, TextIO

from rapidfuzz import fuzz

from scholarstream.db import Database, OwnerScope
from scholarstream.embeddings import Embedder
from scholarstream.errors import InvalidInputError, NotFoundError
from scholarstream.papers import Record
from scholarstream.settings import LimitsSettings
from scholarstream.sources.library import _exporter as exporter
from scholarstream.sources.library import _importer as importer
from scholarstream.sources.library import _labels as labels
from scholarstream.sources.library import _merges as merges
from scholarstream.sources.library import _store as store
from scholarstream.sources.library._exporter import Export
from scholarstream.sources.library._fusion import Fusion
from scholarstream.sources.library._index import (
    IndexCache,
    IndexedDoc,
    LibraryIndex,
    Meaning,
    Ranked,
    WordScores,
    index_text,
)
from scholarstream.sources.library._merge_ids import find_merge
from scholarstream.sources.library._models import (
    DuplicateScan,
    FacetCount,
    ImportReport,
    LibraryFacets,
    LibraryItem,
    LibraryMergeInfo,
    LibraryPage,
    LibraryQuery,
    MergePage,
    NothingMatchedError,
    SplitResult,
)
from scholarstream.sources.library._organizer import LibraryLabels
from scholarstream.sources.library._semantic import SemanticIndexer, SemanticStatus

log = logging.getLogger(__name__)


class Library:
    """Shared by the whole process; every call names the owner, and only ever touches
    that owner's rows."""

    def __init__(
        self,
        database: Database,
        cache: IndexCache | None = None,
        *,
        limits: LimitsSettings | None = None,
        embedder: Embedder | None = None,
        fusion: Fusion | None = None,
        embedding_batch: int = 32,
    ) -> None:
        self.database = database
        self.indexes = cache or IndexCache()
        self.limits = limits or LimitsSettings()
        """What one imported file may make the process hold."""
        self.semantic = SemanticIndexer(
            database, embedder, batch_size=embedding_batch, cache=self.indexes
        )
        self.fusion = fusion or Fusion()
        self.labels = LibraryLabels(self)
        """Collections, tags and notes."""

    async def import_file(
        self,
        owner_id: uuid.UUID,
        path: Path,
        *,
        format_name: str | None = None,
        progress: importer.Progress | None = None,
    ) -> ImportReport:
        report = await importer.import_path(
            self.database,
            owner_id,
            path,
            limits=self.limits,
            format_name=format_name,
            progress=progress,
        )
        self.semantic.schedule(owner_id)
        return report

    async def import_stream(
        self,
        owner_id: uuid.UUID,
        stream: BinaryIO,
        filename: str,
        *,
        format_name: str | None = None,
        progress: importer.Progress | None = None,
    ) -> ImportReport:
        report = await importer.import_stream(
            self.database,
            owner_id,
            stream,
            filename,
            limits=self.limits,
            format_name=format_name,
            progress=progress,
        )
        self.semantic.schedule(owner_id)
        return report

    async def save_records(
        self, owner_id: uuid.UUID, records: Sequence[Record], *, origin: str
    ) -> ImportReport:
        """Saves ``records`` found elsewhere (a research's references, say) to the library,
        as an import named ``origin``: records already there are counted, not added, and
        copies of a library record are merged into it."""
        report = await importer.import_items(
            self.database, owner_id, iter(records), file=origin, format_name="records"
        )
        self.semantic.schedule(owner_id)
        return report

    async def search(self, owner_id: uuid.UUID, query: LibraryQuery) -> LibraryPage:
        """Without words, the records passing the filters, newest first. With words, the
        records that have them, best first, then (``query.related``) those related by
        meaning alone, each item marked with its ``match``. Every item carries its
        collections, tags and note."""
        if not query.has_words:
            await self._check(owner_id, query, await self.index(owner_id))
            async with self.database.session() as session:
                total, items = await store.browse(session, owner_id, query)
                items = await labels.with_labels(session, owner_id, items)
            return LibraryPage(
                total=total, matching=total, offset=query.offset, limit=query.limit, items=items
            )
        index, ranked, _ = await self._ranked(
            owner_id, query, offset=query.offset, limit=query.limit
        )
        hits = index.hits(ranked, offset=query.offset, limit=query.limit)
        async with self.database.session() as session:
            found = await store.items_by_id(session, owner_id, [hit.id for hit in hits])
            # A row deleted since the index was built is simply left out.
            items = await labels.with_labels(
                session,
                owner_id,
                [
                    found[h.id].model_copy(
                        update={"score": h.score, "match": "meaning" if h.by_meaning else "words"}
                    )
                    for h in hits
                    if h.id in found
                ],
            )
        return LibraryPage(
            total=len(ranked),
            matching=ranked.matching,
            related=ranked.related,
            offset=query.offset,
            limit=query.limit,
            items=items,
        )

    async def _ranked(
        self, owner_id: uuid.UUID, query: LibraryQuery, *, offset: int, limit: int | None
    ) -> tuple[LibraryIndex, Ranked, Checked]:
        """The records ``query`` lists, best first: those with its words (ranked by words
        and meaning), then those related by meaning alone; ``limit`` None: every one the
        first page counts in its total."""
        revision, index = await self._current(owner_id)
        checked = await self._check(owner_id, query, index)
        words = index.words(
            query.text,
            year_from=query.year_from,
            year_to=query.year_to,
            publication_type=query.publication_type,
            only=None if checked.only is None else index.positions_of(checked.only),
        )
        # Records joining by meaning alone: down to the end of the page, at least the
        # fusion's depth; for "every one", the fusion's depth, as on the first page.
        depth = offset + limit if limit is not None else self.fusion.depth
        meaning = await self._meaning(owner_id, revision, index, query.text, words, depth=depth)
        ranked = index.ranked(words, meaning=meaning, depth=depth, related=query.related)
        return index, ranked, checked

    async def _check(
        self, owner_id: uuid.UUID, query: LibraryQuery, index: LibraryIndex
    ) -> Checked:
        """The query's filters checked against the library (a type, tag or collection it
        does not have says what it has), and the records its collection, tag, note and
        added-date filters leave."""
        check_type(index, query)
        if not (query.has_labels or query.has_added_dates):
            return Checked()
        async with self.database.session() as session:
            name = await labels.check_filters(session, owner_id, query)
            only = await labels.passing(session, owner_id, query)
        return Checked(collection=name, only=only)

    async def facets(self, owner_id: uuid.UUID, query: LibraryQuery) -> LibraryFacets:
        """Publication types, years, collections and tags, with counts, of the records
        ``query`` lists, and how many of them have a note."""
        if query.has_words:
            index, ranked, _ = await self._ranked(owner_id, query, offset=0, limit=None)
            positions = ranked.order
        else:
            index = await self.index(owner_id)
            checked = await self._check(owner_id, query, index)
            positions = index.passing(
                query.year_from,
                query.year_to,
                query.publication_type,
                only=None if checked.only is None else index.positions_of(checked.only),
            )
        types, years = index.facet_counts(positions)
        async with self.database.session() as session:
            counts = await labels.label_counts(
                session, owner_id, {index.ids[int(p)] for p in positions}
            )
        return LibraryFacets(
            total=len(positions),
            publication_types=[FacetCount(value=t, count=c) for t, c in types],
            years=[FacetCount(value=str(y), count=c) for y, c in years],
            collections=counts.collections,
            tags=counts.tags,
            with_note=counts.with_note,
        )

    async def record_ids(self, owner_id: uuid.UUID, query: LibraryQuery) -> list[uuid.UUID]:
        """Every record ``query`` lists, in its order: with words, those that have them,
        best first (then, with ``query.related``, those related by meaning); without,
        those passing its filters, newest first. ``NothingMatchedError`` when none."""
        if query.has_words:
            every = query.model_copy(update={"related": True})
            index, ranked, checked = await self._ranked(owner_id, every, offset=0, limit=None)
            listed = ranked.order if query.related else ranked.order[: ranked.matching]
            if not len(listed):
                raise NothingMatchedError(
                    query, related=ranked.related, collection=checked.collection
                )
            return [index.ids[int(position)] for position in listed]
        checked = await self._check(owner_id, query, await self.index(owner_id))
        async with self.database.session() as session:
            ids = await store.browse_ids(session, owner_id, query)
        if not ids:
            raise NothingMatchedError(query, collection=checked.collection)
        return ids

    async def index(self, owner_id: uuid.UUID) -> LibraryIndex:
        """The owner's current index, rebuilt when the library changed since the last one."""
        return (await self._current(owner_id))[1]

    async def _current(self, owner_id: uuid.UUID) -> tuple[store.Revision, LibraryIndex]:
        async with self.database.session() as session:
            revision = await store.revision(session, owner_id)
        index = self.indexes.cached(owner_id, revision)
        if index is not None:
            return revision, index
        async with self.indexes.lock(owner_id):
            index = self.indexes.cached(owner_id, revision)
            if index is not None:
                return revision, index
            docs: list[IndexedDoc] = []
            async with self.database.session() as session:
                async for rows in store.iter_rows(session, owner_id):
                    docs.extend(
                        IndexedDoc(
                            id=row.id,
                            text=index_text(row.data),
                            year=row.year,
                            types=row.publication_types,
                        )
                        for row in rows
                    )
            return revision, await self.indexes.build(owner_id, revision, docs)

    async def start(self) -> None:
        """Decides where vectors are ranked (pgvector or in process) before the first
        search needs it."""
        await self.semantic.ranking()

    async def _meaning(
        self,
        owner_id: uuid.UUID,
        revision: store.Revision,
        index: LibraryIndex,
        text: str,
        words: WordScores,
        *,
        depth: int,
    ) -> Meaning | None:
        """Each record's closeness to the query, or None (words only) while no record has
        a vector or the model cannot run. Starts building the vectors still missing."""
        embedder = self.semantic.embedder
        ranking = await self.semantic.ranking()
        if embedder is None or ranking is None or not self.semantic.available:
            return None
        embedded = await self.semantic.embedded(owner_id)
        if embedded < revision.count:
            self.semantic.schedule(owner_id)
        if embedded == 0:
            return None
        try:
            query = await asyncio.to_thread(embedder.embed_query, text)
        except Exception:
            log.exception("the embedding model failed on a query; ranking by words alone")
            return None
        similarity = await ranking.similarity(
            owner_id,
            index,
            revision,
            query,
            candidates=words.best_first,
            depth=max(depth, self.fusion.depth),
            embedded=embedded,
        )
        return Meaning(similarity=similarity, fusion=self.fusion)

    async def semantic_status(self, owner_id: uuid.UUID) -> SemanticStatus:
        return await self.semantic.status(owner_id)

    async def get(self, owner_id: uuid.UUID, record_id: uuid.UUID) -> LibraryItem:
        """The record with its collections, tags and note."""
        async with self.database.session() as session:
            item = await store.get_item(OwnerScope(session, owner_id), record_id)
            return (await labels.with_labels(session, owner_id, [item]))[0]

    async def find(self, owner_id: uuid.UUID, reference: str) -> LibraryItem:
        """The record a person names by its id, DOI, PMID or identifier at its source."""
        async with self.database.session() as session:
            item = await store.find_item(OwnerScope(session, owner_id), reference)
            return (await labels.with_labels(session, owner_id, [item]))[0]

    async def collection_record_ids(
        self, owner_id: uuid.UUID, collection_id: uuid.UUID
    ) -> list[uuid.UUID]:
        """The ids of a collection's records, in the order they were added (what a
        screening project started from a collection screens)."""
        return await self.labels.collection_record_ids(owner_id, collection_id)

    async def get_many(
        self, owner_id: uuid.UUID, record_ids: Sequence[uuid.UUID]
    ) -> list[LibraryItem]:
        async with self.database.session() as session:
            found = await store.items_by_id(session, owner_id, record_ids)
        return [found[i] for i in record_ids if i in found]

    async def delete(self, owner_id: uuid.UUID, record_id: uuid.UUID) -> None:
        async with self.database.session() as session:
            await store.delete_record(OwnerScope(session, owner_id), record_id)

    async def merges(self, owner_id: uuid.UUID, *, offset: int = 0, limit: int = 50) -> MergePage:
        """The duplicates merged into other records (newest first), each one splittable."""
        async with self.database.session() as session:
            return await merges.list_merges(session, owner_id, offset=offset, limit=limit)

    async def split(self, owner_id: uuid.UUID, merge_id: uuid.UUID) -> SplitResult:
        """Undoes one merge: the absorbed record is its own record again, what it brought
        is removed from the other, and the two are never merged again."""
        async with self.database.session() as session:
            result = await merges.split(OwnerScope(session, owner_id), merge_id)
        self.semantic.schedule(owner_id)
        return result

    async def merge(
        self, owner_id: uuid.UUID, kept_id: uuid.UUID, copy_ids: Sequence[uuid.UUID]
    ) -> list[LibraryMergeInfo]:
        """Merges the records ``copy_ids`` into ``kept_id`` by hand (each merge listed with
        the others and splittable)."""
        async with self.database.session() as session:
            made = await merges.merge_by_hand(OwnerScope(session, owner_id), kept_id, copy_ids)
        self.semantic.schedule(owner_id)
        return made

    async def merged_copies(
        self, owner_id: uuid.UUID, record_ids: Sequence[uuid.UUID]
    ) -> dict[str | None, int]:
        """How many copies were merged into the records ``record_ids`` (and not split off
        since), by the file each copy came from (None: none): the duplicates a review of
        these records had removed."""
        async with self.database.session() as session:
            return dict(await merges.merged_copies(session, owner_id, record_ids))

    async def find_merge(self, owner_id: uuid.UUID, reference: str) -> uuid.UUID:
        """The id of the merge ``reference`` names: its id, or a unique start of it (the
        short id the merges are listed by)."""
        async with self.database.session() as session:
            return await find_merge(session, owner_id, reference)

    async def find_duplicates(self, owner_id: uuid.UUID, *, dry_run: bool = False) -> DuplicateScan:
        """Merges the copies already in the library, as an import would have; ``dry_run``:
        lists them (each group with the evidence) and merges nothing."""
        async with self.database.session() as session:
            scan = await merges.find_duplicates(session, owner_id, dry_run=dry_run)
        if scan.merged:
            self.semantic.schedule(owner_id)
        return scan

    async def prepare_export(
        self,
        owner_id: uuid.UUID,
        *,
        query: LibraryQuery | None = None,
        ids: Sequence[uuid.UUID] | None = None,
    ) -> Export:
        """What an export will write, counted before a byte is: ``ids`` (a selection) in
        that order; otherwise, with search words, the records that have them, best first
        (and those related by meaning when ``query.related``); otherwise every record
        passing the query's filters. ``NotFoundError`` (``NothingMatchedError`` for a
        query) when that is no record at all: nothing is written, and an existing file
        is left as it is."""
        if ids is None and query is not None and query.has_words:
            ids = await self.record_ids(owner_id, query)
        if ids is not None:
            ids = list(dict.fromkeys(ids))  # each record once, in the order first given
            async with self.database.session() as session:
                count = await store.count_ids(session, owner_id, ids)
            if not count:
                raise NotFoundError(
                    "None of the records named is in your library (deleted since?): nothing "
                    "was exported.",
                    hint="Search the library again and select the records to export.",
                )
            return exporter.Export(self.database, owner_id, count=count, ids=ids)
        checked = Checked()
        if query is not None:
            checked = await self._check(owner_id, query, await self.index(owner_id))
        async with self.database.session() as session:
            count = await store.count(session, owner_id, query)
            if not count and query is not None and await store.count(session, owner_id, None):
                raise NothingMatchedError(query, collection=checked.collection)
        if not count:
            raise NotFoundError(
                "Your library is empty: nothing was exported.",
                hint="Import a reference file first (scholarstream import FILE, or the "
                "Library page).",
            )
        return exporter.Export(self.database, owner_id, count=count, query=query)

    async def export(
        self,
        owner_id: uuid.UUID,
        format_name: str,
        out: TextIO,
        *,
        query: LibraryQuery | None = None,
        ids: Sequence[uuid.UUID] | None = None,
    ) -> int:
        """Writes the records ``prepare_export`` names to ``out``; returns how many."""
        prepared = await self.prepare_export(owner_id, query=query, ids=ids)
        return await prepared.write(format_name, out)


CLOSE_TYPE = 70
"""How alike (0-100) a type must be to the one asked for to be named first."""


@dataclass(frozen=True)
class Checked:
    """A query's filters, checked: its collection's name, and the records its collection,
    tag and note filters leave (None: it has none of those)."""

    collection: str | None = None
    only: set[uuid.UUID] | None = None


def check_type(index: LibraryIndex, query: LibraryQuery) -> None:
    """``InvalidInputError`` for a publication type no record of the library has (a typo
    would otherwise just find nothing), naming the types it does have."""
    wanted = (query.publication_type or "").strip().lower()
    if not wanted:
        return
    held = index.type_counts()
    if wanted in held:
        return
    if not held:
        raise InvalidInputError(
            f"No record in your library has a publication type, so none is "
            f"“{query.publication_type}”.",
            hint="Leave the publication type out.",
        )
    # The types most like the one given first (a typo's fix), then the most frequent.
    likeness = {name: fuzz.ratio(wanted, name) for name in held}
    listed = sorted(held, key=lambda name: (likeness[name] < CLOSE_TYPE, -held[name], name))
    shown = ", ".join(f"{name[:1].upper()}{name[1:]} ({held[name]})" for name in listed[:12])
    more = f" and {len(listed) - 12} more" if len(listed) > 12 else ""
    raise InvalidInputError(
        f"No record in your library has the publication type “{query.publication_type}”. "
        f"The types it holds: {shown}{more}.",
        hint="Give one of these (case does not matter), or leave the type out.",
    )
