"""The relevance-feedback (active learning) model: learns from the papers the user judged
and predicts, for the others, how likely each is relevant.

Views of every text: TF-IDF of words and word pairs (the recipe of ASReview's default
model, ELAS u4), TF-IDF of character 3-5-grams, which sees that "zolmitriptan" is like
"sumatriptan" and "NSAID" like "NSAIDs", and, when the caller has them, the titles'
meaning (unit-length sentence embeddings), which sees that "dopamine antagonists for
migraine" is about the same as "neuroleptics in acute headache" though no word is
shared. One linear classifier reads them all (each view's rows have unit length and a
weight, ``FeedbackSettings.meaning_weight`` for the meaning), trained with class weights
that let the few relevant papers outweigh the many irrelevant ones.
``bench/screening.py`` measured the choices (docs/search.md).

The classifier is a regularised least-squares one (the squared hinge of a linear SVM
with every judged paper inside the margin, which is where strong regularisation puts
them), solved in its dual form: it needs only the dot products of the judged texts'
feature vectors with every text. Those are computed once per judged text and kept, so a
refit after a new judgement costs one small linear system over the judged texts, never
a pass over the features. The features are built once over every text the model sees --
judged and unjudged papers share one vocabulary, so a term seen only in candidates still
weighs by its rarity.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np
import numpy.typing as npt
from scipy import sparse

if TYPE_CHECKING:
    from sklearn.feature_extraction.text import TfidfVectorizer

from scholarstream.errors import InvalidInputError
from scholarstream.papers.ranking._char_grams import CharacterGrams
from scholarstream.papers.ranking._kernel_ridge import KernelRidgeSolver

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
Embed = Callable[[list[str]], npt.NDArray[np.float32]]
log = logging.getLogger(__name__)

_SMALL_CORPUS = 20  # below this many texts, document-frequency cut-offs would empty a view
# Dot products are computed for this many texts at once: the judged ones that lack them,
# then the best-ranked unjudged ones (the likely next judgements). One sparse product for
# a batch costs far less than one per text.
_BATCH = 32
_RIDGE_STEP = 1.02  # see ``FeedbackModel.fit``


@dataclass(frozen=True)
class FeedbackSettings:
    word_ngrams: tuple[int, int] = (1, 2)
    char_ngrams: tuple[int, int] = (3, 5)
    max_df: float = 0.95  # a term in nearly every text says nothing about relevance
    char_min_df: int = 2  # a character n-gram of one text only is noise
    c: float = 0.11  # regularisation (as a linear SVM's C): strong, for a handful of labels
    # All relevant papers together weigh ``balance`` times as much as all irrelevant ones.
    balance: float = 9.8
    # Probability = sigmoid(scale * evidence); evidence 1 = as far from "no evidence" as
    # the judged papers' mean is (see ``FeedbackModel.fit``). Ranking reads evidence only.
    probability_scale: float = 2.0
    # How much the titles' meaning weighs beside the words and the characters (1 each).
    meaning_weight: float = 0.35
    # Kept for compatibility: the solver is exact and deterministic, nothing is drawn.
    random_state: int = 0


def _words(settings: FeedbackSettings, small: bool) -> TfidfVectorizer:
    # scikit-learn is imported on first use: it costs about a second at server start.
    from sklearn.feature_extraction.text import TfidfVectorizer

    return TfidfVectorizer(
        ngram_range=settings.word_ngrams,
        sublinear_tf=True,
        max_df=1.0 if small else settings.max_df,
    )


def _characters(settings: FeedbackSettings, small: bool) -> CharacterGrams:
    return CharacterGrams(
        settings.char_ngrams,
        max_df=1.0 if small else settings.max_df,
        min_df=1 if small else settings.char_min_df,
    )


class Vectoriser(Protocol):
    def fit_transform(self, raw_documents: Sequence[str], /) -> Any: ...


# The views, as vectoriser factories: adding one is adding an entry.
VIEWS: dict[str, Callable[[FeedbackSettings, bool], Vectoriser]] = {
    "words": _words,
    "characters": _characters,
}


class _Similarities:
    """Dot products of the texts' feature vectors (the views side by side, each scaled to
    weigh the same): one row per text asked for, against every text, kept once computed.
    They are kept in single precision: ranking needs no more, and every refit reads them
    all, so half the bytes is half the time."""

    def __init__(self, features: sparse.csr_matrix) -> None:
        self.features = features
        self.transposed = sparse.csr_matrix(features.T)
        self.size = features.shape[0]
        self.slot = np.full(self.size, -1, dtype=np.int64)
        self.rows: npt.NDArray[np.float32] = np.empty((0, self.size), dtype=np.float32)
        self.count = 0

    def ensure(self, needed: IntArray, likely: IntArray) -> None:
        """Computes the rows of ``needed``, and of ``likely`` to fill the batch."""
        missing = list(dict.fromkeys(int(i) for i in needed if self.slot[i] < 0))
        if not missing:
            return
        room = -len(missing) % _BATCH
        if room:
            taken = set(missing)
            missing += [int(i) for i in likely if self.slot[i] < 0 and int(i) not in taken][:room]
        total = self.count + len(missing)
        if total > len(self.rows):
            grown = np.empty((max(total, 2 * len(self.rows)), self.size), dtype=np.float32)
            grown[: self.count] = self.rows[: self.count]
            self.rows = grown
        for start in range(0, len(missing), _BATCH):
            batch = missing[start : start + _BATCH]
            block = (self.features[batch] @ self.transposed).toarray()
            self.rows[self.count : self.count + len(batch)] = block
            self.slot[batch] = np.arange(self.count, self.count + len(batch))
            self.count += len(batch)

    def block(self, rows: IntArray, columns: IntArray) -> FloatArray:
        """Dot products of ``rows`` (computed) with ``columns``."""
        return np.asarray(self.rows[self.slot[rows]][:, columns], dtype=np.float64)

    def combine(self, judged: IntArray, weights: FloatArray) -> FloatArray:
        """sum_i weights_i x_judged_i . x_t for every text t (``judged`` computed)."""
        by_slot = np.zeros(self.count, dtype=np.float32)
        by_slot[self.slot[judged]] = weights
        return np.asarray(by_slot @ self.rows[: self.count], dtype=np.float64)


def title_meaning(titles: Sequence[str], embed: Embed) -> npt.NDArray[np.float32] | None:
    """The ``meaning`` of ``FeedbackModel``: the titles embedded by ``embed`` (unit rows),
    a zero row for a record without a title; None when no record has one."""
    titled = [i for i, title in enumerate(titles) if title.strip()]
    if not titled:
        return None
    found = embed([titles[i] for i in titled])
    vectors = np.zeros((len(titles), found.shape[1]), dtype=np.float32)
    vectors[titled] = found
    return vectors


def feedback_model(
    texts: Sequence[str],
    titles: Sequence[str],
    embed: Embed | None,
    settings: FeedbackSettings | None = None,
) -> FeedbackModel:
    """``FeedbackModel`` over ``texts`` reading the ``titles``' meaning when ``embed`` (an
    embedding model's ``embed_documents``) is given and runs; a model that fails is
    logged and the words alone are read."""
    meaning = None
    if embed is not None:
        try:
            meaning = title_meaning(titles, embed)
        except Exception:
            log.exception("the embedding model failed: ranking by words alone")
    return FeedbackModel(texts, settings, meaning=meaning)


class FeedbackModel:
    """``FeedbackModel(texts)`` builds the features once; ``fit`` on the judged texts (by
    index), then ``probabilities`` or ``rank`` the others; refit after new judgements.
    ``meaning``: one unit-length embedding per text (a zero row for a text without one),
    to add the meaning view."""

    def __init__(
        self,
        texts: Sequence[str],
        settings: FeedbackSettings | None = None,
        *,
        meaning: npt.NDArray[np.float32] | None = None,
    ) -> None:
        self.settings = settings or FeedbackSettings()
        self.size = len(texts)
        small = len(texts) < _SMALL_CORPUS
        views: list[tuple[sparse.csr_matrix, float]] = []
        for make in VIEWS.values():
            try:
                features = make(self.settings, small).fit_transform(texts)
            except ValueError:  # no term in any text (blank texts): nothing to learn from
                continue
            views.append((sparse.csr_matrix(features), 1.0))
        if views and meaning is not None and self.settings.meaning_weight > 0:
            if meaning.shape[0] != self.size:
                raise ValueError(f"{meaning.shape[0]} embeddings for {self.size} texts")
            views.append(
                (sparse.csr_matrix(meaning, dtype=np.float64), self.settings.meaning_weight)
            )
        # Rows have unit length in each view (TF-IDF's norm); scaled by weight/sqrt(sum of
        # squared weights), a dot product of two texts is the weighted mean of their cosine
        # similarities over the views.
        self._similarities = (
            _Similarities(
                sparse.csr_matrix(
                    sparse.hstack([features * weight for features, weight in views])
                    / math.sqrt(sum(weight**2 for _, weight in views))
                )
            )
            if views
            else None
        )
        self._solver = KernelRidgeSolver()
        self._judged: IntArray = np.zeros(0, dtype=np.int64)
        self._dual: FloatArray = np.zeros(0, dtype=np.float64)
        self._spread = 1.0
        self._evidence: FloatArray | None = None

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
        if self._similarities is None:
            return self
        judged = self._solver.order(labels)
        y = np.fromiter((int(labels[int(i)]) for i in judged), dtype=np.int64)
        self._similarities.ensure(judged, self._likely_next(judged))
        # Minimise |w|^2 / 2 + sum_i c_i (y_i - w.x_i)^2 over w = sum_i dual_i x_i, with
        # x extended by a constant 1 (the intercept, regularised as liblinear does):
        # (K + 1 + D) dual = y, K the judged texts' dot products, D_ii = 1 / (2 c_i).
        ridge = 1.0 / (2.0 * self.settings.c * self._weights(y))
        # The irrelevant texts' ridge moves in steps of _RIDGE_STEP (it is redone in
        # the solver's factor when it moves); the relevant texts' follows every fit.
        steps = round(math.log(float(ridge[y == 0][0])) / math.log(_RIDGE_STEP))
        irrelevant_ridge = _RIDGE_STEP**steps
        similarities = self._similarities

        def kernel(rows: IntArray, columns: IntArray) -> FloatArray:
            return similarities.block(rows, columns) + 1.0

        relevant_ridge = float(ridge[y == 1][0])
        dual = self._solver.solve(kernel, judged, y, (irrelevant_ridge, relevant_ridge))
        # The class weights move the boundary toward "relevant", so a margin of 0 is not
        # 50%. A text sharing no term with the judged ones has the intercept as margin:
        # that is "no evidence either way". Half the gap between the judged relevant and
        # irrelevant papers' mean margins is one unit of evidence.
        # The judged texts' margins, (K + 1) dual, are y - D dual by the system above.
        targets = np.where(y == 1, 1.0, -1.0)
        trained = targets - np.where(y == 1, relevant_ridge, irrelevant_ridge) * dual
        relevant, irrelevant = float(trained[y == 1].mean()), float(trained[y == 0].mean())
        self._spread = (relevant - irrelevant) / 2 if relevant > irrelevant else 1.0
        self._judged, self._dual = judged, dual
        self._evidence = None
        return self

    def _likely_next(self, judged: IntArray) -> IntArray:
        """The unjudged texts the last fit ranked best: likely the next judgements."""
        if self._evidence is None:
            return np.zeros(0, dtype=np.int64)
        evidence = self._evidence.copy()
        evidence[judged] = -np.inf
        count = min(_BATCH, self.size - 1)
        top = np.argpartition(-evidence, count)[:count] if count > 0 else np.arange(0)
        return np.asarray(top[np.isfinite(evidence[top])], dtype=np.int64)

    def _all_evidence(self) -> FloatArray:
        if self._evidence is None:
            if self._similarities is None or len(self._judged) == 0:
                self._evidence = np.zeros(self.size, dtype=np.float64)
            else:
                margins = self._similarities.combine(self._judged, self._dual)
                self._evidence = np.asarray(margins / self._spread, dtype=np.float64)
        return self._evidence

    def evidence(self, indices: Sequence[int] | None = None) -> FloatArray:
        """How strongly each text looks like the relevant rather than the irrelevant ones
        (0 = no evidence either way); empty for no ``indices``."""
        wanted = np.arange(self.size) if indices is None else np.asarray(indices, dtype=np.int64)
        if len(wanted) == 0:
            return np.zeros(0, dtype=np.float64)
        return np.asarray(self._all_evidence()[wanted], dtype=np.float64)

    def probabilities(self, indices: Sequence[int] | None = None) -> FloatArray:
        """Probability of relevance, 0-1 (0.5 where the model has nothing to go on)."""
        scaled = self.settings.probability_scale * self.evidence(indices)
        return np.asarray(1.0 / (1.0 + np.exp(-scaled)), dtype=np.float64)

    def rank(self, indices: Sequence[int]) -> list[int]:
        """``indices`` best first; ties keep the given order."""
        order = np.argsort(-self.evidence(indices), kind="stable")
        return [int(indices[i]) for i in order]
