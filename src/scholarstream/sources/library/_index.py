"""BM25 ranking over a user's library with ``bm25s`` (English stop words, Snowball
stemming; title, abstract, keywords and MeSH terms).

Chosen over SQLite FTS5 by ``bench/retrieval.py``: better nDCG@10 on SciFact and it works
the same on PostgreSQL, where FTS5 does not exist. Each process keeps an index per user,
rebuilt when the library's revision changes.
"""

from __future__ import annotations

import asyncio
import uuid
from collections import OrderedDict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import bm25s
import numpy as np
import numpy.typing as npt
import Stemmer

from scholarstream.sources.library._store import Revision

_STEMMER = Stemmer.Stemmer("english")


def index_text(data: Mapping[str, Any]) -> str:
    """The text BM25 sees for a stored record (its JSON form, read without building a
    model: index builds touch every record)."""
    parts: list[str] = [data.get("title", ""), data.get("abstract", ""), data.get("summary", "")]
    for key in ("keywords", "mesh_terms", "conditions"):
        parts.extend(data.get(key, ()))
    parts.extend(intervention.get("name", "") for intervention in data.get("interventions", ()))
    return " ".join(part for part in parts if part)


def tokenize(texts: Sequence[str]) -> bm25s.tokenization.Tokenized:
    return bm25s.tokenize(
        list(texts), lower=True, stopwords="en", stemmer=_STEMMER, show_progress=False
    )


def query_tokens(text: str) -> list[str]:
    tokens = bm25s.tokenize(
        [text], stopwords="en", stemmer=_STEMMER, return_ids=False, show_progress=False
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

    def _mask(
        self, year_from: int | None, year_to: int | None, publication_type: str | None
    ) -> npt.NDArray[np.bool_]:
        mask = np.ones(len(self.ids), dtype=np.bool_)
        if year_from is not None:
            mask &= self._years >= year_from
        if year_to is not None:
            mask &= (self._years <= year_to) & (self._years > 0)
        if publication_type:
            wanted = f"|{publication_type.lower()}|"
            mask &= np.array([wanted in types for types in self._types], dtype=np.bool_)
        return mask

    def search(
        self,
        text: str,
        *,
        offset: int = 0,
        limit: int = 20,
        year_from: int | None = None,
        year_to: int | None = None,
        publication_type: str | None = None,
    ) -> tuple[int, list[Hit]]:
        """``(matching records, hits of the requested page)``, best first."""
        if self._retriever is None:
            return 0, []
        vocabulary = self._retriever.vocab_dict
        tokens = [token for token in query_tokens(text) if token in vocabulary]
        if not tokens:
            return 0, []
        scores = self._retriever.get_scores(tokens)
        scores = np.where(self._mask(year_from, year_to, publication_type), scores, 0.0)
        matching = int(np.count_nonzero(scores > 0))
        end = min(offset + limit, matching)
        if offset >= end:
            return matching, []
        # argpartition finds the top `end` in linear time; only those get sorted.
        top = np.argpartition(-scores, end - 1)[:end]
        ranked = top[np.argsort(-scores[top], kind="stable")]
        return matching, [Hit(self.ids[i], float(scores[i])) for i in ranked[offset:end]]


class IndexCache:
    """One index per owner and revision, at most ``capacity`` owners (least recently used
    dropped). Builds run in a thread so the event loop keeps serving."""

    def __init__(self, capacity: int = 8) -> None:
        self.capacity = capacity
        self._entries: OrderedDict[uuid.UUID, tuple[Revision, LibraryIndex]] = OrderedDict()
        self._locks: dict[uuid.UUID, asyncio.Lock] = {}

    def cached(self, owner_id: uuid.UUID, revision: Revision) -> LibraryIndex | None:
        entry = self._entries.get(owner_id)
        if entry is None or entry[0] != revision:
            return None
        self._entries.move_to_end(owner_id)
        return entry[1]

    def lock(self, owner_id: uuid.UUID) -> asyncio.Lock:
        return self._locks.setdefault(owner_id, asyncio.Lock())

    async def build(
        self, owner_id: uuid.UUID, revision: Revision, docs: Iterable[IndexedDoc]
    ) -> LibraryIndex:
        index = await asyncio.to_thread(LibraryIndex, list(docs))
        self._entries[owner_id] = (revision, index)
        self._entries.move_to_end(owner_id)
        while len(self._entries) > self.capacity:
            self._entries.popitem(last=False)
        return index
