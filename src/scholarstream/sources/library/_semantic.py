"""The library's semantic index: dense vectors of each record's passages, built in the
background after import, stored in the application database, and read back for hybrid
search.

Search never waits for it: records without a vector yet are found by their words alone.
"""

from __future__ import annotations

import asyncio
import logging
import re
import uuid
from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import BaseModel
from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession

from scholarstream.db import Database
from scholarstream.db.tables import LibraryEmbedding, LibraryRecord
from scholarstream.embeddings import Embedder, Vectors, pack
from scholarstream.sources.library._index import IndexCache
from scholarstream.sources.library._vectors import VectorRanking, choose_vector_ranking

log = logging.getLogger(__name__)

PASSAGE_WORDS = 90
"""Words of abstract per passage: the model was trained on short texts (128 word pieces),
and a record scored by its best passage ranks better than by one vector of the whole
abstract (SciFact train nDCG@10: 0.745 hybrid against 0.735, ``bench/retrieval.py``)."""
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


def embedding_passages(data: Mapping[str, Any]) -> list[str]:
    """What the model reads of a record: its title, then each passage of its abstract (or
    a trial's summary) after the title, whole sentences of about ``PASSAGE_WORDS`` words."""
    title = data.get("title", "")
    body = data.get("abstract") or data.get("summary") or ""
    passages: list[str] = []
    current: list[str] = []
    words = 0
    for sentence in _SENTENCE_END.split(body.strip()):
        count = len(sentence.split())
        if current and words + count > PASSAGE_WORDS:
            passages.append(" ".join(current))
            current, words = [], 0
        if count:
            current.append(sentence)
            words += count
    if current:
        passages.append(" ".join(current))
    return [f"{title}. {passage}" for passage in passages] or [title]


class SemanticStatus(BaseModel):
    """How far one user's semantic index is built."""

    available: bool
    model: str | None = None
    embedded: int = 0
    total: int = 0
    building: bool = False
    problem: str | None = None
    ranking: str | None = None
    """Where vectors are compared with a query: "pgvector" or "in process"."""
    ranking_note: str | None = None
    """Why "in process" on PostgreSQL, in plain words."""

    @property
    def complete(self) -> bool:
        return self.available and self.embedded >= self.total


async def _counts(session: AsyncSession, owner_id: uuid.UUID, model: str) -> tuple[int, int]:
    total = await session.scalar(
        select(func.count()).select_from(LibraryRecord).where(LibraryRecord.owner_id == owner_id)
    )
    return await _embedded(session, owner_id, model), total or 0


async def _embedded(session: AsyncSession, owner_id: uuid.UUID, model: str) -> int:
    """Records with vectors (every record has a passage 0)."""
    count = await session.scalar(
        select(func.count())
        .select_from(LibraryEmbedding)
        .where(
            LibraryEmbedding.owner_id == owner_id,
            LibraryEmbedding.model == model,
            LibraryEmbedding.passage == 0,
        )
    )
    return count or 0


async def _missing(
    session: AsyncSession, owner_id: uuid.UUID, model: str, limit: int
) -> list[tuple[uuid.UUID, list[str]]]:
    """Records of the owner with no vectors from ``model`` yet (and their passages), in id
    order."""
    embedded = select(LibraryEmbedding.record_id).where(
        LibraryEmbedding.owner_id == owner_id,
        LibraryEmbedding.model == model,
        LibraryEmbedding.passage == 0,
    )
    rows = await session.execute(
        select(LibraryRecord.id, LibraryRecord.data)
        .where(LibraryRecord.owner_id == owner_id, LibraryRecord.id.not_in(embedded))
        .order_by(LibraryRecord.id)
        .limit(limit)
    )
    return [(row.id, embedding_passages(row.data)) for row in rows]


