"""From per-paper relevance to the ranked list: the user's own judgements kept, the
relevance-feedback model blended in once both kinds of judgement exist, best first."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from scholarstream.papers import Record, paper_key, record_origins, record_sources
from scholarstream.papers.ranking import Embed, FeedbackModel, feedback_model, record_text
from scholarstream.search.core import LabelledPaper, ParsedIntent, ScoredPaper

# Labels at which the feedback model and the intent weigh the same; with more labels the
# feedback model dominates (it has learnt what the user means, the intent is a guess).
FEEDBACK_HALF_WEIGHT = 4
# Feedback probabilities beyond these say something worth putting in the reason.
_LIKE_RELEVANT = 0.6
_LIKE_IRRELEVANT = 0.4


@dataclass(frozen=True)
class Relevance:
    """A paper's relevance to the intent alone, before any feedback."""

    score: float
    reason: str
    by_meaning: bool = False
    """Closeness in meaning lifted the score (``HybridRelevanceScorer``)."""


class OfflineScorer(Protocol):
    """A scorer that needs no model (``LexicalRelevanceScorer``, ``HybridRelevanceScorer``):
    what the model scorer falls back on, and the offline ``RelevanceScorer``. Subclass it
    to score by ``relevance`` and the user's labels."""

    embed_documents: Embed | None = None
    """An embedding model's, when the scorer has one: the feedback model then reads the
    titles' meaning too."""

    async def relevance(
        self, records: Sequence[Record], intent: ParsedIntent
    ) -> list[Relevance]: ...

    async def score(
        self,
        records: Sequence[Record],
        intent: ParsedIntent,
        *,
        labelled: Sequence[LabelledPaper] = (),
    ) -> list[ScoredPaper]:
        relevances = await self.relevance(records, intent)
        return await rank(records, relevances, labelled, embed=self.embed_documents)


def feedback_weight(n_labelled: int) -> float:
    return n_labelled / (n_labelled + FEEDBACK_HALF_WEIGHT)


def latest_labels(labelled: Sequence[LabelledPaper]) -> dict[str, LabelledPaper]:
    """One judgement per paper; a later one replaces an earlier."""
    return {paper.id: paper for paper in labelled}


def _feedback_probabilities(
    records: Sequence[Record],
    labels: Mapping[int, bool],
    wanted: Sequence[int],
    embed: Embed | None,
) -> list[float]:
    texts = [record_text(record) for record in records]
    model = feedback_model(texts, [record.title for record in records], embed).fit(labels)
    return [float(p) for p in model.probabilities(wanted)]


async def feedback_probabilities(
    records: Sequence[Record],
    labelled: Sequence[LabelledPaper],
    *,
    embed: Embed | None = None,
) -> list[float] | None:
    """The feedback model's probability of relevance for each record, or ``None`` while
    the user has not marked at least one paper relevant and one irrelevant. No records
    (an iteration that found nothing) is an empty list: the labels are kept for later.
    ``embed``: an embedding model's ``embed_documents``, to read the titles' meaning too
    (words alone if it fails)."""
    judged = list(latest_labels(labelled).values())
    if not FeedbackModel.can_learn([paper.relevant for paper in judged]):
        return None
    if not records:
        return []
    # The candidates and the judged papers share one vocabulary; a judged paper found
    # again appears twice, which does no harm (it is never ranked by the model).
    every = [*records, *(paper.record for paper in judged)]
    labels = {len(records) + i: paper.relevant for i, paper in enumerate(judged)}
    return await asyncio.to_thread(
        _feedback_probabilities, every, labels, range(len(records)), embed
    )


def with_feedback_note(reason: str, probability: float) -> str:
    """``reason`` with a note when the feedback model leans clearly one way."""
    if probability >= _LIKE_RELEVANT:
        note = "similar to papers you marked relevant"
    elif probability <= _LIKE_IRRELEVANT:
        note = "closer to papers you marked irrelevant"
    else:
        return reason
    return f"{reason.rstrip('. ')}; {note}."


def _user_judged(record: Record, paper_id: str, paper: LabelledPaper) -> ScoredPaper:
    return ScoredPaper(
        id=paper_id,
        record=record,
        score=1.0 if paper.relevant else 0.0,
        reason=f"You marked this paper {'relevant' if paper.relevant else 'irrelevant'}.",
        sources=record_sources(record),
        origins=record_origins(record),
        label="relevant" if paper.relevant else "irrelevant",
    )


def _order(paper: ScoredPaper) -> tuple[int, float, str]:
    # The user's judgements stay at the top and bottom whatever the model thinks.
    group = {"relevant": 0, None: 1, "irrelevant": 2}[paper.label]
    return (group, -paper.score, paper.id)


async def rank(
    records: Sequence[Record],
    relevances: Sequence[Relevance],
    labelled: Sequence[LabelledPaper] = (),
    *,
    embed: Embed | None = None,
) -> list[ScoredPaper]:
    """Scored papers, best first: ``relevances`` blended with the feedback model learnt
    from ``labelled`` (reading the titles' meaning with ``embed``), and the papers the
    user judged carrying their judgement."""
    judged = latest_labels(labelled)
    probabilities = await feedback_probabilities(records, labelled, embed=embed)
    weight = feedback_weight(len(judged))
    scored: list[ScoredPaper] = []
    for i, (record, relevance) in enumerate(zip(records, relevances, strict=True)):
        paper_id = paper_key(record)
        if paper_id in judged:
            scored.append(_user_judged(record, paper_id, judged[paper_id]))
            continue
        score, reason = relevance.score, relevance.reason
        if probabilities is not None:
            score = weight * probabilities[i] + (1 - weight) * score
            reason = with_feedback_note(reason, probabilities[i])
        scored.append(
            ScoredPaper(
                id=paper_id,
                record=record,
                score=min(1.0, max(0.0, score)),
                reason=reason,
                sources=record_sources(record),
                origins=record_origins(record),
            )
        )
    return sorted(scored, key=_order)
