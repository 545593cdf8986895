"""Where the library's passage vectors are compared with a query: in PostgreSQL, by the
pgvector extension, when the server has it; otherwise in this process (numpy, one matrix
product per query), on SQLite and on a PostgreSQL server without pgvector.

Which one is decided once per process, the first time the library needs it (the server
does it at start-up). Either way the float16 vector stays in ``library_embeddings.vector``,
so nothing is lost when pgvector comes or goes; with pgvector each row also gets an
``embedding`` column of the extension's type, filled from it, and an HNSW index per model.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import uuid
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt
from sqlalchemy import Row, bindparam, select, text, tuple_
from sqlalchemy.dialects.postgresql import ARRAY
from sqlalchemy.exc import DBAPIError
from sqlalchemy.ext.asyncio import AsyncConnection
from sqlalchemy.types import Integer, String, Uuid

from scholarstream.db import Database
from scholarstream.db.tables import LibraryEmbedding
from scholarstream.embeddings import Vectors, unpack_rows
from scholarstream.sources.library._index import (
    AlignedVectors,
    IndexCache,
    LibraryIndex,
    VectorsKey,
)
from scholarstream.sources.library._store import Revision

log = logging.getLogger(__name__)

Positions = npt.NDArray[np.intp]

IN_PROCESS = "in process"
PGVECTOR = "pgvector"
FILL_BATCH = 2000
"""Rows given their pgvector column per statement."""
EXACT_RECORDS = 1000
"""pgvector computes the exact cosine of at most this many word candidates (best by
words first) per query; the rest get a bound (see ``PgVectorRanking``)."""
_DDL_LOCK = 7_320_417_551
"""An advisory lock id: two processes starting at once set up the column and index one
after the other."""


@dataclass(frozen=True)
class StoredVectors:
    """Passage vectors, one row each, with the record each belongs to."""

    ids: list[uuid.UUID]
    vectors: Vectors


async def stored_vectors(
    database: Database, owner_id: uuid.UUID, model: str, dimension: int, *, batch: int = 5000
) -> StoredVectors:
    """Every passage vector of the owner from ``model`` (keyset paging, a batch at a time)."""
    ids: list[uuid.UUID] = []
    parts: list[Vectors] = []
    last: tuple[uuid.UUID, int] | None = None
    async with database.session() as session:
        while True:
            statement = select(
                LibraryEmbedding.record_id, LibraryEmbedding.passage, LibraryEmbedding.vector
            ).where(LibraryEmbedding.owner_id == owner_id, LibraryEmbedding.model == model)
            if last is not None:
                statement = statement.where(
                    tuple_(LibraryEmbedding.record_id, LibraryEmbedding.passage) > tuple_(*last)
                )
            ordered = statement.order_by(LibraryEmbedding.record_id, LibraryEmbedding.passage)
            rows = list(await session.execute(ordered.limit(batch)))
            if not rows:
                break
            ids.extend(row.record_id for row in rows)
            parts.append(unpack_rows([row.vector for row in rows], dimension))
            last = (rows[-1].record_id, rows[-1].passage)
    vectors = np.concatenate(parts) if parts else np.zeros((0, dimension), dtype=np.float32)
    return StoredVectors(ids=ids, vectors=vectors)


class VectorRanking(Protocol):
    """Each record's closeness in meaning to a query, from its stored passage vectors."""

    @property
    def name(self) -> str:
        """``PGVECTOR`` or ``IN_PROCESS``: shown in the library's semantic status."""
        ...

    @property
    def note(self) -> str | None:
        """Why vectors are ranked in process on PostgreSQL, in plain words."""
        ...

    async def similarity(
        self,
        owner_id: uuid.UUID,
        index: LibraryIndex,
        revision: Revision,
        query: Vectors,
        *,
        candidates: Positions,
        depth: int,
        embedded: int,
    ) -> npt.NDArray[np.float32]:
        """Per index position, the cosine of the record's closest passage, known for the
        ``depth`` closest records and for ``candidates`` (word matches, best first); NaN
        for records with no vector. A ranking may bound the cosine of candidates far down
        the word ranking instead of computing it (see ``PgVectorRanking``)."""
        ...

    async def stored(self, owner_id: uuid.UUID) -> None:
        """Called after vectors were saved (by this process or another)."""
        ...


