"""Hybrid ranking: the word ranking (BM25) and the meaning ranking (cosine of embeddings)
fused as a weighted sum of each one's scores scaled to 0..1 for the query.

The weight and the floor were chosen on SciFact's train split by ``bench/retrieval.py``
(the weighted sum beat reciprocal-rank fusion there: nDCG@10 0.736 against 0.714).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

Scores = npt.NDArray[np.float32] | npt.NDArray[np.float64]
Indices = npt.NDArray[np.intp]


@dataclass(frozen=True)
class Fusion:
    semantic_weight: float = 0.6
    depth: int = 100
    """How many of the closest records by meaning join the candidates: a record that shares
    no word with the query can still be found."""
    floor: float = 0.3
    """Below this cosine a record never joins by meaning alone (for the shipped model,
    unrelated abstracts score about 0 to 0.2)."""
    related_floor: float = 0.35
    """The least cosine of a record listed as *related by meaning* (it lacks the query's
    words); see ``related_threshold`` for the rest of the rule. For the shipped model,
    records that share only a setting with the query (the species, a breed) score 0.25 to
    0.35 (measured on a veterinary library of 1,000 records)."""


TYPICAL_WORD_MATCHES = 1000
"""The typical record with the query's words is the median of the best this many by words
(every backend knows their exact cosines)."""
TYPICAL_AMONG = 3
"""Fewer records with the words than this say nothing about what is typical: the floor
alone applies."""


def lexical_ranking(lexical: Scores, mask: npt.NDArray[np.bool_]) -> tuple[Indices, Scores]:
    """Records sharing a word with the query, best first, with their BM25 scores."""
    members = np.flatnonzero(mask & (lexical > 0))
    order = members[np.argsort(-lexical[members], kind="stable")]
    return order, lexical[order]


def _scaled(scores: Scores, members: Indices) -> npt.NDArray[np.float64]:
    """Scores of ``members`` mapped to 0..1 (min to max among them); 0 elsewhere."""
    out = np.zeros(len(scores), dtype=np.float64)
    if len(members):
        low, high = float(scores[members].min()), float(scores[members].max())
        out[members] = (scores[members] - low) / (high - low) if high > low else 1.0
    return out


def hybrid_ranking(
    lexical: Scores,
    semantic: Scores,
    mask: npt.NDArray[np.bool_],
    fusion: Fusion,
    *,
    depth: int,
) -> tuple[Indices, npt.NDArray[np.float64]]:
    """Candidates best first with their fused scores.

    ``semantic`` is NaN for records with no vector (yet): they rank by words alone, on the
    same 0..1 scale. Candidates are every record sharing a word with the query plus the
    closest by meaning (``depth``, at least ``fusion.depth``, above ``fusion.floor``).
    Meaning is scaled among the candidates, so only their cosines need be known (pgvector
    looks up no others).
    """
    words = np.flatnonzero(mask & (lexical > 0))
    embedded = np.flatnonzero(mask & ~np.isnan(semantic))
    close = embedded[semantic[embedded] >= fusion.floor]
    count = max(depth, fusion.depth)
    if len(close) > count:
        close = close[np.argpartition(-semantic[close], count - 1)[:count]]
    candidates = np.union1d(words, close)
    top = float(lexical[words].max()) if len(words) else 1.0
    fused = np.where(lexical > 0, lexical / top, 0.0).astype(np.float64)
    known = candidates[~np.isnan(semantic[candidates])]
    if len(known):
        by_meaning = _scaled(semantic, known)
        weight = fusion.semantic_weight
        fused[known] = weight * by_meaning[known] + (1 - weight) * fused[known]
    order = candidates[np.argsort(-fused[candidates], kind="stable")]
    return order, fused[order]


def related_threshold(
    lexical: Scores, semantic: Scores, mask: npt.NDArray[np.bool_], fusion: Fusion
) -> float:
    """The least cosine at which a record *without* the query's words is listed, as related
    by meaning: it must be at least as close to the query as the typical (median) record
    that has the words (when at least ``TYPICAL_AMONG`` have them), and never below
    ``fusion.related_floor``. A precise word ("taurine": its records score about 0.49 with
    the shipped model) sets a high bar, so records of the same species or breed are not
    passed off as related; a broad query whose word matches are loosely related lets the
    records that are closer in: "epilepsy" brings "Epileptic seizure in a cocker spaniel"
    (0.41) and not "Penile plasmacytoma" (0.35), "anaesthesia" brings "Anesthesia for
    cystotomy" (0.48).
    """
    words = np.flatnonzero(mask & (lexical > 0))
    if len(words) > TYPICAL_WORD_MATCHES:
        best = np.argpartition(-lexical[words], TYPICAL_WORD_MATCHES - 1)
        words = words[best[:TYPICAL_WORD_MATCHES]]
    known = semantic[words]
    known = known[~np.isnan(known)]
    typical = float(np.median(known)) if len(known) >= TYPICAL_AMONG else fusion.related_floor
    return max(fusion.related_floor, typical)


def words_then_related(
    order: Indices,
    scores: Scores,
    lexical: Scores,
    semantic: Scores,
    threshold: float,
    *,
    related: bool,
) -> tuple[Indices, Scores, int]:
    """A hybrid ranking (``order`` best first, with ``scores``) as people read it: the
    records that have the query's words first, in their fused order; then, with
    ``related``, the records related by meaning alone that clear ``threshold``, in theirs.
    Returns the order, its scores and how many have the words."""
    has_words = lexical[order] > 0
    cosine = np.nan_to_num(np.asarray(semantic[order], dtype=np.float64), nan=-1.0)
    close = ~has_words & (cosine >= threshold)
    kept = [np.flatnonzero(has_words)]
    if related:
        kept.append(np.flatnonzero(close))
    chosen = np.concatenate(kept)
    return order[chosen], scores[chosen], int(has_words.sum())
