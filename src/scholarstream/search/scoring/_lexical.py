"""Offline relevance: BM25 over the candidates with a query built from the intent, and
how many of the intent's concepts each paper mentions.

Coverage carries most of the score so that a paper naming every concept beats one that
repeats a single word many times (which BM25 alone would favour).
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass

import bm25s
import numpy as np
import numpy.typing as npt

from scholarstream.papers import Record
from scholarstream.papers.ranking import mention_phrase, record_text
from scholarstream.search.core import ParsedIntent
from scholarstream.search.scoring._ranking import OfflineScorer, Relevance
from scholarstream.sources.library import query_tokens, tokenize

COVERAGE_SHARE = 0.6  # of the score; BM25 (relative to the best candidate) has the rest
EXCLUDED_PENALTY = 0.5  # a paper naming a term the user excluded keeps half its score
# Query-token weights by where the token comes from in the intent.
_TOPIC_WEIGHT = 1.0
_TERM_WEIGHT = 1.0
_SYNONYM_WEIGHT = 0.5
_PICO_WEIGHT = 0.5
_MAX_NAMED = 4  # concepts named in a reason


@dataclass(frozen=True)
class _Concept:
    label: str
    phrases: tuple[str, ...]  # stemmed, stop words out, space-padded for substring search


def _phrase(text: str) -> str | None:
    tokens = query_tokens(text)
    return f" {' '.join(tokens)} " if tokens else None


def _concept(label: str, terms: Sequence[str]) -> _Concept | None:
    phrases = tuple(dict.fromkeys(p for p in map(_phrase, terms) if p))
    return _Concept(label, phrases) if phrases else None


def _concepts(intent: ParsedIntent) -> tuple[list[_Concept], str]:
    """The ideas coverage counts, and what a reason calls them: the intent's concepts,
    else its PICO elements, else the words of its topic."""
    if intent.concepts:
        found = [_concept(c.term, c.all_terms) for c in intent.concepts]
        noun = "concept"
    elif intent.pico and intent.pico.present():
        found = [_concept(value, [value]) for value in intent.pico.present().values()]
        noun = "PICO element"
    else:
        found = [_concept(word, [word]) for word in dict.fromkeys(intent.topic.split())]
        noun = "topic word"
    return [c for c in found if c is not None], noun


def _query_weights(intent: ParsedIntent) -> dict[str, float]:
    weights: dict[str, float] = {}

    def add(text: str, weight: float) -> None:
        for token in dict.fromkeys(query_tokens(text)):
            weights[token] = weights.get(token, 0.0) + weight

    add(intent.topic, _TOPIC_WEIGHT)
    for concept in intent.concepts:
        add(concept.term, _TERM_WEIGHT)
        for synonym in concept.synonyms:
            add(synonym, _SYNONYM_WEIGHT)
    if intent.pico:
        for value in intent.pico.present().values():
            add(value, _PICO_WEIGHT)
    return weights


def _bm25(docs: bm25s.tokenization.Tokenized, weights: dict[str, float]) -> npt.NDArray[np.float64]:
    total = np.zeros(len(docs.ids), dtype=np.float64)
    if not weights or not docs.vocab:  # nothing to search for, or nothing but stop words
        return total
    retriever = bm25s.BM25()
    retriever.index(docs, show_progress=False)
    for token, weight in weights.items():
        if token in retriever.vocab_dict:
            total += weight * retriever.get_scores([token])
    return total


def _names(concepts: Sequence[_Concept]) -> str:
    names = [c.label for c in concepts[:_MAX_NAMED]]
    more = len(concepts) - len(names)
    return ", ".join(names) + (f" and {more} more" if more > 0 else "")


def _coverage_reason(
    record: Record,
    matched: Sequence[_Concept],
    concepts: Sequence[_Concept],
    noun: str,
    lexical: float,
) -> str:
    subject = mention_phrase(record)
    total = len(concepts)
    if total == 0:
        return f"{subject} {'some' if lexical > 0 else 'none'} of the words of the topic."
    plural = f"{noun}s" if total > 1 else noun
    if not matched:
        absent = mention_phrase(record, negated=True)
        named = f"the {noun}: {concepts[0].label}" if total == 1 else f"any of the {total} {plural}"
        some = ", only some words of the topic" if lexical > 0 else ""
        return f"{absent} {named}{some}."
    if len(matched) == total:
        counted = {1: f"the {noun}", 2: f"both {plural}"}.get(total, f"all {total} {plural}")
    else:
        counted = f"{len(matched)} of {total} {plural}"
    return f"{subject} {counted}: {_names(matched)}."


@dataclass(frozen=True)
class Words:
    """A record's relevance by its words, before any penalty for an excluded term."""

    score: float
    reason: str
    excluded: str | None  # the first term the user excluded that the record mentions


def word_relevance(records: Sequence[Record], intent: ParsedIntent) -> list[Words]:
    """Each record's relevance by its words, with a reason naming what matched."""
    if not records:
        return []
    docs = tokenize([record_text(record) for record in records])
    vocabulary = {index: token for token, index in docs.vocab.items()}
    bm25 = _bm25(docs, _query_weights(intent))
    best = float(bm25.max())
    relative = bm25 / best if best > 0 else bm25
    concepts, noun = _concepts(intent)
    excluded = [(term, p) for term in intent.exclude_terms if (p := _phrase(term))]
    found = []
    for record, ids, lexical in zip(records, docs.ids, relative, strict=True):
        text = f" {' '.join(vocabulary[i] for i in ids)} "
        matched = [c for c in concepts if any(p in text for p in c.phrases)]
        if concepts:
            score = COVERAGE_SHARE * len(matched) / len(concepts)
            score += (1 - COVERAGE_SHARE) * float(lexical)
        else:
            score = float(lexical)
        reason = _coverage_reason(record, matched, concepts, noun, float(lexical))
        named = [term for term, p in excluded if p in text]
        found.append(Words(min(1.0, max(0.0, score)), reason, named[0] if named else None))
    return found


def penalised(score: float, reason: str, excluded: str | None) -> tuple[float, str]:
    """``score`` and ``reason`` of a record that mentions the ``excluded`` term (if any)."""
    if excluded is None:
        return score, reason
    return (
        score * EXCLUDED_PENALTY,
        f"{reason.rstrip('.')}; but mentions the excluded term {excluded!r}.",
    )


def lexical_relevance(records: Sequence[Record], intent: ParsedIntent) -> list[Relevance]:
    """Each record's relevance to the intent, with a reason naming what matched."""
    return [
        Relevance(*penalised(words.score, words.reason, words.excluded))
        for words in word_relevance(records, intent)
    ]


class LexicalRelevanceScorer(OfflineScorer):
    """The offline ``RelevanceScorer``: no model calls."""

    async def relevance(self, records: Sequence[Record], intent: ParsedIntent) -> list[Relevance]:
        return await asyncio.to_thread(lexical_relevance, list(records), intent)