class InProcessRanking:
    """Every passage vector of the owner read once per index revision and kept in memory
    (float32: 1.5 kB a passage); each query is one matrix product."""

    name = IN_PROCESS

    def __init__(
        self, database: Database, cache: IndexCache, model: str, dimension: int, note: str | None
    ) -> None:
        self.database = database
        self.cache = cache
        self.model = model
        self.dimension = dimension
        self.note = note

    async def similarity(
        self,
        owner_id: uuid.UUID,
        index: LibraryIndex,
        revision: Revision,
        query: Vectors,
        *,
        candidates: Positions,
        depth: int,
        embedded: int,
    ) -> npt.NDArray[np.float32]:
        key = VectorsKey(revision, self.model, embedded)
        vectors = self.cache.cached_vectors(owner_id, key)
        if vectors is None:
            stored = await stored_vectors(self.database, owner_id, self.model, self.dimension)
            vectors = await asyncio.to_thread(index.aligned, stored.ids, stored.vectors)
            self.cache.keep_vectors(owner_id, key, vectors)
        aligned: AlignedVectors = vectors
        return aligned.similarity(query)

    async def stored(self, owner_id: uuid.UUID) -> None:
        return None


def _literal(vector: Vectors) -> str:
    """pgvector's text form, ``[0.1,0.2,...]``: sent as text and cast by the server, so the
    driver needs no codec for the extension's type."""
    return "[" + ",".join(f"{value:.6g}" for value in vector.tolist()) + "]"


class PgVectorRanking:
    """Top records by HNSW (cosine distance) plus the exact cosine of the best word
    candidates, computed by the server; nothing held in this process.

    Reading every word candidate's vectors costs about 10 ms per thousand records, and a
    common word matches most of a library; so past the first ``EXACT_RECORDS`` (at least
    twice ``depth``) a candidate gets the lowest cosine among the closest passages
    instead: it is not among them, so its own cosine is at most that. Such a record is
    already far down the word ranking, and the bound only lowers it further."""

    name = PGVECTOR
    note: str | None = None

    def __init__(self, database: Database, model: str, dimension: int, version: str) -> None:
        self.database = database
        self.model = model
        self.dimension = dimension
        self.version = version
        # The model is a literal in the SQL so that the planner matches the partial index.
        model_literal = "'" + model.replace("'", "''") + "'"
        typed = f"embedding::vector({dimension})"
        distance = f"{typed} <=> CAST(CAST(:query AS text) AS vector({dimension}))"
        scope = f"owner_id = :owner AND model = {model_literal} AND embedding IS NOT NULL"
        # Built from the model's own name (quotes doubled) and an int: no user text.
        self._nearest = text(
            f"SELECT record_id, 1 - ({distance}) AS cosine FROM library_embeddings"  # noqa: S608
            f" WHERE {scope} ORDER BY {distance} LIMIT :limit"
        )
        self._exact = text(
            f"SELECT record_id, max(1 - ({distance})) AS cosine"  # noqa: S608
            f" FROM library_embeddings WHERE {scope}"
            " AND record_id = ANY(:ids) GROUP BY record_id"
        ).bindparams(bindparam("ids", type_=ARRAY(Uuid())))
        self._iterative = _at_least(version, (0, 8))

    async def similarity(
        self,
        owner_id: uuid.UUID,
        index: LibraryIndex,
        revision: Revision,
        query: Vectors,
        *,
        candidates: Positions,
        depth: int,
        embedded: int,
    ) -> npt.NDArray[np.float32]:
        await self.stored(owner_id)
        literal = _literal(query)
        out = np.full(len(index), np.nan, dtype=np.float32)
        positions = index.positions
        async with self.database.session() as session:
            # Each record has a few passages: ask for enough to fill ``depth`` records, and
            # let the index keep looking past other owners' rows (pgvector 0.8 and later).
            passages = max(depth, 1) * 4
            await session.execute(text(f"SET LOCAL hnsw.ef_search = {min(passages, 1000)}"))
            # A generic plan (chosen after five runs of a prepared statement) cannot use
            # the HNSW index or the ids' selectivity: three times slower, measured.
            await session.execute(text("SET LOCAL plan_cache_mode = force_custom_plan"))
            if self._iterative:
                await session.execute(text("SET LOCAL hnsw.iterative_scan = relaxed_order"))
            nearest = await session.execute(
                self._nearest, {"owner": owner_id, "query": literal, "limit": passages}
            )
            closest = _keep_best(out, positions, nearest)
            exact = candidates[: max(EXACT_RECORDS, 2 * depth)]
            ids = [index.ids[i] for i in exact.tolist()]
            if ids:
                rows = await session.execute(
                    self._exact, {"owner": owner_id, "query": literal, "ids": ids}
                )
                _keep_best(out, positions, rows)
        rest = candidates[len(exact) :]
        if len(rest) and closest is not None and embedded >= len(index):
            # Every record has a vector, so a NaN here means "not computed".
            rest = rest[np.isnan(out[rest])]
            out[rest] = closest
        return out

    async def stored(self, owner_id: uuid.UUID) -> None:
        """Gives every saved vector of the owner its pgvector column, a batch at a time."""
        while True:
            async with self.database.session() as session:
                rows = list(
                    await session.execute(
                        text(
                            "SELECT record_id, passage, vector FROM library_embeddings"
                            " WHERE owner_id = :owner AND model = :model AND embedding IS NULL"
                            " LIMIT :limit"
                        ),
                        {"owner": owner_id, "model": self.model, "limit": FILL_BATCH},
                    )
                )
                if not rows:
                    return
                vectors = unpack_rows([row.vector for row in rows], self.dimension)
                await session.execute(
                    text(
                        "UPDATE library_embeddings AS e SET embedding = CAST(v.value AS vector)"
                        " FROM unnest(:ids, :passages, :values) AS v(record_id, passage, value)"
                        " WHERE e.record_id = v.record_id AND e.passage = v.passage"
                        " AND e.model = :model"
                    ).bindparams(
                        bindparam("ids", type_=ARRAY(Uuid())),
                        bindparam("passages", type_=ARRAY(Integer())),
                        bindparam("values", type_=ARRAY(String())),
                    ),
                    {
                        "ids": [row.record_id for row in rows],
                        "passages": [row.passage for row in rows],
                        "values": [_literal(vector) for vector in vectors],
                        "model": self.model,
                    },
                )
            if len(rows) < FILL_BATCH:
                return


