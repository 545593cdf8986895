"""Retrieval quality and speed of the local library on a BEIR-layout data set.

Imports ``corpus.jsonl`` into a fresh library (SQLite, one user), embeds it with the
shipped model (timed: abstracts/s), then runs every query of ``qrels/<split>.tsv`` through
the library's word ranking (BM25), its meaning ranking (cosine of embeddings) and
``Library.search`` (hybrid, once per ``--weights`` value), and prints nDCG@10, Recall@100,
query latency p50/p95 and the size of the stored vectors, next to two baselines run in the
same process on the same data: plain bm25s (title + text) and SQLite FTS5 (porter
stemming, bm25() ranking), the alternative the library's ranker was chosen against.

    python bench/retrieval.py --data ../shared/data/retrieval/scifact --split train \
        [--json bench/results/retrieval.json] [--database postgresql+asyncpg://...]

``--database`` runs the library on an empty PostgreSQL database instead of a temporary
SQLite file; when that server has pgvector, the meaning half is ranked there.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import re
import sqlite3
import statistics
import tempfile
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

import bm25s
import numpy as np

from _measures import bm25s_index, read_jsonl, read_qrels
from scholarstream.db import upgrade_async
from scholarstream.papers import Paper
from scholarstream.runtime import build_runtime
from scholarstream.settings import load_settings
from scholarstream.sources.library import Fusion, LibraryQuery, import_items, stored_vectors

Ranking = list[str]


@dataclass
class Result:
    system: str
    ndcg_at_10: float
    recall_at_100: float
    index_seconds: float
    p50_ms: float
    p95_ms: float


def ndcg_at_10(ranking: Ranking, relevant: dict[str, int]) -> float:
    dcg = sum(
        (2 ** relevant.get(doc, 0) - 1) / math.log2(rank + 2)
        for rank, doc in enumerate(ranking[:10])
    )
    ideal = sorted(relevant.values(), reverse=True)[:10]
    idcg = sum((2**grade - 1) / math.log2(rank + 2) for rank, grade in enumerate(ideal))
    return dcg / idcg if idcg else 0.0


def recall_at_100(ranking: Ranking, relevant: dict[str, int]) -> float:
    wanted = {doc for doc, grade in relevant.items() if grade > 0}
    return len(wanted & set(ranking[:100])) / len(wanted) if wanted else 0.0


def evaluate(
    system: str,
    index_seconds: float,
    rankings: dict[str, Ranking],
    latencies: list[float],
    qrels: dict[str, dict[str, int]],
) -> Result:
    ndcg = statistics.fmean(ndcg_at_10(rankings[q], rel) for q, rel in qrels.items())
    recall = statistics.fmean(recall_at_100(rankings[q], rel) for q, rel in qrels.items())
    cuts = statistics.quantiles([1000 * s for s in latencies], n=20)
    return Result(
        system, ndcg, recall, index_seconds, statistics.median(latencies) * 1000, cuts[18]
    )


def timed(
    run: Callable[[str], Ranking], queries: dict[str, str]
) -> tuple[dict[str, Ranking], list[float]]:
    rankings: dict[str, Ranking] = {}
    latencies: list[float] = []
    for query_id, text in queries.items():
        started = time.perf_counter()
        rankings[query_id] = run(text)
        latencies.append(time.perf_counter() - started)
    return rankings, latencies


@dataclass
class LibraryRun:
    import_seconds: float
    index_seconds: float
    embed_seconds: float
    vector_bytes: int
    passages: int
    ranking: str
    systems: dict[str, tuple[dict[str, Ranking], list[float]]]


async def library_system(
    corpus: list[dict[str, str]],
    queries: dict[str, str],
    weights: list[float],
    database_url: str | None,
) -> LibraryRun:
    """The product's library: import through the importer, embed with the shipped model,
    search through Library.search (hybrid, per fusion weight) and through its two halves."""
    with tempfile.TemporaryDirectory() as tmp:
        settings = load_settings(data_dir=Path(tmp), database_url=database_url)
        await upgrade_async(settings.app_database_url)
        runtime = build_runtime(settings)
        await runtime.library.start()
        from scholarstream.accounts import create_user

        async with runtime.database.session() as session:
            owner = (await create_user(session, "bench", "bench-password-123")).id
        papers = (
            Paper(
                record_id=doc["_id"],
                title=doc.get("title") or doc["text"][:200],
                abstract=doc["text"],
            )
            for doc in corpus
        )
        started = time.perf_counter()
        report = await import_items(
            runtime.database, owner, papers, file="corpus.jsonl", format_name="json"
        )
        import_seconds = time.perf_counter() - started
        assert report.imported == len(corpus), report
        started = time.perf_counter()
        index = await runtime.library.index(owner)
        index_seconds = time.perf_counter() - started
        items = await runtime.library.get_many(owner, index.ids)
        record_ids = {item.id: item.record.record_id or "" for item in items}

        embedder = runtime.library.semantic.embedder
        assert embedder is not None, "semantic search is turned off in the settings"
        started = time.perf_counter()
        embedded = await runtime.library.semantic.build(owner)
        embed_seconds = time.perf_counter() - started
        assert embedded == len(corpus), (await runtime.library.semantic_status(owner)).problem
        stored = await stored_vectors(runtime.database, owner, embedder.name, embedder.dimension)
        ranking = (await runtime.library.semantic_status(owner)).ranking or "none"

        systems: dict[str, tuple[dict[str, Ranking], list[float]]] = {}

        def words(text: str) -> Ranking:
            _, hits = index.search(text, limit=100)
            return [record_ids[hit.id] for hit in hits]

        vectors = index.aligned(stored.ids, stored.vectors)

        def meaning(text: str) -> Ranking:
            similarity = np.nan_to_num(vectors.similarity(embedder.embed_query(text)), nan=-1.0)
            top = np.argsort(-similarity, kind="stable")[:100]
            return [record_ids[index.ids[i]] for i in top]

        systems["library: words (BM25)"] = timed(words, queries)
        systems["library: meaning (MiniLM)"] = timed(meaning, queries)
        for weight in weights:
            runtime.library.fusion = Fusion(semantic_weight=weight)
            rankings: dict[str, Ranking] = {}
            latencies: list[float] = []
            for query_id, text in queries.items():
                began = time.perf_counter()
                page = await runtime.library.search(owner, LibraryQuery(text=text, limit=100))
                latencies.append(time.perf_counter() - began)
                rankings[query_id] = [item.record.record_id or "" for item in page.items]
            systems[f"library: hybrid w={weight:.2f}"] = (rankings, latencies)
        await runtime.close()
    return LibraryRun(
        import_seconds=import_seconds,
        index_seconds=index_seconds,
        embed_seconds=embed_seconds,
        vector_bytes=len(stored.ids) * embedder.dimension * 2,
        passages=len(stored.ids),
        ranking=ranking,
        systems=systems,
    )


def bm25s_baseline(
    corpus: list[dict[str, str]], queries: dict[str, str]
) -> tuple[float, dict[str, Ranking], list[float]]:
    ids = [doc["_id"] for doc in corpus]
    started = time.perf_counter()
    retriever, stemmer = bm25s_index(corpus)
    index_seconds = time.perf_counter() - started

    def run(text: str) -> Ranking:
        query = bm25s.tokenize([text], stopwords="en", stemmer=stemmer, show_progress=False)
        docs, _scores = retriever.retrieve(query, k=100, show_progress=False)
        return [ids[i] for i in docs[0]]

    rankings, latencies = timed(run, queries)
    return index_seconds, rankings, latencies


_WORD = re.compile(r"\w+")


def fts5_baseline(
    corpus: list[dict[str, str]], queries: dict[str, str]
) -> tuple[float, dict[str, Ranking], list[float]]:
    connection = sqlite3.connect(":memory:")
    started = time.perf_counter()
    connection.execute(
        "CREATE VIRTUAL TABLE docs USING fts5(doc_id UNINDEXED, title, body, "
        "tokenize='porter unicode61')"
    )
    connection.executemany(
        "INSERT INTO docs VALUES (?, ?, ?)",
        ((doc["_id"], doc.get("title", ""), doc["text"]) for doc in corpus),
    )
    connection.commit()
    index_seconds = time.perf_counter() - started

    def run(text: str) -> Ranking:
        # OR of the quoted words: FTS5's default AND would return almost nothing.
        match = " OR ".join(f'"{word}"' for word in _WORD.findall(text.lower()))
        rows = connection.execute(
            "SELECT doc_id FROM docs WHERE docs MATCH ? ORDER BY bm25(docs) LIMIT 100", (match,)
        )
        return [row[0] for row in rows]

    rankings, latencies = timed(run, queries)
    connection.close()
    return index_seconds, rankings, latencies


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, required=True, help="BEIR-layout directory")
    parser.add_argument("--split", default="test", help="qrels/<split>.tsv")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    parser.add_argument(
        "--database", help="an empty PostgreSQL database URL for the library (SQLite if unset)"
    )
    parser.add_argument(
        "--weights",
        default=f"{Fusion().semantic_weight}",
        help="hybrid fusion weights of meaning to run, comma-separated (the product's default)",
    )
    args = parser.parse_args()

    corpus = list(read_jsonl(args.data / "corpus.jsonl"))
    qrels = read_qrels(args.data / "qrels" / f"{args.split}.tsv")
    all_queries = {q["_id"]: q["text"] for q in read_jsonl(args.data / "queries.jsonl")}
    queries = {q: all_queries[q] for q in qrels}
    print(f"{args.data.name} / {args.split}: {len(corpus)} documents, {len(queries)} queries")

    weights = [float(w) for w in args.weights.split(",")]
    run = asyncio.run(library_system(corpus, queries, weights, args.database))
    import_s = run.import_seconds
    results = [
        evaluate(name, run.index_seconds, rankings, latencies, qrels)
        for name, (rankings, latencies) in run.systems.items()
    ]
    results.append(evaluate("plain bm25s baseline", *bm25s_baseline(corpus, queries), qrels))
    results.append(evaluate("SQLite FTS5 (porter, bm25())", *fts5_baseline(corpus, queries), qrels))

    print(f"meaning ranked: {run.ranking}")
    print(f"library import: {import_s:.2f} s ({len(corpus) / import_s:,.0f} records/s)")
    print(
        f"embedding: {run.embed_seconds:.1f} s ({len(corpus) / run.embed_seconds:,.1f} "
        f"abstracts/s); {run.passages:,} passage vectors stored: {run.vector_bytes / 1e6:.1f} MB"
    )
    print(f"{'system':32} {'nDCG@10':>8} {'R@100':>7} {'index s':>8} {'p50 ms':>7} {'p95 ms':>7}")
    for r in results:
        print(
            f"{r.system:32} {r.ndcg_at_10:8.3f} {r.recall_at_100:7.3f} "
            f"{r.index_seconds:8.2f} {r.p50_ms:7.2f} {r.p95_ms:7.2f}"
        )
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        payload = {
            "data": str(args.data),
            "split": args.split,
            "documents": len(corpus),
            "queries": len(queries),
            "library_import_seconds": import_s,
            "embedding_seconds": run.embed_seconds,
            "embedding_per_second": len(corpus) / run.embed_seconds,
            "vector_bytes": run.vector_bytes,
            "meaning_ranked": run.ranking,
            "results": [asdict(r) for r in results],
        }
        args.json.write_text(json.dumps(payload, indent=2))


if __name__ == "__main__":
    main()
