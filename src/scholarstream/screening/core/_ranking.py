"""Which record a reviewer screens next.

Once the reviewer has included one record and excluded another, the active-learning
ranker (``papers.ranking.FeedbackModel``, the relevance-feedback model ``bench/screening.py``
measures) is refitted on their decisions and the unscreened record it rates likeliest
relevant comes next. Before that, records come in order of relevance to the review's
keywords and question: the share of the keywords a record mentions and the TF-IDF
cosine of its text with the keywords and question, averaged."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
from sklearn.feature_extraction.text import TfidfVectorizer

from scholarstream.papers import Paper, Record
from scholarstream.papers.ranking import FeedbackModel, record_text
from scholarstream.screening.core._highlight import keywords_found

Basis = Literal["ranker", "keywords", "order"]
"""What chose a record: the refitted ranker, relevance to the keywords and question, or
(nothing to go on) the order the records were added in."""

BASIS_NOTES: dict[Basis, str] = {
    "ranker": "Chosen by the active-learning ranker, refitted on your decisions so far.",
    "keywords": "Chosen by relevance to the review's keywords and question (the ranker "
    "learns once you have included one record and excluded another).",
    "order": "Shown in the order the records were added (give the project keywords or a "
    "question to order them by relevance).",
}


def screening_text(record: Record) -> str:
    """What the ranker reads: the record's title, abstract, keywords and subject terms."""
    return record_text(record)


def abstract_of(record: Record) -> str:
    return (record.abstract or "") if isinstance(record, Paper) else (record.summary or "")


def relevance_scores(texts: Sequence[str], keywords: Sequence[str], question: str) -> list[float]:
    """Each text's relevance (0-1) to the keywords and question; all 0 with neither."""
    query = " ".join([*(k.rstrip("*") for k in keywords for _ in range(2)), question]).strip()
    if not query or not texts:
        return [0.0] * len(texts)
    share = np.array(
        [len(keywords_found(text, keywords)) / len(keywords) if keywords else 0.0 for text in texts]
    )
    try:
        vectorizer = TfidfVectorizer(stop_words="english", ngram_range=(1, 2), sublinear_tf=True)
        matrix = vectorizer.fit_transform([*texts, query])
    except ValueError:  # no usable word anywhere
        cosine = np.zeros(len(texts))
    else:
        cosine = np.asarray((matrix[:-1] @ matrix[-1].T).toarray()).ravel()
    weight = 0.5 if keywords else 0.0
    scores = weight * share + (1 - weight) * cosine
    return [float(min(1.0, max(0.0, s))) for s in scores]


@dataclass(frozen=True)
class Choice:
    index: int
    score: float | None
    basis: Basis


def learnable(labels: Mapping[int, bool]) -> bool:
    return FeedbackModel.can_learn(labels.values())


def rank_unscreened(
    unscreened: Sequence[int],
    labels: Mapping[int, bool],
    relevance: Sequence[float],
    model: FeedbackModel | None,
) -> list[Choice]:
    """``unscreened`` best first. ``labels``: index -> included (the reviewer's includes
    and excludes); ``model``: the ranker over every record's text, or None while it is not
    ready (the keyword order stands in)."""
    if not unscreened:
        return []
    if model is not None and learnable(labels):
        model.fit(labels)
        ranked = model.rank(list(unscreened))
        probabilities = model.probabilities(ranked)
        return [
            Choice(index, float(p), "ranker")
            for index, p in zip(ranked, probabilities, strict=True)
        ]
    if any(relevance[i] > 0 for i in unscreened):
        ordered = sorted(unscreened, key=lambda i: -relevance[i])
        return [Choice(i, relevance[i], "keywords") for i in ordered]
    return [Choice(i, None, "order") for i in unscreened]
