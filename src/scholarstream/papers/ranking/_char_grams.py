"""TF-IDF of character n-grams inside word boundaries: the same features as scikit-learn's
``TfidfVectorizer(analyzer="char_wb")``, built several times faster.

A word's padded n-grams do not depend on the text it is in, so each distinct word is cut
into n-grams once; a text's n-gram counts are then its word counts times the words'
n-gram counts, one sparse product instead of a Python loop over every n-gram of every
text.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from scipy import sparse


def _grams(word: str, smallest: int, largest: int) -> list[str]:
    # As scikit-learn's char_wb: the word padded with a space each side; a word shorter
    # than n gives one (short) n-gram, counted once.
    padded = f" {word} "
    grams: list[str] = []
    for n in range(smallest, largest + 1):
        if len(padded) <= n:
            grams.append(padded)
            break
        grams.extend(padded[i : i + n] for i in range(len(padded) - n + 1))
    return grams


def _word_counts(texts: Sequence[str]) -> tuple[sparse.csr_matrix, list[str]]:
    vocabulary: dict[str, int] = {}
    indices: list[int] = []
    pointers = [0]
    for text in texts:
        for word in text.lower().split():
            indices.append(vocabulary.setdefault(word, len(vocabulary)))
        pointers.append(len(indices))
    counts = sparse.csr_matrix(
        (np.ones(len(indices), dtype=np.int64), indices, pointers),
        shape=(len(texts), len(vocabulary)),
    )
    counts.sum_duplicates()
    return counts, list(vocabulary)


class CharacterGrams:
    """``fit_transform(texts)``: TF-IDF rows (sublinear tf, smoothed idf, unit length) of
    the texts' character n-grams; n-grams in fewer than ``min_df`` texts or in more than
    ``max_df`` of them are left out. ``ValueError`` when none is left."""

    def __init__(self, ngram_range: tuple[int, int], max_df: float, min_df: int) -> None:
        self.ngram_range = ngram_range
        self.max_df = max_df
        self.min_df = min_df

    def fit_transform(self, texts: Sequence[str]) -> sparse.csr_matrix:
        words, vocabulary = _word_counts(texts)
        grams: dict[str, int] = {}
        rows: list[int] = []
        columns: list[int] = []
        for row, word in enumerate(vocabulary):
            for gram in _grams(word, *self.ngram_range):
                rows.append(row)
                columns.append(grams.setdefault(gram, len(grams)))
        if not grams:
            raise ValueError("no character n-gram in any text")
        spelling = sparse.csr_matrix(
            (np.ones(len(rows), dtype=np.int64), (rows, columns)),
            shape=(len(vocabulary), len(grams)),
        )
        counts = sparse.csr_matrix(words @ spelling)
        document_frequency = np.bincount(counts.indices, minlength=counts.shape[1])
        kept = (document_frequency >= self.min_df) & (
            document_frequency <= self.max_df * len(texts)
        )
        if not kept.any():
            raise ValueError("no character n-gram left after the document-frequency cut")
        counts = sparse.csr_matrix(counts[:, kept], dtype=np.float64)
        frequency = document_frequency[kept]
        counts.data = 1.0 + np.log(counts.data)
        idf = np.log((1.0 + len(texts)) / (1.0 + frequency)) + 1.0
        weighted = sparse.csr_matrix(counts @ sparse.diags(idf))
        lengths = np.sqrt(np.asarray(weighted.multiply(weighted).sum(axis=1)).ravel())
        lengths[lengths == 0] = 1.0
        return sparse.csr_matrix(sparse.diags(1.0 / lengths) @ weighted)
