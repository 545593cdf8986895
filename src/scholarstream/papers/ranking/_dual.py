"""The relevance-feedback classifier's solver: regularised least squares in its dual form,
exact, updated judgement by judgement at a cost quadratic in the judged count.

Over the judged texts J the dual values ``a`` solve ``(K + 1 + D) a = y``: K their dot
products, 1 the (regularised) intercept, D_ii the ridge of text i's class, y = +1 for a
relevant text and -1 for an irrelevant one. An irrelevant text's ridge never changes (the
class weights in ``_feedback`` keep it fixed), so the irrelevant texts' block
``A = K_MM + 1 + d0`` is kept as the inverse of its Cholesky factor, ``Linv``, which grows
by one row per irrelevant judgement; the relevant texts -- few, and with a ridge that
moves with the counts -- join through their Schur complement, redone at every solve::

    u = Linv (-1),  C = Linv A_MR,  S = A_RR + d1 - C'C
    a_R = S^-1 (1 - C'u),  a_M = Linv' (u - C a_R)

``A`` is well conditioned (its eigenvalues lie between d0 and d0 + 2|M|, d0 about 50), so
the explicit inverse factor is as accurate as the factor; it only needs matrix-vector
products, which run on views of preallocated arrays without copies.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import numpy.typing as npt
from scipy import linalg

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
# rows(texts): the dot products of those texts with every text, (len(texts), all texts).
Rows = Callable[[IntArray], FloatArray]
# Texts are added this many at a time: their rows are held in memory together.
_CHUNK = 256


class _Square:
    """A square float array that grows by doubling; ``view(n)`` is its top-left n x n."""

    def __init__(self) -> None:
        self.data: FloatArray = np.zeros((0, 0), dtype=np.float64)

    def view(self, size: int) -> FloatArray:
        return self.data[:size, :size]

    def reserve(self, size: int) -> None:
        if size > len(self.data):
            grown = np.zeros((max(size, 2 * len(self.data), 64),) * 2, dtype=np.float64)
            old = len(self.data)
            grown[:old, :old] = self.data
            self.data = grown


class DualSolver:
    """The judged texts' dual values, kept up to date as judgements are added."""

    def __init__(self, rows: Rows, irrelevant_ridge: float) -> None:
        self.rows = rows
        self.irrelevant_ridge = irrelevant_ridge
        self.irrelevant: IntArray = np.zeros(0, dtype=np.int64)  # text indices, factor order
        self.relevant: IntArray = np.zeros(0, dtype=np.int64)
        self._inverse = _Square()  # Linv, lower triangular, over the irrelevant texts
        self._u: FloatArray = np.zeros(0, dtype=np.float64)
        self._coupling: FloatArray = np.zeros((0, 0), dtype=np.float64)  # C, |M| x |R|
        self._coupling_gram: FloatArray = np.zeros((0, 0), dtype=np.float64)  # C'C
        self._relevant_block: FloatArray = np.zeros((0, 0), dtype=np.float64)  # K_RR + 1

    def add(self, irrelevant: IntArray, relevant: IntArray) -> None:
        """Adds newly judged texts (never one already added)."""
        for start in range(0, len(irrelevant), _CHUNK):
            chunk = irrelevant[start : start + _CHUNK]
            self._add_irrelevant(chunk, self.rows(chunk) + 1.0)
        for start in range(0, len(relevant), _CHUNK):
            chunk = relevant[start : start + _CHUNK]
            self._add_relevant(chunk, self.rows(chunk) + 1.0)

    def _add_irrelevant(self, new: IntArray, extended: FloatArray) -> None:
        """``extended``: the new texts' rows of K + 1."""
        kept, added = len(self.irrelevant), len(new)
        inverse = self._inverse.view(kept)
        # The new rows of the factor: [L21 L22], L21 = (Linv A_MB)', L22 the Cholesky
        # factor of what is left of A_BB.
        projected = inverse @ extended[:, self.irrelevant].T  # L21', kept x added
        corner = extended[:, new] - projected.T @ projected
        corner[np.diag_indices_from(corner)] += self.irrelevant_ridge
        bottom = linalg.cholesky(corner, lower=True, check_finite=False)
        bottom_inverse = linalg.solve_triangular(
            bottom, np.eye(added), lower=True, check_finite=False
        )
        self._inverse.reserve(kept + added)
        rows = self._inverse.data[kept : kept + added]
        # Linv of [[L, 0], [L21, L22]] = [[Linv, 0], [-L22inv L21 Linv, L22inv]].
        rows[:, :kept] = -bottom_inverse @ (projected.T @ inverse)
        rows[:, kept : kept + added] = bottom_inverse
        self._u = np.concatenate([self._u, bottom_inverse @ (-1.0 - projected.T @ self._u)])
        coupling = bottom_inverse @ (extended[:, self.relevant] - projected.T @ self._coupling)
        self._coupling = np.vstack([self._coupling, coupling])
        self._coupling_gram = self._coupling_gram + coupling.T @ coupling
        self.irrelevant = np.concatenate([self.irrelevant, new])

    def _add_relevant(self, new: IntArray, extended: FloatArray) -> None:
        kept, added = len(self.relevant), len(new)
        inverse = self._inverse.view(len(self.irrelevant))
        columns = inverse @ extended[:, self.irrelevant].T
        cross = self._coupling.T @ columns
        gram = np.empty((kept + added,) * 2, dtype=np.float64)
        gram[:kept, :kept] = self._coupling_gram
        gram[:kept, kept:] = cross
        gram[kept:, :kept] = cross.T
        gram[kept:, kept:] = columns.T @ columns
        self._coupling_gram = gram
        self._coupling = np.hstack([self._coupling, columns])
        block = np.empty((kept + added,) * 2, dtype=np.float64)
        block[:kept, :kept] = self._relevant_block
        between = extended[:, self.relevant]
        block[:kept, kept:] = between.T
        block[kept:, :kept] = between
        block[kept:, kept:] = extended[:, new]
        self._relevant_block = block
        self.relevant = np.concatenate([self.relevant, new])

    def solve(self, relevant_ridge: float) -> tuple[FloatArray, FloatArray]:
        """The dual values of the irrelevant texts (in ``irrelevant``'s order) and of the
        relevant ones; needs at least one of each."""
        schur = self._relevant_block - self._coupling_gram
        schur[np.diag_indices_from(schur)] += relevant_ridge
        relevant = linalg.solve(
            schur, 1.0 - self._coupling.T @ self._u, assume_a="pos", check_finite=False
        )
        inverse = self._inverse.view(len(self.irrelevant))
        irrelevant = (self._u - self._coupling @ relevant) @ inverse
        return np.asarray(irrelevant, dtype=np.float64), np.asarray(relevant, dtype=np.float64)
