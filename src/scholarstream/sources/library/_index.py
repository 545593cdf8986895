"""BM25 ranking over a user's library with ``bm25s`` (English stop words, Snowball
stemming; title, abstract, keywords and MeSH terms).

Chosen over SQLite FTS5 by ``bench/retrieval.py``: better nDCG@10 on SciFact and it works
the same on PostgreSQL, where FTS5 does not exist. Each process keeps an index per user,
rebuilt when the library's revision changes.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import re
import uuid
from collections import Counter, OrderedDict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import bm25s
import numpy as np
import numpy.typing as npt
import Stemmer

from scholarstream.embeddings import Vectors
from scholarstream.sources.library._fusion import (
    Fusion,
    hybrid_ranking,
    lexical_ranking,
    related_threshold,
    words_then_related,
)
from scholarstream.sources.library._store import Revision

_STEMMER = Stemmer.Stemmer("english")
# bm25s sets its logger to DEBUG on import: each index build would print a line.
logging.getLogger("bm25s").setLevel(logging.WARNING)


def index_text(data: Mapping[str, Any]) -> str:
    """The text BM25 sees for a stored record (its JSON form, read without building a
    model: index builds touch every record)."""
    parts: list[str] = [data.get("title", ""), data.get("abstract", ""), data.get("summary", "")]
    for key in ("keywords", "mesh_terms", "conditions"):
        parts.extend(data.get(key, ()))
    parts.extend(intervention.get("name", "") for intervention in data.get("interventions", ()))
    return " ".join(part for part in parts if part)


# Chinese and Japanese write no spaces between words, and Korean glues particles to them:
# a run of these scripts would be one token, so a word inside it would never match. Each
# run is read as its overlapping character pairs (the CJK bigrams of Lucene's CJKAnalyzer).
_CJK_RUN = re.compile("[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af]{2,}")


def _cjk_pairs(match: re.Match[str]) -> str:
    run = match.group(0)
    return " " + " ".join(run[i : i + 2] for i in range(len(run) - 1)) + " "


def _spaced(text: str) -> str:
    return _CJK_RUN.sub(_cjk_pairs, text)


def tokenize(texts: Sequence[str]) -> bm25s.tokenization.Tokenized:
    return bm25s.tokenize(
        [_spaced(text) for text in texts],
        lower=True,
        stopwords="en",
        stemmer=_STEMMER,
        show_progress=False,
    )


def query_tokens(text: str) -> list[str]:
    tokens = bm25s.tokenize(
        [_spaced(text)], stopwords="en", stemmer=_STEMMER, return_ids=False, show_progress=False
    )
    return [str(token) for token in tokens[0]]


@dataclass(frozen=True)
class IndexedDoc:
    id: uuid.UUID
    text: str
    year: int | None
    types: str  # the row's "|type|type|" list


@dataclass(frozen=True)
class Hit:
    id: uuid.UUID
    score: float
    by_meaning: bool = False
    """Related by meaning alone: the record lacks the query's words."""


@dataclass(frozen=True)
class Ranked:
    """Every record a search lists, best first: the ``matching`` ones that have the
    query's words, then those related by meaning alone."""

    order: npt.NDArray[np.intp]
    scores: npt.NDArray[np.float64] | npt.NDArray[np.float32]
    matching: int

    def __len__(self) -> int:
        return len(self.order)

    @property
    def related(self) -> int:
        return len(self.order) - self.matching


