"""Offline relevance by words and meaning: the lexical score (BM25 + concept coverage)
fused with how close each record is in meaning to the intent (the cosine of embeddings).

The cosine goes through a fixed scale (``MeaningScale``), not one stretched to each batch:
streams compare and blend scores across runs, and a batch of unrelated records must not
have its closest one called fully related. The anchors and the weight were chosen on
SciFact's train split by ``bench/relevance.py``.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from scholarstream.embeddings import Embedder
from scholarstream.papers import Record
from scholarstream.search.core import ParsedIntent
from scholarstream.search.scoring._lexical import (
    Words,
    lexical_relevance,
    penalised,
    word_relevance,
)
from scholarstream.search.scoring._ranking import OfflineScorer, Relevance
from scholarstream.sources.library import embedding_passages

log = logging.getLogger(__name__)

PASSAGES_PER_RECORD = 2
"""Passages of each record the model reads: its title with the start of its abstract is
most of what decides relevance, at a bounded cost (a few hundred records per run)."""
MEANING_WEIGHT = 0.4
"""Of the fused score; the lexical score has the rest. On SciFact train nDCG@10 in the pool
was 0.721 / 0.730 / 0.731 at 0.3 / 0.4 / 0.5 (words alone 0.664); 0.4 keeps more precision
at a score of 0.5 than 0.5 does."""
LIFT = 0.1
"""How far meaning must raise a record's score above its words' for the reason to say so."""
MEANING_NOTE = "close in meaning to the topic"


@dataclass(frozen=True)
class MeaningScale:
    """A cosine mapped to 0..1 between two anchors measured on SciFact's train split with
    the shipped model (``bench/relevance.py``): ``unrelated`` is the median cosine of a
    random abstract with a question (0.115), ``related`` the median of an abstract judged
    relevant (0.639); a BM25 top hit that is not relevant has 0.37."""

    unrelated: float = 0.12
    related: float = 0.64

    def __call__(self, cosine: float) -> float:
        span = self.related - self.unrelated
        return min(1.0, max(0.0, (cosine - self.unrelated) / span)) if span > 0 else 0.0


def intent_text(intent: ParsedIntent) -> str:
    """What the model compares records with: the question, and the topic and concept
    terms it does not already say."""
    parts = [intent.question]
    for extra in (intent.topic, *(concept.term for concept in intent.concepts)):
        if extra.lower() not in " ".join(parts).lower():
            parts.append(extra)
    return ". ".join(parts)


def meaning(
    embedder: Embedder,
    question: str,
    records: Sequence[Record],
    *,
    passages: int = PASSAGES_PER_RECORD,
) -> list[float]:
    """Each record's closeness in meaning to the question: the best cosine of its first
    ``passages`` passages (title, then the abstract in pieces)."""
    if not records:
        return []
    texts: list[str] = []
    owners: list[int] = []
    for index, record in enumerate(records):
        data = record.model_dump(include={"title", "abstract", "summary"})
        for passage in embedding_passages(data)[:passages]:
            texts.append(passage)
            owners.append(index)
    query = embedder.embed_query(question)
    vectors = embedder.embed_documents(texts)
    best = np.full(len(records), -1.0, dtype=np.float64)
    np.maximum.at(best, np.asarray(owners, dtype=np.intp), vectors @ query)
    return [float(value) for value in best]


def fused(words: Words, closeness: float, *, weight: float, scale: MeaningScale) -> Relevance:
    """One record's relevance: its words' score fused with its calibrated closeness; the
    reason says so when meaning lifted the score."""
    score = (1 - weight) * words.score + weight * scale(closeness)
    lifted = score - words.score >= LIFT
    reason = f"{words.reason.rstrip('.')}; {MEANING_NOTE}." if lifted else words.reason
    score, reason = penalised(score, reason, words.excluded)
    return Relevance(min(1.0, max(0.0, score)), reason, by_meaning=lifted)


def hybrid_relevance(
    embedder: Embedder,
    records: Sequence[Record],
    intent: ParsedIntent,
    *,
    weight: float = MEANING_WEIGHT,
    scale: MeaningScale | None = None,
) -> list[Relevance]:
    """Each record's relevance to the intent by words and meaning (raises what the
    embedder raises)."""
    if not records:
        return []
    closeness = meaning(embedder, intent_text(intent), records)
    scale = scale or MeaningScale()
    return [
        fused(words, close, weight=weight, scale=scale)
        for words, close in zip(word_relevance(records, intent), closeness, strict=True)
    ]


class HybridRelevanceScorer(OfflineScorer):
    """The offline ``RelevanceScorer`` with an embedding model: no model calls. When the
    embedding model cannot run, the records are scored by their words alone."""

    def __init__(
        self,
        embedder: Embedder,
        *,
        weight: float = MEANING_WEIGHT,
        scale: MeaningScale | None = None,
    ) -> None:
        self.embedder = embedder
        self.embed_documents = embedder.embed_documents
        self.weight = weight
        self.scale = scale or MeaningScale()

    def _relevance(self, records: list[Record], intent: ParsedIntent) -> list[Relevance]:
        try:
            return hybrid_relevance(
                self.embedder, records, intent, weight=self.weight, scale=self.scale
            )
        except Exception:
            # Words alone still rank the records; the run goes on.
            log.exception("the embedding model failed; scoring relevance by words alone")
            return lexical_relevance(records, intent)

    async def relevance(self, records: Sequence[Record], intent: ParsedIntent) -> list[Relevance]:
        return await asyncio.to_thread(self._relevance, list(records), intent)
