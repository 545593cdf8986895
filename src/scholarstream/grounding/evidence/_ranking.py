"""The pack's order: the relevance score of the search (words, or the model's judgement)
fused with meaning (the cosine of embeddings) the way the library fuses its rankings."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from scholarstream.embeddings import Embedder
from scholarstream.papers import Record
from scholarstream.sources.library import Fusion, embedding_passages

PASSAGES_PER_RECORD = 2
"""Passages of each record the model reads: its title with the start of its abstract is
most of what decides relevance, at a bounded cost (about 100 records per search)."""


def meaning(embedder: Embedder, question: str, records: Sequence[Record]) -> list[float]:
    """Each record's closeness in meaning to the question: the best cosine of its
    passages (title, then the abstract in pieces)."""
    if not records:
        return []
    texts: list[str] = []
    owners: list[int] = []
    for index, record in enumerate(records):
        data = record.model_dump(include={"title", "abstract", "summary"})
        for passage in embedding_passages(data)[:PASSAGES_PER_RECORD]:
            texts.append(passage)
            owners.append(index)
    query = embedder.embed_query(question)
    vectors = embedder.embed_documents(texts)
    best = np.full(len(records), -1.0, dtype=np.float64)
    np.maximum.at(best, np.asarray(owners, dtype=np.intp), vectors @ query)
    return [float(value) for value in best]


def fused_order(
    scores: Sequence[float], closeness: Sequence[float] | None, fusion: Fusion
) -> list[tuple[int, float]]:
    """(index, fused score) of the records related to the question, best first.

    A record is related when its score is above 0 or, with ``closeness``, its cosine
    reaches ``fusion.floor``. Without ``closeness`` the score is the order; with it, the
    cosine scaled to 0..1 among the related records weighs ``fusion.semantic_weight``.
    Ties keep the order given (the search's own ranking).
    """
    related = [
        i
        for i, score in enumerate(scores)
        if score > 0 or (closeness is not None and closeness[i] >= fusion.floor)
    ]
    if closeness is None or not related:
        fused = {i: float(scores[i]) for i in related}
    else:
        low = min(closeness[i] for i in related)
        high = max(closeness[i] for i in related)
        weight = fusion.semantic_weight

        def scaled(i: int) -> float:
            return (closeness[i] - low) / (high - low) if high > low else 1.0

        fused = {i: weight * scaled(i) + (1 - weight) * float(scores[i]) for i in related}
    order = sorted(related, key=lambda i: -fused[i])
    return [(i, round(fused[i], 4)) for i in order]