class LibraryIndex:
    def __init__(self, docs: Sequence[IndexedDoc]) -> None:
        self.ids = [doc.id for doc in docs]
        self._years = np.array([doc.year or 0 for doc in docs], dtype=np.int32)
        self._types = [doc.types for doc in docs]
        self._retriever: bm25s.BM25 | None = None
        if docs:
            self._retriever = bm25s.BM25()
            self._retriever.index(tokenize([doc.text for doc in docs]), show_progress=False)

    def __len__(self) -> int:
        return len(self.ids)

    @functools.cached_property
    def positions(self) -> dict[uuid.UUID, int]:
        """Each record's position in this index."""
        return {record_id: i for i, record_id in enumerate(self.ids)}

    def positions_of(self, ids: Iterable[uuid.UUID]) -> npt.NDArray[np.intp]:
        """The positions of the records among ``ids`` this index has."""
        position = self.positions
        return np.array([position[i] for i in ids if i in position], dtype=np.intp)

    def _mask(
        self,
        year_from: int | None,
        year_to: int | None,
        publication_type: str | None,
        only: npt.NDArray[np.intp] | None = None,
    ) -> npt.NDArray[np.bool_]:
        mask = np.ones(len(self.ids), dtype=np.bool_)
        if only is not None:
            mask[:] = False
            mask[only] = True
        if year_from is not None:
            mask &= self._years >= year_from
        if year_to is not None:
            mask &= (self._years <= year_to) & (self._years > 0)
        if publication_type:
            wanted = f"|{publication_type.lower()}|"
            mask &= np.array([wanted in types for types in self._types], dtype=np.bool_)
        return mask

    def passing(
        self,
        year_from: int | None,
        year_to: int | None,
        publication_type: str | None,
        *,
        only: npt.NDArray[np.intp] | None = None,
    ) -> npt.NDArray[np.intp]:
        """Positions of the records passing the filters (``only``: among these)."""
        return np.flatnonzero(self._mask(year_from, year_to, publication_type, only))

    @functools.cached_property
    def _type_counts(self) -> dict[str, int]:
        types: Counter[str] = Counter()
        for listed in self._types:
            types.update(t for t in listed.split("|") if t)
        return dict(types.most_common())

    def type_counts(self) -> dict[str, int]:
        """Every publication type of the library (lower case), most frequent first, with
        its count."""
        return self._type_counts

    def facet_counts(
        self, positions: npt.NDArray[np.intp]
    ) -> tuple[list[tuple[str, int]], list[tuple[int, int]]]:
        """Publication types (most frequent first) and years (newest first) of the records
        at ``positions``, with their counts."""
        types: Counter[str] = Counter()
        for position in positions.tolist():
            types.update(t for t in self._types[position].split("|") if t)
        years, counts = np.unique(self._years[positions], return_counts=True)
        by_year = [(int(y), int(c)) for y, c in zip(years, counts, strict=True) if y > 0]
        return types.most_common(), sorted(by_year, reverse=True)

    def aligned(self, ids: Sequence[uuid.UUID], vectors: Vectors) -> AlignedVectors:
        """Stored passage vectors (``ids``: each row's record) grouped by record in this
        index's order; rows of records the index does not have are dropped."""
        position = self.positions
        positions = np.array([position.get(record_id, -1) for record_id in ids], dtype=np.intp)
        kept = np.flatnonzero(positions >= 0)
        order = kept[np.argsort(positions[kept], kind="stable")]
        grouped = positions[order]
        starts = np.flatnonzero(np.r_[True, grouped[1:] != grouped[:-1]]) if len(order) else order
        return AlignedVectors(
            passages=vectors[order], starts=starts, records=grouped[starts], size=len(self.ids)
        )

    def words(
        self,
        text: str,
        *,
        year_from: int | None = None,
        year_to: int | None = None,
        publication_type: str | None = None,
        only: npt.NDArray[np.intp] | None = None,
    ) -> WordScores:
        """Each record's BM25 score for ``text`` and whether it passes the filters
        (``only``: the positions of the records other filters leave)."""
        mask = self._mask(year_from, year_to, publication_type, only)
        if self._retriever is None:
            return WordScores(np.zeros(0, np.float32), mask)
        vocabulary = self._retriever.vocab_dict
        tokens = [token for token in query_tokens(text) if token in vocabulary]
        lexical = (
            self._retriever.get_scores(tokens) if tokens else np.zeros(len(self.ids), np.float32)
        )
        return WordScores(lexical, mask)

    def rank(
        self,
        words: WordScores,
        *,
        offset: int = 0,
        limit: int = 20,
        meaning: Meaning | None = None,
        depth: int | None = None,
    ) -> tuple[int, list[Hit]]:
        """``(matching records, hits of the requested page)``, best first.

        With ``meaning`` (each record's closeness to the query) the ranking is hybrid:
        words and meaning fused; without it, BM25 alone. ``depth``: how many records
        closest by meaning may join (at least the fusion's own depth; default: down to
        the end of the page).
        """
        if not self.ids:
            return 0, []
        end = offset + limit
        if meaning is None:
            order, scores = lexical_ranking(words.lexical, words.mask)
        else:
            order, scores = hybrid_ranking(
                words.lexical,
                meaning.similarity,
                words.mask,
                meaning.fusion,
                depth=end if depth is None else depth,
            )
        page = order[offset:end]
        return len(order), [Hit(self.ids[i], float(scores[offset + n])) for n, i in enumerate(page)]

    def ranked(
        self,
        words: WordScores,
        *,
        meaning: Meaning | None = None,
        depth: int,
        related: bool = True,
    ) -> Ranked:
        """What a person sees for a query: the records with its words, ranked by words and
        meaning; then (``related``) the records related by meaning alone, labelled, when
        they clear ``related_threshold``. ``depth``: as for ``rank``."""
        if not self.ids:
            return Ranked(np.zeros(0, np.intp), np.zeros(0, np.float64), 0)
        if meaning is None:
            order, scores = lexical_ranking(words.lexical, words.mask)
            return Ranked(order, scores, len(order))
        fused_order, fused = hybrid_ranking(
            words.lexical, meaning.similarity, words.mask, meaning.fusion, depth=depth
        )
        threshold = related_threshold(words.lexical, meaning.similarity, words.mask, meaning.fusion)
        listed, scores, matching = words_then_related(
            fused_order, fused, words.lexical, meaning.similarity, threshold, related=related
        )
        return Ranked(listed, scores, matching)

    def hits(self, ranked: Ranked, *, offset: int, limit: int) -> list[Hit]:
        """The hits of one page of ``ranked``."""
        end = min(offset + limit, len(ranked))
        return [
            Hit(
                self.ids[int(ranked.order[n])],
                float(ranked.scores[n]),
                by_meaning=n >= ranked.matching,
            )
            for n in range(offset, end)
        ]

    def search(
        self,
        text: str,
        *,
        offset: int = 0,
        limit: int = 20,
        year_from: int | None = None,
        year_to: int | None = None,
        publication_type: str | None = None,
        meaning: Meaning | None = None,
    ) -> tuple[int, list[Hit]]:
        """``words`` then ``rank``, for a caller that has the meaning already."""
        words = self.words(
            text, year_from=year_from, year_to=year_to, publication_type=publication_type
        )
        return self.rank(words, offset=offset, limit=limit, meaning=meaning)


