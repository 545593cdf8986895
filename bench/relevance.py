"""Offline relevance scoring on a BEIR-layout data set: words alone against words and meaning.

Each query of ``qrels/<split>.tsv`` is read as a search intent (the rule-based parser, as in
offline mode) and scored against a candidate pool, as a search or a stream run scores what
its sources returned: the query's top ``--bm25`` abstracts by plain BM25 over the corpus,
plus ``--random`` abstracts drawn at random; relevant = judged relevant in the qrels.

Scorers: ``lexical_relevance`` (BM25 + concept coverage, the product's offline scorer) and
``hybrid_relevance`` (the same fused with the shipped embedding model's cosine on a fixed
scale), once per ``--weights`` value; and, to choose that scale, the same fusion with the
cosine stretched to 0..1 within each pool (min-max). Printed per scorer: AUROC of relevant
against not over every (query, record) pair of every pool (scores compared across pools,
as a stream's reports are compared across runs), the mean of the per-pool AUROC, nDCG@10
within the pool, and precision / recall of "relevant" at ``--thresholds``. Also the cosine's
quantiles for relevant, other pooled and random records: the scale's anchors.

    python bench/relevance.py --data ../shared/data/retrieval/scifact --split train \
        [--weights 0.3,0.5,0.7] [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import math
import random
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

import bm25s
import numpy as np
import numpy.typing as npt

from _measures import auroc, bm25s_index, read_jsonl, read_qrels
from scholarstream.embeddings import Vectors, shipped_embedder
from scholarstream.papers import Paper, Record
from scholarstream.search.intent import RuleIntentParser
from scholarstream.search.scoring import (
    MeaningScale,
    Relevance,
    hybrid_relevance,
    intent_text,
    lexical_relevance,
    meaning,
)
from scholarstream.search.scoring._hybrid import MEANING_WEIGHT
from scholarstream.search.scoring._lexical import word_relevance

Scores = npt.NDArray[np.float64]


class CachedEmbedder:
    """The shipped model, each text embedded once (the pools share many abstracts)."""

    def __init__(self, threads: int, store: Path | None = None) -> None:
        self.model = shipped_embedder(threads)
        self.name = self.model.name
        self.dimension = self.model.dimension
        self.cache: dict[str, Vectors] = {}
        self.seconds = 0.0
        self.embedded = 0
        self.store = store
        if store is not None and store.exists():
            saved = np.load(store, allow_pickle=False)
            self.cache = dict(zip(saved["texts"].tolist(), saved["vectors"], strict=True))

    def save(self) -> None:
        if self.store is not None and self.embedded:
            texts = np.array(list(self.cache))
            np.savez(self.store, texts=texts, vectors=np.stack(list(self.cache.values())))

    def warm(self, texts: Sequence[str]) -> None:
        missing = list(dict.fromkeys(t for t in texts if t not in self.cache))
        if missing:
            started = time.perf_counter()
            for text, vector in zip(missing, self.model.embed_documents(missing), strict=True):
                self.cache[text] = vector
            self.seconds += time.perf_counter() - started
            self.embedded += len(missing)

    def embed_documents(self, texts: Sequence[str]) -> Vectors:
        self.warm(texts)
        return np.stack([self.cache[t] for t in texts])

    def embed_query(self, text: str) -> Vectors:
        vector: Vectors = self.embed_documents([text])[0]
        return vector


@dataclass
class Pool:
    query_id: str
    query: str
    records: list[Record]
    relevant: list[bool]


@dataclass
class Figures:
    scorer: str
    auroc_pooled: float
    auroc_per_query: float
    ndcg_at_10: float
    at_threshold: dict[str, tuple[float, float]]  # threshold -> (precision, recall)


def ndcg_at_10(scores: Scores, relevant: Sequence[bool]) -> float:
    order = np.argsort(-scores, kind="stable")[:10]
    dcg = sum(1 / math.log2(rank + 2) for rank, i in enumerate(order) if relevant[i])
    ideal = sum(1 / math.log2(rank + 2) for rank in range(min(10, sum(relevant))))
    return dcg / ideal if ideal else 0.0


def pools(
    corpus: list[dict[str, str]],
    queries: dict[str, str],
    qrels: dict[str, dict[str, int]],
    *,
    bm25_k: int,
    random_k: int,
    seed: int,
) -> list[Pool]:
    retriever, stemmer = bm25s_index(corpus)
    papers = [
        Paper(
            record_id=doc["_id"], title=doc.get("title") or doc["text"][:200], abstract=doc["text"]
        )
        for doc in corpus
    ]
    rng = random.Random(seed)
    out = []
    for query_id, text in queries.items():
        asked = bm25s.tokenize([text], stopwords="en", stemmer=stemmer, show_progress=False)
        found, _ = retriever.retrieve(asked, k=bm25_k, show_progress=False)
        chosen = [int(i) for i in found[0]]
        others = [i for i in rng.sample(range(len(corpus)), random_k * 2) if i not in chosen]
        chosen += others[:random_k]
        relevant = [qrels[query_id].get(corpus[i]["_id"], 0) > 0 for i in chosen]
        out.append(Pool(query_id, text, [papers[i] for i in chosen], relevant))
    return out


def figures(
    name: str, per_pool: Sequence[Scores], pools_: Sequence[Pool], thresholds: Sequence[float]
) -> Figures:
    scores = np.concatenate(per_pool)
    positive = np.array([r for pool in pools_ for r in pool.relevant])
    per_query = [auroc(s, np.array(p.relevant)) for s, p in zip(per_pool, pools_, strict=True)]
    table = {}
    for threshold in thresholds:
        chosen = scores >= threshold
        hits = int((chosen & positive).sum())
        table[f"{threshold:.2f}"] = (
            hits / max(1, int(chosen.sum())),
            hits / max(1, int(positive.sum())),
        )
    return Figures(
        scorer=name,
        auroc_pooled=auroc(scores, positive),
        auroc_per_query=statistics.fmean(v for v in per_query if not math.isnan(v)),
        ndcg_at_10=statistics.fmean(
            ndcg_at_10(s, p.relevant) for s, p in zip(per_pool, pools_, strict=True)
        ),
        at_threshold=table,
    )


def as_scores(relevances: Sequence[Relevance]) -> Scores:
    return np.array([r.score for r in relevances], dtype=np.float64)


def min_max_fusion(weight: float) -> Callable[[Pool, list[float]], Scores]:
    """The fusion with the cosine stretched to 0..1 within the pool (the alternative)."""

    def run(pool: Pool, closeness: list[float]) -> Scores:
        parser = RuleIntentParser()
        words = np.array(
            [w.score for w in word_relevance(pool.records, parser.parse_now(pool.query))]
        )
        cos = np.array(closeness)
        span = float(cos.max() - cos.min())
        scaled = (cos - cos.min()) / span if span > 0 else np.ones_like(cos)
        return np.asarray((1 - weight) * words + weight * scaled, dtype=np.float64)

    return run


def quantiles(values: Sequence[float]) -> str:
    cuts = statistics.quantiles(values, n=20)
    return " ".join(f"{cuts[i]:.3f}" for i in (1, 4, 9, 14, 18))  # 10/25/50/75/95 %


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=Path("../shared/data/retrieval/scifact"))
    parser.add_argument("--split", default="train", help="qrels/<split>.tsv (tune on train)")
    parser.add_argument("--bm25", type=int, default=20, help="pool: top abstracts by BM25")
    parser.add_argument("--random", type=int, default=10, help="pool: random abstracts")
    parser.add_argument("--queries", type=int, default=0, help="first N queries; 0: all")
    parser.add_argument("--weights", default=f"{MEANING_WEIGHT}", help="meaning weights to run")
    parser.add_argument("--thresholds", default="0.3,0.5", help="score cut-offs for P / R")
    parser.add_argument("--threads", type=int, default=1, help="embedding model threads")
    parser.add_argument(
        "--null",
        action="store_true",
        help="add to each query the pool of a query half the list away (a run that found "
        "nothing relevant), labelled by the query's own qrels",
    )
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument(
        "--vectors", type=Path, help="keep the embeddings in this .npz between runs"
    )
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args()

    corpus = list(read_jsonl(args.data / "corpus.jsonl"))
    qrels = read_qrels(args.data / "qrels" / f"{args.split}.tsv")
    texts = {q["_id"]: q["text"] for q in read_jsonl(args.data / "queries.jsonl")}
    chosen = list(qrels)[: args.queries or None]
    queries = {q: texts[q] for q in chosen}
    built = pools(corpus, queries, qrels, bm25_k=args.bm25, random_k=args.random, seed=args.seed)
    if args.null:
        built += [
            Pool(
                p.query_id,
                p.query,
                other.records,
                [qrels[p.query_id].get(r.record_id or "", 0) > 0 for r in other.records],
            )
            for p, other in zip(
                built, built[len(built) // 2 :] + built[: len(built) // 2], strict=True
            )
        ]
    size = sum(len(p.records) for p in built)
    positives = sum(sum(p.relevant) for p in built)
    judged = sum(sum(1 for g in qrels[q].values() if g > 0) for q in queries)
    print(
        f"{args.data.name} / {args.split}: {len(built)} queries, {size} pooled records "
        f"({args.bm25} by BM25 + {args.random} random each), {positives} relevant "
        f"({positives / judged:.0%} of the judged relevant are in their pool)"
    )

    embedder = CachedEmbedder(args.threads, args.vectors)
    intents = [RuleIntentParser().parse_now(pool.query) for pool in built]
    started = time.perf_counter()
    lexical = [
        as_scores(lexical_relevance(p.records, i)) for p, i in zip(built, intents, strict=True)
    ]
    lexical_s = time.perf_counter() - started
    closeness = [
        meaning(embedder, intent_text(i), p.records) for p, i in zip(built, intents, strict=True)
    ]
    print(
        f"lexical: {1000 * lexical_s / len(built):.1f} ms per pool; embedding: "
        f"{embedder.embedded} texts in {embedder.seconds:.1f} s "
        f"({embedder.embedded / max(embedder.seconds, 1e-9):.1f} texts/s, {args.threads} thread(s))"
    )
    embedder.save()
    bm25_top = [c[: args.bm25] for c in closeness]
    kinds = {
        "relevant": [
            c
            for cs, p in zip(closeness, built, strict=True)
            for c, r in zip(cs, p.relevant, strict=True)
            if r
        ],
        "other BM25 top": [
            c
            for cs, p in zip(bm25_top, built, strict=True)
            for c, r in zip(cs, p.relevant[: args.bm25], strict=True)
            if not r
        ],
        "random": [c for cs in closeness for c in cs[args.bm25 :]],
    }
    print("\ncosine quantiles (10 / 25 / 50 / 75 / 95 %)")
    for kind, values in kinds.items():
        print(f"  {kind:<16} {quantiles(values)}  (n={len(values)})")

    thresholds = [float(t) for t in args.thresholds.split(",")]
    results = [figures("lexical (words)", lexical, built, thresholds)]
    scale = MeaningScale()
    results.append(
        figures(
            "meaning alone (scaled)",
            [np.array([scale(c) for c in cs]) for cs in closeness],
            built,
            thresholds,
        )
    )
    for weight in (float(w) for w in args.weights.split(",")):
        hybrid = [
            as_scores(hybrid_relevance(embedder, p.records, i, weight=weight))
            for p, i in zip(built, intents, strict=True)
        ]
        results.append(figures(f"hybrid w={weight:.2f}", hybrid, built, thresholds))
        stretched = min_max_fusion(weight)
        results.append(
            figures(
                f"min-max w={weight:.2f}",
                [stretched(p, c) for p, c in zip(built, closeness, strict=True)],
                built,
                thresholds,
            )
        )

    header = "".join(f"{'P@' + t:>8}{'R@' + t:>8}" for t in (f"{x:.2f}" for x in thresholds))
    print(f"\n{'scorer':<24}{'AUROC':>7}{'AUROC/q':>9}{'nDCG@10':>9}{header}")
    for r in results:
        cells = "".join(f"{p:>8.3f}{rc:>8.3f}" for p, rc in r.at_threshold.values())
        print(
            f"{r.scorer:<24}{r.auroc_pooled:>7.3f}{r.auroc_per_query:>9.3f}{r.ndcg_at_10:>9.3f}{cells}"
        )
    if args.json:
        payload = {
            "data": str(args.data),
            "split": args.split,
            "queries": len(built),
            "pooled": size,
            "cosine_quantiles": {k: statistics.quantiles(v, n=20) for k, v in kinds.items()},
            "results": [asdict(r) for r in results],
        }
        args.json.write_text(json.dumps(payload, indent=2), encoding="utf-8")


if __name__ == "__main__":
    main()