def _keep_best(
    out: npt.NDArray[np.float32], positions: dict[uuid.UUID, int], rows: Iterable[Row[Any]]
) -> float | None:
    """Keeps each record's best cosine; returns the lowest cosine of the rows, if any."""
    lowest: float | None = None
    for row in rows:
        cosine = float(row.cosine)
        lowest = cosine if lowest is None else min(lowest, cosine)
        position = positions.get(row.record_id)
        if position is not None and (np.isnan(out[position]) or cosine > out[position]):
            out[position] = cosine
    return lowest


def _at_least(version: str, wanted: tuple[int, int]) -> bool:
    parts = tuple(int(part) for part in version.split(".")[:2] if part.isdigit())
    return parts >= wanted


NOT_INSTALLED = (
    "The PostgreSQL server has no pgvector extension, so library vectors are ranked in this "
    "process (install pgvector on the server to rank them in the database)."
)
NOT_ALLOWED = (
    "The PostgreSQL server has pgvector, but this database user may not enable it, so "
    "library vectors are ranked in this process (run CREATE EXTENSION vector once as a "
    "superuser or the database owner)."
)


async def choose_vector_ranking(
    database: Database, cache: IndexCache, model: str, dimension: int
) -> VectorRanking:
    """pgvector when the application database is PostgreSQL and the extension is there
    (or can be enabled); in process otherwise, with the reason."""
    if database.engine.dialect.name != "postgresql":
        return InProcessRanking(database, cache, model, dimension, note=None)
    try:
        async with database.engine.begin() as connection:
            version = await _enable_pgvector(connection)
            if version is None:
                return InProcessRanking(database, cache, model, dimension, NOT_INSTALLED)
            await _prepare(connection, model, dimension, version)
    except DBAPIError as error:
        log.warning("pgvector could not be set up (%s); ranking vectors in process", error)
        return InProcessRanking(database, cache, model, dimension, NOT_ALLOWED)
    log.info("library vectors are ranked by pgvector %s", version)
    return PgVectorRanking(database, model, dimension, version)


async def _enable_pgvector(connection: AsyncConnection) -> str | None:
    """The installed pgvector version, after enabling it in this database if the server
    has it; None when the server does not."""
    available = await connection.scalar(
        text("SELECT default_version FROM pg_available_extensions WHERE name = 'vector'")
    )
    if available is None:
        return None
    await connection.execute(text("SELECT pg_advisory_xact_lock(:id)"), {"id": _DDL_LOCK})
    await connection.execute(text("CREATE EXTENSION IF NOT EXISTS vector"))
    version = await connection.scalar(
        text("SELECT extversion FROM pg_extension WHERE extname = 'vector'")
    )
    return str(version)


async def _prepare(connection: AsyncConnection, model: str, dimension: int, version: str) -> None:
    """The ``embedding`` column, an index of the rows still without it, and the model's
    HNSW index (pgvector 0.5 and later; earlier versions scan)."""
    await connection.execute(
        text("ALTER TABLE library_embeddings ADD COLUMN IF NOT EXISTS embedding vector")
    )
    await connection.execute(
        text(
            "CREATE INDEX IF NOT EXISTS ix_library_embeddings_unfilled"
            " ON library_embeddings (owner_id, model) WHERE embedding IS NULL"
        )
    )
    if _at_least(version, (0, 5)):
        name = "ix_library_embeddings_hnsw_" + hashlib.sha256(model.encode()).hexdigest()[:12]
        model_literal = "'" + model.replace("'", "''") + "'"
        await connection.execute(
            text(
                f"CREATE INDEX IF NOT EXISTS {name} ON library_embeddings USING hnsw"
                f" ((embedding::vector({dimension})) vector_cosine_ops)"
                f" WHERE model = {model_literal}"
            )
        )
