"""Relevance of found items to a stream, offline and deterministic: the paper search's
lexical scorer (BM25 + concept coverage) with the stream as its intent, and which of the
stream's focus areas, competitors and keywords each item mentions (for the groups and the
one-line reason). A model-based judge (``search.scoring.LLMRelevanceScorer``) can take
the scorer's place later."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from scholarstream.papers import Record
from scholarstream.search.models import Concept, ParsedIntent
from scholarstream.search.scoring import lexical_relevance, record_text
from scholarstream.sources.library.index import query_tokens
from scholarstream.streams.records import Stream

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


def stream_intent(stream: Stream) -> ParsedIntent:
    """The stream as the scorer's intent, shaped like its queries: the keywords and
    competitors as one concept (any of them), the focus areas as another."""
    topic_terms = list(dict.fromkeys([*stream.keywords, *stream.competitors]))
    concepts = [Concept(term=topic_terms[0], synonyms=topic_terms[1:])] if topic_terms else []
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


def judge(records: Sequence[Record], stream: Stream) -> list[Judged]:
    """Each record's score (0-1) and reason, in the records' order."""
    relevances = lexical_relevance(records, stream_intent(stream))
    judged = []
    for record, relevance in zip(records, relevances, strict=True):
        found = match(record, stream)
        judged.append(Judged(round(relevance.score, 4), reason(found, relevance.reason), found))
    return judged
