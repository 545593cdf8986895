"""The relevance-feedback (active learning) model: learns from the papers the user judged
and predicts, for the others, how likely each is relevant.

TF-IDF features over every text the model sees (the judged and the unjudged papers share
one vocabulary, so a term seen only in candidates still weighs by its rarity), and a linear
SVM trained with class weights that let the few relevant papers count as much as the many
irrelevant ones -- the recipe of ASReview's default model (ELAS u4), with the choices
``bench/screening.py`` measured: see ``docs/search.md``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from scipy import sparse
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.svm import LinearSVC

from scholarstream.errors import InvalidInputError

FloatArray = npt.NDArray[np.float64]


@dataclass(frozen=True)
class FeedbackSettings:
    ngram_range: tuple[int, int] = (1, 2)
    max_df: float = 0.95  # a term in nearly every text says nothing about relevance
    c: float = 0.11  # SVM regularisation: strong, for a handful of labels
    # Relevant papers weigh as much as ``balance`` times their count in irrelevant ones.
    balance: float = 9.8
    # Probability = sigmoid(scale * evidence), evidence measured in half the gap between
    # the judged relevant and irrelevant papers' mean margins. Only the blending with
    # the intent reads it; ranking uses the margins' order.
    probability_scale: float = 2.0
    random_state: int = 0


class FeedbackModel:
    """``FeedbackModel(texts)`` builds the features once; ``fit`` on the judged ones (by
    index) may then run after every new judgement."""

    def __init__(self, texts: Sequence[str], settings: FeedbackSettings | None = None) -> None:
        self.settings = settings or FeedbackSettings()
        self.size = len(texts)
        self._features = self._vectorise(texts)
        self._classifier: LinearSVC | None = None
        self._centre = 0.0
        self._spread = 1.0

    def _vectorise(self, texts: Sequence[str]) -> sparse.csr_matrix | None:
        s = self.settings
        # With a few texts, max_df would drop every shared term: keep them all.
        max_df = s.max_df if len(texts) >= 20 else 1.0
        vectoriser = TfidfVectorizer(ngram_range=s.ngram_range, sublinear_tf=True, max_df=max_df)
        try:
            return vectoriser.fit_transform(texts).tocsr()
        except ValueError:  # no text has a word in it: nothing to learn from
            return None

    @staticmethod
    def can_learn(labels: Iterable[bool]) -> bool:
        """Whether judgements are enough to learn from: at least one of each kind."""
        seen = set(labels)
        return True in seen and False in seen

    def _weights(self, y: npt.NDArray[np.int_]) -> FloatArray:
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
        if self._features is None:
            return self
        indices = np.fromiter(labels.keys(), dtype=np.int64)
        y = np.fromiter((int(v) for v in labels.values()), dtype=np.int64)
        classifier = LinearSVC(C=self.settings.c, random_state=self.settings.random_state)
        classifier.fit(self._features[indices], y, sample_weight=self._weights(y))
        self._classifier = classifier
        # The class weights move the boundary toward "relevant", so a margin of 0 is not
        # 50%. A text sharing no term with the judged ones has the intercept as margin:
        # that is "no evidence either way", 50%. The judged papers set the scale.
        trained = self.margins(indices.tolist())
        relevant, irrelevant = float(trained[y == 1].mean()), float(trained[y == 0].mean())
        self._centre = float(classifier.intercept_[0])
        self._spread = (relevant - irrelevant) / 2 if relevant > irrelevant else 1.0
        return self

    def margins(self, indices: Sequence[int] | None = None) -> FloatArray:
        """Signed distance from the learnt boundary (higher = more likely relevant)."""
        wanted = np.arange(self.size) if indices is None else np.asarray(indices, dtype=np.int64)
        if self._features is None or self._classifier is None:
            return np.zeros(len(wanted), dtype=np.float64)
        return np.asarray(
            self._classifier.decision_function(self._features[wanted]), dtype=np.float64
        )

    def probabilities(self, indices: Sequence[int] | None = None) -> FloatArray:
        """Probability of relevance, 0-1 (0.5 where the model has nothing to go on)."""
        z = (self.margins(indices) - self._centre) / self._spread
        return np.asarray(1.0 / (1.0 + np.exp(-self.settings.probability_scale * z)))

    def rank(self, indices: Sequence[int]) -> list[int]:
        """``indices`` best first; ties keep the given order."""
        order = np.argsort(-self.margins(indices), kind="stable")
        return [int(indices[i]) for i in order]
