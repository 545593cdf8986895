"""The relevance-feedback (active learning) model: learns from the papers the user judged
and predicts, for the others, how likely each is relevant.

Two views of every text, each with its own linear SVM: TF-IDF of words and word pairs (the
recipe of ASReview's default model, ELAS u4) and TF-IDF of character 3-5-grams, which
sees that "zolmitriptan" is like "sumatriptan" and "NSAID" like "NSAIDs". Both are trained
with class weights that let the few relevant papers outweigh the many irrelevant ones.
Their evidence is averaged. ``bench/screening.py`` measured the choice (docs/search.md).

The features are built once over every text the model sees -- judged and unjudged papers
share one vocabulary, so a term seen only in candidates still weighs by its rarity -- and
``fit`` is cheap enough to run after each new judgement.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt
from scipy import sparse

if TYPE_CHECKING:
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.svm import LinearSVC

from scholarstream.errors import InvalidInputError

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]

_SMALL_CORPUS = 20  # below this many texts, document-frequency cut-offs would empty a view


@dataclass(frozen=True)
class FeedbackSettings:
    word_ngrams: tuple[int, int] = (1, 2)
    char_ngrams: tuple[int, int] = (3, 5)
    max_df: float = 0.95  # a term in nearly every text says nothing about relevance
    char_min_df: int = 2  # a character n-gram of one text only is noise
    c: float = 0.11  # SVM regularisation: strong, for a handful of labels
    # All relevant papers together weigh ``balance`` times as much as all irrelevant ones.
    balance: float = 9.8
    # Probability = sigmoid(scale * evidence); evidence 1 = as far from "no evidence" as
    # the judged papers' mean is (see ``_View.fit``). Ranking reads evidence only.
    probability_scale: float = 2.0
    random_state: int = 0


def _words(settings: FeedbackSettings, small: bool) -> TfidfVectorizer:
    # scikit-learn is imported on first use: it costs about a second at server start.
    from sklearn.feature_extraction.text import TfidfVectorizer

    return TfidfVectorizer(
        ngram_range=settings.word_ngrams,
        sublinear_tf=True,
        max_df=1.0 if small else settings.max_df,
    )


def _characters(settings: FeedbackSettings, small: bool) -> TfidfVectorizer:
    from sklearn.feature_extraction.text import TfidfVectorizer

    return TfidfVectorizer(
        analyzer="char_wb",
        ngram_range=settings.char_ngrams,
        sublinear_tf=True,
        max_df=1.0 if small else settings.max_df,
        min_df=1 if small else settings.char_min_df,
    )


# The views, as vectoriser factories: adding one is adding an entry.
VIEWS: dict[str, Callable[[FeedbackSettings, bool], TfidfVectorizer]] = {
    "words": _words,
    "characters": _characters,
}


class _View:
    def __init__(self, features: sparse.csr_matrix) -> None:
        self.features = features
        self.classifier: LinearSVC | None = None
        self.centre = 0.0
        self.spread = 1.0

    def fit(
        self, indices: IntArray, y: IntArray, weights: FloatArray, settings: FeedbackSettings
    ) -> None:
        from sklearn.svm import LinearSVC

        classifier = LinearSVC(C=settings.c, random_state=settings.random_state)
        classifier.fit(self.features[indices], y, sample_weight=weights)
        self.classifier = classifier
        # The class weights move the boundary toward "relevant", so a margin of 0 is not
        # 50%. A text sharing no term with the judged ones has the intercept as margin:
        # that is "no evidence either way". Half the gap between the judged relevant and
        # irrelevant papers' mean margins is one unit of evidence.
        trained = classifier.decision_function(self.features[indices])
        relevant, irrelevant = float(trained[y == 1].mean()), float(trained[y == 0].mean())
        self.centre = float(classifier.intercept_[0])
        self.spread = (relevant - irrelevant) / 2 if relevant > irrelevant else 1.0

    def evidence(self, wanted: IntArray) -> FloatArray:
        # No text wanted (an iteration that found nothing) is no question to ask the
        # classifier: scikit-learn refuses a prediction over zero samples.
        if self.classifier is None or len(wanted) == 0:
            return np.zeros(len(wanted), dtype=np.float64)
        margins = self.classifier.decision_function(self.features[wanted])
        return np.asarray((margins - self.centre) / self.spread, dtype=np.float64)


class FeedbackModel:
    """``FeedbackModel(texts)`` builds the features once; ``fit`` on the judged texts (by
    index), then ``probabilities`` or ``rank`` the others; refit after new judgements."""

    def __init__(self, texts: Sequence[str], settings: FeedbackSettings | None = None) -> None:
        self.settings = settings or FeedbackSettings()
        self.size = len(texts)
        small = len(texts) < _SMALL_CORPUS
        self._views: list[_View] = []
        for make in VIEWS.values():
            try:
                features = make(self.settings, small).fit_transform(texts)
            except ValueError:  # no term in any text (blank texts): nothing to learn from
                continue
            self._views.append(_View(sparse.csr_matrix(features)))

    @staticmethod
    def can_learn(labels: Iterable[bool]) -> bool:
        """Whether judgements are enough to learn from: at least one of each kind."""
        seen = set(labels)
        return True in seen and False in seen

    def _weights(self, y: IntArray) -> FloatArray:
        relevant = int(y.sum())
        irrelevant = len(y) - relevant
        weights = np.where(y == 1, 1.0, relevant / (self.settings.balance * irrelevant))
        return np.asarray(weights * len(y) / weights.sum(), dtype=np.float64)

    def fit(self, labels: Mapping[int, bool]) -> FeedbackModel:
        """Learns from ``labels`` (text index -> relevant); ``InvalidInputError`` unless
        they hold at least one relevant and one irrelevant text."""
        if not self.can_learn(labels.values()):
            raise InvalidInputError(
                "The relevance-feedback model needs at least one relevant and one "
                "irrelevant paper to learn from.",
                hint="Mark at least one paper of each kind.",
            )
        indices = np.fromiter(labels.keys(), dtype=np.int64)
        y = np.fromiter((int(v) for v in labels.values()), dtype=np.int64)
        weights = self._weights(y)
        for view in self._views:
            view.fit(indices, y, weights, self.settings)
        return self

    def evidence(self, indices: Sequence[int] | None = None) -> FloatArray:
        """How strongly each text looks like the relevant rather than the irrelevant ones
        (0 = no evidence either way), averaged over the views; empty for no ``indices``."""
        wanted = np.arange(self.size) if indices is None else np.asarray(indices, dtype=np.int64)
        if not self._views or len(wanted) == 0:
            return np.zeros(len(wanted), dtype=np.float64)
        return np.asarray(
            np.mean([view.evidence(wanted) for view in self._views], axis=0), dtype=np.float64
        )

    def probabilities(self, indices: Sequence[int] | None = None) -> FloatArray:
        """Probability of relevance, 0-1 (0.5 where the model has nothing to go on)."""
        scaled = self.settings.probability_scale * self.evidence(indices)
        return np.asarray(1.0 / (1.0 + np.exp(-scaled)), dtype=np.float64)

    def rank(self, indices: Sequence[int]) -> list[int]:
        """``indices`` best first; ties keep the given order."""
        order = np.argsort(-self.evidence(indices), kind="stable")
        return [int(indices[i]) for i in order]
