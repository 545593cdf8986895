"""The relevance-feedback model's solver: a weighted kernel ridge regression over the
judged texts, updated in place as judgements arrive.

It solves (M + D) a = t, where M holds the judged texts' dot products plus 1 (the
intercept), t is +1 for a relevant text and -1 for an irrelevant one, and D is diagonal:
one ridge for the irrelevant texts, another for the relevant. The relevant one may
change at every fit; the irrelevant one is in the factor below, which is redone when it
changes (the model moves it in steps, a few times in a long run, mostly while the run is
short and the factor cheap). Ordered irrelevant texts first, the system splits into
blocks:

    [A_II  A_IR    ] [a_I]   [t_I]      A_II = M_II + its ridge = U'U (Cholesky)
    [A_RI  A_RR + D] [a_R] = [t_R]      C = U'^-1 A_IR,  h = U'^-1 t_I

    (A_RR + D - C'C) a_R = t_R - C'h,   a_I = U^-1 (h - C a_R)

U, C, h, C'C and C'h only ever grow: an irrelevant judgement appends a column to U (one
triangular solve), a row to C and an entry to h; a relevant one appends a column to C.
A fit then costs one solve over the few relevant texts and one triangular solve over the
irrelevant ones: quadratic in the judged count, with no refactorisation and no
iteration. U is kept packed (column-major upper triangle), so a column is appended in
place and BLAS reads the factor without copying it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import numpy as np
import numpy.typing as npt
from scipy import linalg
from scipy.linalg import blas

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
Kernel = Callable[[IntArray, IntArray], FloatArray]
"""``kernel(rows, columns)``: M (dot products plus 1) of those texts."""

_START = 64  # initial capacity, in texts, of the growing buffers


def _grown(buffer: FloatArray, shape: tuple[int, ...]) -> FloatArray:
    """``buffer`` with room for ``shape`` (doubling), its content kept."""
    if all(have >= need for have, need in zip(buffer.shape, shape, strict=True)):
        return buffer
    larger = tuple(max(need, 2 * have) for have, need in zip(buffer.shape, shape, strict=True))
    grown = np.zeros(larger, dtype=np.float64)
    grown[tuple(slice(0, have) for have in buffer.shape)] = buffer
    return grown


class KernelRidgeSolver:
    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        self.irrelevant_ridge = 0.0  # the one in the factor
        self.judged: IntArray = np.zeros(0, dtype=np.int64)
        self.labels: IntArray = np.zeros(0, dtype=np.int64)
        self.irrelevant: list[int] = []  # text indices, in factor order
        self.relevant: list[int] = []
        self.packed: FloatArray = np.zeros(_START * (_START + 1) // 2, dtype=np.float64)
        self.coupling: FloatArray = np.zeros((_START, 8), dtype=np.float64)  # C
        self.half: FloatArray = np.zeros(_START, dtype=np.float64)  # h
        self.coupling_gram: FloatArray = np.zeros((0, 0), dtype=np.float64)  # C'C
        self.coupling_half: FloatArray = np.zeros(0, dtype=np.float64)  # C'h

    def order(self, labels: Mapping[int, bool]) -> IntArray:
        """The judged texts: those of the last fit first, as they were, then the new. A
        changed or withdrawn judgement starts the solver afresh."""
        kept = self.judged.tolist()
        if kept and all(
            labels.get(i) is not None and labels[i] == bool(label)
            for i, label in zip(kept, self.labels.tolist(), strict=True)
        ):
            known = set(kept)
            return np.array([*kept, *(i for i in labels if i not in known)], dtype=np.int64)
        self.reset()
        return np.fromiter(labels.keys(), dtype=np.int64)

    def solve(
        self, kernel: Kernel, judged: IntArray, y: IntArray, ridges: tuple[float, float]
    ) -> FloatArray:
        """The dual weights a, in the order of ``judged`` (as ``order`` gave it);
        ``ridges``: D of an irrelevant text, of a relevant one."""
        irrelevant_ridge, relevant_ridge = ridges
        new = range(len(self.judged), len(judged))
        irrelevant = [int(judged[i]) for i in new if y[i] == 0]
        relevant = [int(judged[i]) for i in new if y[i] == 1]
        self.judged, self.labels = judged, y
        if irrelevant_ridge != self.irrelevant_ridge or len(irrelevant) > len(self.irrelevant):
            # The ridge moved, or many texts at once (the first fit, after a reset):
            # factorise in one go, which costs less than adding them one by one.
            self.irrelevant_ridge = irrelevant_ridge
            self._factorise(kernel, [*self.irrelevant, *irrelevant], [*self.relevant, *relevant])
        else:
            for index in irrelevant:
                self._add_irrelevant(kernel, index)
            for index in relevant:
                self._add_relevant(kernel, index)
        return self._dual(kernel, relevant_ridge)

    def _factorise(self, kernel: Kernel, irrelevant: list[int], relevant: list[int]) -> None:
        size = len(irrelevant)
        rows = np.array(irrelevant, dtype=np.int64)
        block = kernel(rows, rows)
        block[np.diag_indices_from(block)] += self.irrelevant_ridge
        upper = linalg.cholesky(block, lower=False, check_finite=False)
        self.packed = _grown(self.packed, (size * (size + 1) // 2,))
        self.packed[: size * (size + 1) // 2] = upper.T[np.tril_indices(size)]
        half = linalg.solve_triangular(upper, -np.ones(size), trans="T", check_finite=False)
        self.half = _grown(self.half, (size,))
        self.half[:size] = half
        self.irrelevant, self.relevant = irrelevant, []
        self.coupling = _grown(self.coupling, (size, 1))
        self.coupling_gram = np.zeros((0, 0), dtype=np.float64)
        self.coupling_half = np.zeros(0, dtype=np.float64)
        for index in relevant:
            self._add_relevant(kernel, index)

    def _triangular(self, vector: FloatArray, *, transposed: bool) -> FloatArray:
        """U'^-1 vector (``transposed``) or U^-1 vector, over the irrelevant texts."""
        if len(vector) == 0:
            return vector
        solved: FloatArray = blas.dtpsv(
            len(vector), self.packed, np.array(vector, dtype=np.float64), trans=int(transposed)
        )
        return solved

    def _add_irrelevant(self, kernel: Kernel, index: int) -> None:
        size, related = len(self.irrelevant), len(self.relevant)
        text = np.array([index], dtype=np.int64)
        against = kernel(text, np.array([*self.irrelevant, index, *self.relevant], dtype=np.int64))[
            0
        ]
        column = self._triangular(against[:size], transposed=True)
        # The new pivot is at least the ridge in exact arithmetic; rounding must not
        # make it vanish.
        pivot = float(np.sqrt(max(against[size] + self.irrelevant_ridge - column @ column, 1e-12)))
        start = size * (size + 1) // 2
        self.packed = _grown(self.packed, (start + size + 1,))
        self.packed[start : start + size] = column
        self.packed[start + size] = pivot
        coupling_row = (against[size + 1 :] - column @ self.coupling[:size, :related]) / pivot
        half = (-1.0 - column @ self.half[:size]) / pivot
        self.coupling = _grown(self.coupling, (size + 1, max(related, 1)))
        self.coupling[size, :related] = coupling_row
        self.half = _grown(self.half, (size + 1,))
        self.half[size] = half
        self.coupling_gram += np.outer(coupling_row, coupling_row)
        self.coupling_half += coupling_row * half
        self.irrelevant.append(index)

    def _add_relevant(self, kernel: Kernel, index: int) -> None:
        size, related = len(self.irrelevant), len(self.relevant)
        against = kernel(np.array([index], dtype=np.int64), np.array(self.irrelevant))[0]
        column = self._triangular(against, transposed=True)
        self.coupling = _grown(self.coupling, (max(size, 1), related + 1))
        self.coupling[:size, related] = column
        cross = column @ self.coupling[:size, :related]
        gram = np.empty((related + 1, related + 1), dtype=np.float64)
        gram[:related, :related] = self.coupling_gram
        gram[related, :related] = gram[:related, related] = cross
        gram[related, related] = column @ column
        self.coupling_gram = gram
        self.coupling_half = np.append(self.coupling_half, column @ self.half[:size])
        self.relevant.append(index)

    def _dual(self, kernel: Kernel, relevant_ridge: float) -> FloatArray:
        size = len(self.irrelevant)
        related = np.array(self.relevant, dtype=np.int64)
        schur = kernel(related, related) - self.coupling_gram
        schur[np.diag_indices_from(schur)] += relevant_ridge
        relevant_dual = linalg.cho_solve(
            linalg.cho_factor(schur, lower=True, check_finite=False),
            1.0 - self.coupling_half,
            check_finite=False,
        )
        irrelevant_dual = self._triangular(
            self.half[:size] - self.coupling[:size, : len(related)] @ relevant_dual,
            transposed=False,
        )
        # Both kinds sit in the factor in the order they were judged.
        dual = np.empty(len(self.judged), dtype=np.float64)
        dual[self.labels == 0] = irrelevant_dual
        dual[self.labels == 1] = relevant_dual
        return dual
