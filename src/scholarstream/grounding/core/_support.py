"""The offline support score: does a cited record address the sentence that cites it?

Two readings of the record's title and abstract, averaged: the share of the sentence's
content words (stemmed) that the record uses, and the closest meaning of any one of its
sentences (cosine of embeddings). Measured on SciFact's cited abstracts (bench/citations.py),
the average separates "addresses the claim" from "does not" better than either alone; it
cannot tell support from contradiction, which needs a model."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import Stemmer
from pydantic import BaseModel, ConfigDict

from scholarstream.embeddings import Embedder
from scholarstream.papers import Paper
from scholarstream.understanding import STOP_WORDS

_STEMMER = Stemmer.Stemmer("english")
_WORD = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")
_ABSTRACT_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9(\[])")
# Headings that structured abstracts open sentences with ("RESULTS: ...") are not content.
_SECTION = re.compile(r"^[A-Z][A-Z /]{2,30}:\s*")
# What a cited sentence says about its sources rather than about the world: a synthesis's
# source labels ([M1], [R2]), DOIs, PMIDs and web addresses.
_NOT_THE_CLAIM = re.compile(
    r"\[[A-Z]\d+\]|\b(?:doi:\s*)?10\.\d{4,9}/\S+|\bPMID:?\s*\d+|https?://\S+", re.IGNORECASE
)


def claim_text(sentence: str) -> str:
    """The part of a cited sentence that makes its claim (see ``_NOT_THE_CLAIM``)."""
    return " ".join(_NOT_THE_CLAIM.sub(" ", sentence).split())


def content_words(text: str) -> set[str]:
    """The stemmed words of ``text`` that carry content (no stop words, no one-letter words)."""
    words = (w for w in _WORD.findall(text.lower()) if len(w) > 1 and w not in STOP_WORDS)
    return {_STEMMER.stemWord(w) for w in words}


def record_sentences(paper: Paper) -> list[str]:
    """The title, then the abstract's sentences."""
    sentences = [paper.title]
    for sentence in _ABSTRACT_SENTENCE.split(paper.abstract or ""):
        sentence = _SECTION.sub("", sentence.strip())
        if sentence:
            sentences.append(sentence)
    return sentences


class SupportScore(BaseModel):
    """How well a record addresses a sentence: ``score`` in [0, 1] and the record's sentence
    that addresses it best (the quote a reader checks)."""

    model_config = ConfigDict(extra="forbid")

    score: float
    coverage: float
    similarity: float | None
    quote: str


@dataclass(frozen=True)
class SupportScorer:
    """Scores (sentence, record) pairs; with no embedder, by words alone."""

    embedder: Embedder | None = None
    meaning_weight: float = 0.5

    def score(self, pairs: Sequence[tuple[str, Paper]]) -> list[SupportScore]:
        claims = [claim_text(claim) for claim, _ in pairs]
        records = [record_sentences(paper) for _, paper in pairs]
        similarities = self._similarities(claims, records)
        scores = []
        for claim, sentences, sims in zip(claims, records, similarities, strict=True):
            scores.append(self._combine(content_words(claim), sentences, sims))
        return scores

    def _combine(
        self, claim_words: set[str], sentences: list[str], sims: list[float] | None
    ) -> SupportScore:
        per_sentence = [content_words(s) for s in sentences]
        used = set().union(*per_sentence)
        coverage = len(claim_words & used) / len(claim_words) if claim_words else 0.0
        local = [len(claim_words & words) / max(1, len(claim_words)) for words in per_sentence]
        if sims is None:
            best = max(range(len(sentences)), key=lambda i: local[i])
            return SupportScore(
                score=coverage, coverage=coverage, similarity=None, quote=sentences[best]
            )
        similarity = max(0.0, max(sims))
        w = self.meaning_weight
        best = max(range(len(sentences)), key=lambda i: w * sims[i] + (1 - w) * local[i])
        return SupportScore(
            score=w * similarity + (1 - w) * coverage,
            coverage=coverage,
            similarity=similarity,
            quote=sentences[best],
        )

    def _similarities(
        self, claims: list[str], records: list[list[str]]
    ) -> list[list[float] | None]:
        if self.embedder is None or not claims:
            return [None] * len(claims)
        texts = list(dict.fromkeys([*claims, *(s for sentences in records for s in sentences)]))
        vectors = self.embedder.embed_documents(texts)
        row = {text: i for i, text in enumerate(texts)}
        out: list[list[float] | None] = []
        for claim, sentences in zip(claims, records, strict=True):
            sims = vectors[[row[s] for s in sentences]] @ vectors[row[claim]]
            out.append([float(v) for v in np.asarray(sims)])
        return out
