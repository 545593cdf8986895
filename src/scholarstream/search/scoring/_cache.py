"""Model judgements kept between the iterations of a run, so a paper found again is not
sent to the model again."""

from __future__ import annotations

import hashlib
from collections import OrderedDict

from scholarstream.papers import normalize_title
from scholarstream.search.core import ParsedIntent
from scholarstream.search.scoring._ranking import Relevance

CacheKey = tuple[str, str, str]


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def cache_key(intent: ParsedIntent, paper_id: str, title: str) -> CacheKey:
    """The question asked, the paper, and its title: a record whose title changed (a
    corrected or merged record) is judged afresh."""
    question = " ".join(f"{intent.topic}\n{intent.question}".lower().split())
    return (_digest(question), paper_id, _digest(normalize_title(title)))


class ScoreCache:
    """In memory; the least recently used entries go beyond ``capacity``."""

    def __init__(self, capacity: int = 20_000) -> None:
        self.capacity = capacity
        self._entries: OrderedDict[CacheKey, Relevance] = OrderedDict()

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, key: CacheKey) -> Relevance | None:
        value = self._entries.get(key)
        if value is not None:
            self._entries.move_to_end(key)
        return value

    def put(self, key: CacheKey, value: Relevance) -> None:
        self._entries[key] = value
        self._entries.move_to_end(key)
        while len(self._entries) > self.capacity:
            self._entries.popitem(last=False)