@dataclass(frozen=True)
class WordScores:
    """BM25 scores of every record of an index (0 for no shared word) and the filters'
    mask."""

    lexical: npt.NDArray[np.float32]
    mask: npt.NDArray[np.bool_]

    @property
    def candidates(self) -> npt.NDArray[np.intp]:
        """Positions of the records that share a word with the query and pass the filters."""
        return np.flatnonzero(self.mask & (self.lexical > 0))

    @property
    def best_first(self) -> npt.NDArray[np.intp]:
        """``candidates`` ordered by BM25 score, best first."""
        candidates = self.candidates
        return candidates[np.argsort(-self.lexical[candidates], kind="stable")]


@dataclass(frozen=True)
class AlignedVectors:
    """Passage vectors grouped by record: ``passages[starts[k]:starts[k+1]]`` belong to the
    record at index position ``records[k]``."""

    passages: Vectors
    starts: npt.NDArray[np.intp]
    records: npt.NDArray[np.intp]
    size: int

    def similarity(self, query: Vectors) -> npt.NDArray[np.float32]:
        """Each record's cosine with the query: that of its closest passage; NaN for
        records with no vectors yet."""
        out = np.full(self.size, np.nan, dtype=np.float32)
        if len(self.records):
            out[self.records] = np.maximum.reduceat(self.passages @ query, self.starts)
        return out


@dataclass(frozen=True)
class Meaning:
    """What hybrid ranking needs besides the words: each record's cosine with the query
    (NaN for a record with no vector, or none looked up), and how to fuse."""

    similarity: npt.NDArray[np.float32]
    fusion: Fusion


@dataclass(frozen=True)
class VectorsKey:
    """The vectors aligned to one index: the index's revision, the model and how many
    records it had embedded (which grows while the semantic index is built)."""

    revision: Revision
    model: str
    embedded: int


class IndexCache:
    """One index per owner and revision, at most ``capacity`` owners (least recently used
    dropped). Builds run in a thread so the event loop keeps serving."""

    def __init__(self, capacity: int = 8) -> None:
        self.capacity = capacity
        self._entries: OrderedDict[uuid.UUID, tuple[Revision, LibraryIndex]] = OrderedDict()
        self._vectors: dict[uuid.UUID, tuple[VectorsKey, AlignedVectors]] = {}
        self._locks: dict[uuid.UUID, asyncio.Lock] = {}

    def cached(self, owner_id: uuid.UUID, revision: Revision) -> LibraryIndex | None:
        entry = self._entries.get(owner_id)
        if entry is None or entry[0] != revision:
            return None
        self._entries.move_to_end(owner_id)
        return entry[1]

    def cached_vectors(self, owner_id: uuid.UUID, key: VectorsKey) -> AlignedVectors | None:
        entry = self._vectors.get(owner_id)
        return entry[1] if entry is not None and entry[0] == key else None

    def keep_vectors(self, owner_id: uuid.UUID, key: VectorsKey, vectors: AlignedVectors) -> None:
        self._vectors[owner_id] = (key, vectors)

    def lock(self, owner_id: uuid.UUID) -> asyncio.Lock:
        return self._locks.setdefault(owner_id, asyncio.Lock())

    async def build(
        self, owner_id: uuid.UUID, revision: Revision, docs: Iterable[IndexedDoc]
    ) -> LibraryIndex:
        index = await asyncio.to_thread(LibraryIndex, list(docs))
        self._entries[owner_id] = (revision, index)
        self._entries.move_to_end(owner_id)
        while len(self._entries) > self.capacity:
            dropped, _ = self._entries.popitem(last=False)
            self._vectors.pop(dropped, None)
        return index
