"""The local library of each user: import (merging duplicates), search, read, delete,
export, and the merges: list, split, find duplicates on demand."""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import BinaryIO, TextIO

import numpy as np

from scholarstream.db import Database, OwnerScope
from scholarstream.embeddings import Embedder
from scholarstream.papers import Record
from scholarstream.settings import LimitsSettings
from scholarstream.sources.library import _exporter as exporter
from scholarstream.sources.library import _importer as importer
from scholarstream.sources.library import _merges as merges
from scholarstream.sources.library import _store as store
from scholarstream.sources.library._fusion import Fusion
from scholarstream.sources.library._index import (
    Hit,
    IndexCache,
    IndexedDoc,
    LibraryIndex,
    Meaning,
    WordScores,
    index_text,
)
from scholarstream.sources.library._models import (
    DuplicateScan,
    FacetCount,
    ImportReport,
    LibraryFacets,
    LibraryItem,
    LibraryPage,
    LibraryQuery,
    MergePage,
    SplitResult,
)
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
        if not query.text.strip():
            async with self.database.session() as session:
                total, items = await store.browse(session, owner_id, query)
            return LibraryPage(total=total, offset=query.offset, limit=query.limit, items=items)
        total, hits = await self._ranked(owner_id, query, offset=query.offset, limit=query.limit)
        async with self.database.session() as session:
            found = await store.items_by_id(session, owner_id, [hit.id for hit in hits])
        # A row deleted since the index was built is simply left out.
        items = [found[h.id].model_copy(update={"score": h.score}) for h in hits if h.id in found]
        return LibraryPage(total=total, offset=query.offset, limit=query.limit, items=items)

    async def _ranked(
        self, owner_id: uuid.UUID, query: LibraryQuery, *, offset: int, limit: int | None
    ) -> tuple[int, list[Hit]]:
        """The records matching ``query.text`` and its filters, best first (words and
        meaning); ``limit`` None: every one the first page counts in its total."""
        revision, index = await self._current(owner_id)
        words = index.words(
            query.text,
            year_from=query.year_from,
            year_to=query.year_to,
            publication_type=query.publication_type,
        )
        # Records joining by meaning alone: down to the end of the page, at least the
        # fusion's depth; for "every one", the fusion's depth, as on the first page.
        depth = offset + limit if limit is not None else self.fusion.depth
        meaning = await self._meaning(owner_id, revision, index, query.text, words, depth=depth)
        end = len(index) if limit is None else offset + limit
        return index.rank(words, offset=offset, limit=end - offset, meaning=meaning, depth=depth)

    async def facets(self, owner_id: uuid.UUID, query: LibraryQuery) -> LibraryFacets:
        """Publication types and years, with counts, of the records ``query`` finds."""
        _, index = await self._current(owner_id)
        if query.text.strip():
            _, hits = await self._ranked(owner_id, query, offset=0, limit=None)
            # The index may have been rebuilt meanwhile: count the records it still has.
            known = index.positions
            positions = np.array([known[h.id] for h in hits if h.id in known], dtype=np.intp)
        else:
            positions = index.passing(query.year_from, query.year_to, query.publication_type)
        types, years = index.facet_counts(positions)
        return LibraryFacets(
            total=len(positions),
            publication_types=[FacetCount(value=t, count=c) for t, c in types],
            years=[FacetCount(value=str(y), count=c) for y, c in years],
        )

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
        async with self.database.session() as session:
            return await store.get_item(OwnerScope(session, owner_id), record_id)

    async def find(self, owner_id: uuid.UUID, reference: str) -> LibraryItem:
        """The record a person names by its id, DOI, PMID or identifier at its source."""
        async with self.database.session() as session:
            return await store.find_item(OwnerScope(session, owner_id), reference)

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

    async def find_duplicates(self, owner_id: uuid.UUID) -> DuplicateScan:
        """Merges the copies already in the library, as an import would have."""
        async with self.database.session() as session:
            scan = await merges.find_duplicates(session, owner_id)
        if scan.merged:
            self.semantic.schedule(owner_id)
        return scan

    async def export(
        self,
        owner_id: uuid.UUID,
        format_name: str,
        out: TextIO,
        *,
        query: LibraryQuery | None = None,
        ids: Sequence[uuid.UUID] | None = None,
    ) -> int:
        """Writes records to ``out``; returns how many. ``ids``: those records (a
        selection), in that order; otherwise, with search words, every record the search
        finds, best first; otherwise every record passing the query's filters."""
        if ids is None and query is not None and query.text.strip():
            _, hits = await self._ranked(owner_id, query, offset=0, limit=None)
            ids = [hit.id for hit in hits]
        if ids is not None:
            ids = list(dict.fromkeys(ids))  # each record once, in the order first given
            return await exporter.export_selection(self.database, owner_id, format_name, out, ids)
        return await exporter.export_records(self.database, owner_id, format_name, out, query=query)
