"""What the retrieval, relevance and citation benches share: BEIR-layout readers, the plain
bm25s baseline index, and AUROC."""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from pathlib import Path

import bm25s
import numpy as np
import numpy.typing as npt
import Stemmer


def read_jsonl(path: Path) -> Iterator[dict[str, str]]:
    with path.open(encoding="utf-8") as handle:
        for line in handle:
            if line.strip():
                yield json.loads(line)


def read_qrels(path: Path) -> dict[str, dict[str, int]]:
    """``qrels/<split>.tsv``: query id -> document id -> relevance."""
    qrels: dict[str, dict[str, int]] = {}
    with path.open(encoding="utf-8") as handle:
        next(handle)  # header
        for line in handle:
            query_id, doc_id, score = line.rstrip("\n").split("\t")
            qrels.setdefault(query_id, {})[doc_id] = int(score)
    return qrels


def auroc(
    scores: npt.NDArray[np.float32] | npt.NDArray[np.float64], positive: npt.NDArray[np.bool_]
) -> float:
    """Area under the ROC curve by ranks (ties share their average rank); NaN when one
    class is empty."""
    order = np.argsort(scores, kind="mergesort")
    ranks = np.empty(len(scores))
    ordered = scores[order]
    i = 0
    while i < len(scores):
        j = i
        while j + 1 < len(scores) and ordered[j + 1] == ordered[i]:
            j += 1
        ranks[order[i : j + 1]] = (i + j) / 2 + 1
        i = j + 1
    n_pos = int(positive.sum())
    n_neg = len(scores) - n_pos
    if not n_pos or not n_neg:
        return math.nan
    return float((ranks[positive].sum() - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg))


def bm25s_index(corpus: list[dict[str, str]]) -> tuple[bm25s.BM25, Stemmer.Stemmer]:
    """Plain bm25s over title and text (English stop words and stemming), and its stemmer."""
    stemmer = Stemmer.Stemmer("english")
    tokens = bm25s.tokenize(
        [f"{doc.get('title', '')} {doc['text']}" for doc in corpus],
        stopwords="en",
        stemmer=stemmer,
        show_progress=False,
    )
    retriever = bm25s.BM25()
    retriever.index(tokens, show_progress=False)
    return retriever, stemmer
