"""The search workflow's Deduplicator skill and the clustering it is built on.

``find_clusters`` is the synchronous core (used by the ``dedup`` command and the
benchmarks): keys per record, candidate pairs from blocking, a rule decision per pair,
union-find over the duplicate pairs. ``RecordDeduplicator`` runs it off the event loop,
lets an optional adjudicator settle the borderline pairs, and merges each cluster into one
record.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from scholarstream.papers import Record
from scholarstream.papers.dedup._blocking import candidate_pairs
from scholarstream.papers.dedup._clusters import DisjointSets
from scholarstream.papers.dedup._matching import (
    Verdict,
    compare,
    conflicts,
    mark_shared_titles,
)
from scholarstream.papers.dedup._merge import merge_records
from scholarstream.papers.dedup._normalize import RecordKeys, record_keys

Pair = tuple[int, int]


class PairAdjudicator(Protocol):
    async def same_work(self, pairs: Sequence[tuple[Record, Record]]) -> list[bool]:
        """One answer per pair, in order: ``True`` only for pairs judged one work."""
        ...


@dataclass
class PairReport:
    """What the rules made of the candidate pairs: ``duplicates`` joined clusters,
    ``borderline`` pairs need a second opinion (they stay apart without one), ``refused``
    links were duplicates on their own but would have put conflicting records into one
    cluster."""

    keys: list[RecordKeys]
    duplicates: list[Pair] = field(default_factory=list)
    borderline: list[Pair] = field(default_factory=list)
    refused: list[Pair] = field(default_factory=list)
    compared: int = 0

    def conflict(self, i: int, j: int) -> bool:
        return conflicts(self.keys[i], self.keys[j])

    def clusters(self, extra: Iterable[Pair] = ()) -> list[list[int]]:
        """Every record in exactly one cluster (indices ascending, clusters ordered by their
        first record); ``extra`` are further pairs to join (adjudicated ones), each only if
        it brings no conflicting records together."""
        sets = DisjointSets(len(self.keys))
        for a, b in self.duplicates:
            sets.join(a, b)
        for a, b in extra:
            sets.join(a, b, self.conflict)
        return sets.groups()


def judge_pairs(records: Sequence[Record | None]) -> PairReport:
    """Compare the candidate pairs of ``records`` and join the duplicates. ``None`` stands
    for an input record that could not be read into a ``Record`` (a file's record without
    a title): it cannot be compared, so it is its own cluster, like a record whose title
    has no words."""
    report = PairReport(keys=mark_shared_titles([record_keys(record) for record in records]))
    keys = report.keys
    sets = DisjointSets(len(keys))
    seen: set[int] = set()
    size = len(keys)
    for i, j in candidate_pairs(keys):
        code = i * size + j
        if code in seen:
            continue
        seen.add(code)
        # Already one cluster: the pair's own verdict cannot change anything.
        if sets.find(i) == sets.find(j):
            continue
        report.compared += 1
        verdict = compare(keys[i], keys[j]).verdict
        if verdict is Verdict.DUPLICATE:
            if sets.join(i, j, report.conflict):
                report.duplicates.append((i, j))
            else:
                report.refused.append((i, j))
        elif verdict is Verdict.BORDERLINE:
            report.borderline.append((i, j))
    report.borderline = [(i, j) for i, j in report.borderline if sets.find(i) != sets.find(j)]
    return report


def find_clusters(records: Sequence[Record | None]) -> list[list[int]]:
    """Clusters of duplicate records, as indices into ``records``: every input is in
    exactly one cluster, members ascending, clusters ordered by their first member. An
    input that cannot be compared (``None``: a record read without a title; a title
    without words) is a cluster of its own. Borderline pairs are kept apart (no
    adjudicator here)."""
    return judge_pairs(records).clusters()


class RecordDeduplicator:
    """``Deduplicator`` skill: one merged record per work, in order of first appearance."""

    def __init__(self, adjudicator: PairAdjudicator | None = None) -> None:
        self.adjudicator = adjudicator

    async def deduplicate(self, records: Sequence[Record]) -> list[Record]:
        records = list(records)
        if len(records) < 2:
            return records
        report = await asyncio.to_thread(judge_pairs, records)
        confirmed: list[Pair] = []
        if self.adjudicator is not None and report.borderline:
            answers = await self.adjudicator.same_work(
                [(records[i], records[j]) for i, j in report.borderline]
            )
            # A missing answer is a "no": only an explicit yes merges.
            confirmed = [
                pair for pair, same in zip(report.borderline, answers, strict=False) if same is True
            ]
        clusters = report.clusters(confirmed)
        return await asyncio.to_thread(
            lambda: [merge_records([records[i] for i in cluster]) for cluster in clusters]
        )
