"""Which records of the library are copies of one work: the pure part of deduplication.

The pairwise decision is the paper search's deduplicator (``papers.dedup``: ``judge_pairs``
and its rules, tuned never to merge different works); this module adds what a library
needs around it:

* ``match_keys``: the keys a stored record is looked up by, so an import compares its
  records only with the few library records that share a key (an identifier, or one of the
  deduplicator's blocking keys), never with the whole library;
* ``plan_merges``: the deduplicator's duplicate pairs turned into merges ("this record into
  that one"), refusing any merge that would join records the deduplicator says can never be
  one work, records a person split apart, or (on import) two records already in the library.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from rapidfuzz import fuzz

from scholarstream.papers import Record, normalize_title
from scholarstream.papers.dedup import RecordKeys, Verdict, compare, judge_pairs, record_keys

ID_PREFIX = "id:"
MAX_KEY = 200
_TITLE_KEY_CHARS = 24
_MIN_TITLE_CHARS = 12

MATCHING_IDS = ("doi", "pmid", "pmcid", "arxiv_id", "openalex_id", "s2_id", "nct_id")

_ID_NAMES = {
    "doi": "DOI",
    "pmid": "PMID",
    "pmcid": "PMCID",
    "arxiv_id": "arXiv id",
    "openalex_id": "OpenAlex id",
    "s2_id": "Semantic Scholar id",
    "nct_id": "trial registration (NCT)",
}


def match_keys(keys: RecordKeys) -> set[str]:
    """The keys a record is found by: every identifier, and the deduplicator's blocking
    keys (title start and end, the four longest title words, first author and year, volume
    and first page). Two copies of one work share at least one of them."""
    if not keys.comparable:
        return set()
    found = {f"{ID_PREFIX}{name}:{value}" for name, value in keys.identifiers}
    compact = keys.core_title.replace(" ", "")
    if len(compact) >= _MIN_TITLE_CHARS:
        found.add(f"ts:{compact[:_TITLE_KEY_CHARS]}")
        found.add(f"te:{compact[-_TITLE_KEY_CHARS:]}")
    words = sorted({w for w in keys.core_title.split() if len(w) > 3}, key=lambda w: (-len(w), w))
    if len(words) >= 3:
        found.add("tw:" + " ".join(sorted(words[:4])))
    if keys.first_author and keys.year:
        found.add(f"ay:{keys.first_author}:{keys.year}")
    if keys.volume and keys.first_page:
        found.add(f"vp:{keys.volume}:{keys.first_page}")
    return {key[:MAX_KEY] for key in found}


def record_match_keys(record: Record) -> set[str]:
    return match_keys(record_keys(record))


NEAR_TITLE = 60
"""Titles less alike than this (rapidfuzz ratio, 0-100, of normalised titles) and not one
inside the other are never one work for the deduplicator (it needs 90 without a shared
identifier): a library record sharing only a blocking key with such a title is not read."""
CONTAINED_TITLE = 85


def titles_near(title: str, others: Iterable[str]) -> bool:
    """Is ``title`` close enough to any of ``others`` (normalised titles) to compare?"""
    mine = normalize_title(title)
    return any(
        fuzz.ratio(mine, other) >= NEAR_TITLE or fuzz.partial_ratio(mine, other) >= CONTAINED_TITLE
        for other in others
    )


def is_identifier_key(key: str) -> bool:
    return key.startswith(ID_PREFIX)


def plain_evidence(reason: str) -> str:
    """The deduplicator's reason in words a person reads ("same doi" -> "same DOI")."""
    for name, label in _ID_NAMES.items():
        if reason == f"same {name}":
            return f"same {label}"
    return reason


@dataclass(frozen=True)
class MergePlan:
    merges: list[Merge]
    compared: int
    """Pairs the deduplicator compared (after blocking)."""


@dataclass(frozen=True)
class Merge:
    """``absorbed`` merges into ``kept`` (indices into the planned records)."""

    absorbed: int
    kept: int
    evidence: str


class _Clusters:
    def __init__(self, size: int) -> None:
        self.parent = list(range(size))
        self.members: dict[int, list[int]] = {i: [i] for i in range(size)}

    def find(self, item: int) -> int:
        while self.parent[item] != item:
            self.parent[item] = self.parent[self.parent[item]]
            item = self.parent[item]
        return item


Apart = Callable[[int, int], bool]


def plan_merges(
    records: Sequence[Record], *, existing: int = 0, apart: Apart | None = None
) -> MergePlan:
    """The merges that make one record of each work among ``records``.

    ``records[:existing]`` are records already in the library when this is an import: two
    of them are never merged here (that is what "find duplicates" does), and a new record
    merges into the one it matches. Each cluster is kept as its first record (the lowest
    index: the library's, or the oldest); every other member merges into it. ``apart(i,
    j)`` says two records must stay apart (a person split them)."""
    if len(records) < 2:
        return MergePlan(merges=[], compared=0)
    report = judge_pairs(records)
    clusters = _Clusters(len(records))
    reasons: dict[int, str] = {}
    for i, j in report.duplicates:
        if j < existing:
            continue  # two library records: not an import's business
        root_i, root_j = clusters.find(i), clusters.find(j)
        if root_i == root_j:
            continue
        group_i, group_j = clusters.members[root_i], clusters.members[root_j]
        if existing and root_i < existing and root_j < existing:
            continue  # the roots are each cluster's lowest index: both are library records
        if any(
            report.conflict(x, y) or (apart is not None and apart(x, y))
            for x in group_i
            for y in group_j
            if (x, y) != (i, j)
        ) or (apart is not None and apart(i, j)):
            continue
        low, high = sorted((root_i, root_j))
        clusters.parent[high] = low
        clusters.members[low] = sorted(group_i + group_j)
        del clusters.members[high]
        reasons[j] = reasons.get(j) or compare(report.keys[i], report.keys[j]).reason
        reasons.setdefault(i, reasons[j])
    merges: list[Merge] = []
    for root, members in clusters.members.items():
        for member in members:
            if member == root:
                continue
            direct = compare(report.keys[member], report.keys[root])
            if direct.verdict is Verdict.DUPLICATE:
                evidence = plain_evidence(direct.reason)
            else:
                evidence = f"{plain_evidence(reasons.get(member, 'a copy'))}, through another copy"
            merges.append(Merge(absorbed=member, kept=root, evidence=evidence))
    return MergePlan(
        merges=sorted(merges, key=lambda merge: merge.absorbed), compared=report.compared
    )
