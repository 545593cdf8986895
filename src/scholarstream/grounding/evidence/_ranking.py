"""The pack's order: the relevance score of the search (words, or the model's judgement)
fused with meaning (the cosine of embeddings, ``scholarstream.search.scoring.meaning``) the
way the library fuses its rankings.

The search's offline ``HybridRelevanceScorer`` fuses meaning on a fixed scale, because a
stream's scores are compared across runs; a pack is ordered once, among its own records,
whatever scored them (a model's judgement has no cosine in it), so its cosine is scaled
among the related records as the library's search scales it, with the library's weight and
floor (tuned by ``bench/retrieval.py``). The finder asks the search for its scores by words
alone so that meaning is counted once."""

from __future__ import annotations

from collections.abc import Sequence

from scholarstream.sources.library import Fusion


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
