"""Relevance of found items to a stream: a scorer from the paper search with the stream as
its intent -- the offline one (BM25 + concept coverage, fused with closeness in meaning
when the embedding model is on) or the model one, which gives its own one-line reason --
blended with the relevance-feedback model learnt from the items the user marked in earlier
reports (the search's blend: the more judgements, the more they weigh). Also which of the
stream's focus areas, competitors and keywords each item mentions, for the groups and the
offline reason."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol

from scholarstream.papers import Record
from scholarstream.papers.ranking import Embed
from scholarstream.search import FallbackLog
from scholarstream.search.core import Concept, LabelledPaper, ParsedIntent
from scholarstream.search.scoring import (
    MEANING_NOTE,
    LexicalRelevanceScorer,
    Relevance,
    feedback_probabilities,
    feedback_weight,
    record_text,
    with_feedback_note,
)
from scholarstream.sources.library import query_tokens
from scholarstream.streams.core import Stream
from scholarstream.streams.monitoring._report import ScorerName

_MAX_NAMED = 3


@dataclass(frozen=True)
class Match:
    """What of the stream one item mentions."""

    focus_areas: list[str]
    competitors: list[str]
    keywords: list[str]


@dataclass(frozen=True)
class Judged:
    score: float
    reason: str
    match: Match
    feedback: float | None = None  # the feedback model's probability of relevance


class RelevanceScorer(Protocol):
    """What the judge needs of a search scorer (``LexicalRelevanceScorer``,
    ``LLMRelevanceScorer``): each record's relevance to the intent, before feedback."""

    async def relevance(
        self, records: Sequence[Record], intent: ParsedIntent
    ) -> list[Relevance]: ...


@dataclass(frozen=True)
class StreamJudge:
    """The scorer a run uses and how the report names it. ``explains`` is whether the
    scorer's reasons are worth showing over the offline "Mentions ..." line."""

    scorer: RelevanceScorer
    name: ScorerName = "lexical"
    explains: bool = False
    fallbacks: FallbackLog = field(default_factory=FallbackLog)
    """Where a model scorer records the batches it scored offline (one judge per run)."""
    embed_documents: Embed | None = None
    """The embedding model's, when one runs: the feedback model reads the titles' meaning."""


OFFLINE_JUDGE = StreamJudge(LexicalRelevanceScorer())
"""The judge without a model or an embedding model: by words alone."""


def stream_intent(stream: Stream) -> ParsedIntent:
    """The stream as the scorer's intent, shaped like its queries: the keywords (and the
    organisations of a stream that follows them) as one concept (any of them), the focus
    areas as another."""
    terms = stream.topic_terms()
    concepts = [Concept(term=terms[0], synonyms=terms[1:])] if terms else []
    if stream.focus_areas:
        concepts.append(Concept(term=stream.focus_areas[0], synonyms=stream.focus_areas[1:]))
    return ParsedIntent(question=stream.purpose, topic=stream.purpose, concepts=concepts)


def _phrase(text: str) -> str | None:
    tokens = query_tokens(text)
    return f" {' '.join(tokens)} " if tokens else None


def _mentioned(text: str, terms: Sequence[str]) -> list[str]:
    return [term for term in terms if (p := _phrase(term)) and p in text]


def match(record: Record, stream: Stream) -> Match:
    """The stream's terms the record's text mentions (stemmed, stop words left out)."""
    text = f" {' '.join(query_tokens(record_text(record)))} "
    return Match(
        focus_areas=_mentioned(text, stream.focus_areas),
        competitors=_mentioned(text, stream.competitors),
        keywords=_mentioned(text, stream.keywords),
    )


def _named(label: str, terms: Sequence[str]) -> str:
    shown = ", ".join(terms[:_MAX_NAMED])
    more = len(terms) - _MAX_NAMED
    return f"{label} {shown}" + (f" and {more} more" if more > 0 else "")


def reason(found: Match, fallback: str) -> str:
    """One line naming what the item mentions; the scorer's own reason when it mentions
    none of the stream's terms."""
    parts = [
        _named(label, terms)
        for label, terms in (
            ("competitor", found.competitors),
            ("focus area", found.focus_areas),
            ("keyword", found.keywords),
        )
        if terms
    ]
    if not parts:
        return fallback
    return "Mentions " + "; ".join(parts) + "."


async def judge(
    records: Sequence[Record],
    stream: Stream,
    *,
    by: StreamJudge = OFFLINE_JUDGE,
    labelled: Sequence[LabelledPaper] = (),
) -> list[Judged]:
    """Each record's score (0-1) and reason, in the records' order; ``labelled`` are the
    items the user marked in the stream's earlier reports."""
    if not records:
        return []
    relevances = await by.scorer.relevance(records, stream_intent(stream))
    probabilities = await feedback_probabilities(records, labelled, embed=by.embed_documents)
    weight = feedback_weight(len(labelled))
    judged = []
    for i, (record, relevance) in enumerate(zip(records, relevances, strict=True)):
        found = match(record, stream)
        score = relevance.score
        text = relevance.reason if by.explains else reason(found, relevance.reason)
        if relevance.by_meaning and MEANING_NOTE not in text:
            text = f"{text.rstrip('.')}; {MEANING_NOTE}."
        probability = None
        if probabilities is not None:
            probability = probabilities[i]
            score = weight * probability + (1 - weight) * score
            text = with_feedback_note(text, probability)
        judged.append(Judged(round(min(1.0, max(0.0, score)), 4), text, found, probability))
    return judged