class SemanticIndexer:
    """Embeds each user's records that have no vector yet, one background task per user."""

    def __init__(
        self,
        database: Database,
        embedder: Embedder | None,
        *,
        batch_size: int = 32,
        cache: IndexCache | None = None,
    ) -> None:
        self.database = database
        self.embedder = embedder
        self.batch_size = batch_size
        self.cache = cache or IndexCache()
        self._ranking: VectorRanking | None = None
        self._ranking_lock = asyncio.Lock()
        self._tasks: dict[uuid.UUID, asyncio.Task[int]] = {}
        self._locks: dict[uuid.UUID, asyncio.Lock] = {}
        self._problem: str | None = None

    @property
    def available(self) -> bool:
        return self.embedder is not None and self._problem is None

    async def ranking(self) -> VectorRanking | None:
        """Where vectors are ranked (pgvector or in process), decided on first use."""
        embedder = self.embedder
        if embedder is None:
            return None
        async with self._ranking_lock:
            if self._ranking is None:
                self._ranking = await choose_vector_ranking(
                    self.database, self.cache, embedder.name, embedder.dimension
                )
        return self._ranking

    def building(self, owner_id: uuid.UUID) -> bool:
        task = self._tasks.get(owner_id)
        return task is not None and not task.done()

    def schedule(self, owner_id: uuid.UUID) -> None:
        """Starts building the owner's missing vectors unless that is already under way."""
        if not self.available or self.building(owner_id):
            return
        task = asyncio.get_running_loop().create_task(self.build(owner_id))
        self._tasks[owner_id] = task
        task.add_done_callback(self._finished)

    def _finished(self, task: asyncio.Task[int]) -> None:
        if not task.cancelled() and (error := task.exception()) is not None:
            log.error("building the semantic index failed", exc_info=error)

    async def wait(self, owner_id: uuid.UUID) -> None:
        """Until the owner's background build (if any) has ended."""
        task = self._tasks.get(owner_id)
        if task is not None:
            await asyncio.wait([task])

    async def close(self) -> None:
        for task in self._tasks.values():
            task.cancel()
        await asyncio.gather(*self._tasks.values(), return_exceptions=True)
        self._tasks.clear()

    async def build(self, owner_id: uuid.UUID) -> int:
        """Embeds every record of the owner that has none yet; returns how many it embedded.

        Each batch is committed on its own, so an interrupted build keeps what it did.
        """
        async with self._locks.setdefault(owner_id, asyncio.Lock()):
            return await self._build(owner_id)

    async def _build(self, owner_id: uuid.UUID) -> int:
        embedder = self.embedder
        ranking = await self.ranking()
        if embedder is None or ranking is None or self._problem is not None:
            return 0
        done = 0
        while True:
            async with self.database.session() as session:
                batch = await _missing(session, owner_id, embedder.name, self.batch_size)
            if not batch:
                break
            texts = [text for _, passages in batch for text in passages]
            try:
                vectors = await asyncio.to_thread(embedder.embed_documents, texts)
            except Exception:
                self._problem = (
                    "The embedding model could not be run on this machine, so the library "
                    "is searched by its words only."
                )
                log.exception("the embedding model failed")
                break
            await self._save(owner_id, embedder.name, batch, vectors)
            await ranking.stored(owner_id)
            done += len(batch)
        return done

    async def _save(
        self,
        owner_id: uuid.UUID,
        model: str,
        batch: Sequence[tuple[uuid.UUID, list[str]]],
        vectors: Vectors,
    ) -> None:
        ids = [record_id for record_id, _ in batch]
        async with self.database.session() as session:
            # A record deleted while its batch was embedded is skipped, and so is one that
            # another process (the server beside a CLI import) embedded meanwhile.
            alive = set(
                await session.scalars(
                    select(LibraryRecord.id).where(
                        LibraryRecord.owner_id == owner_id, LibraryRecord.id.in_(list(ids))
                    )
                )
            )
            done = set(
                await session.scalars(
                    select(LibraryEmbedding.record_id).where(
                        LibraryEmbedding.model == model, LibraryEmbedding.record_id.in_(list(ids))
                    )
                )
            )
            row = 0
            for record_id, passages in batch:
                if record_id in alive and record_id not in done:
                    session.add_all(
                        LibraryEmbedding(
                            record_id=record_id,
                            model=model,
                            passage=number,
                            owner_id=owner_id,
                            vector=pack(vectors[row + number]),
                        )
                        for number in range(len(passages))
                    )
                row += len(passages)

    async def embedded(self, owner_id: uuid.UUID) -> int:
        """How many of the owner's records have vectors from the current model."""
        if self.embedder is None:
            return 0
        async with self.database.session() as session:
            return await _embedded(session, owner_id, self.embedder.name)

    async def status(self, owner_id: uuid.UUID) -> SemanticStatus:
        if self.embedder is None:
            return SemanticStatus(
                available=False,
                problem="Semantic search is turned off in the settings; the library is "
                "searched by its words only.",
            )
        ranking = await self.ranking()
        async with self.database.session() as session:
            embedded, total = await _counts(session, owner_id, self.embedder.name)
        return SemanticStatus(
            available=self._problem is None,
            model=self.embedder.name,
            embedded=embedded,
            total=total,
            building=self.building(owner_id),
            problem=self._problem,
            ranking=ranking.name if ranking else None,
            ranking_note=ranking.note if ranking else None,
        )
