"""Deduplication of literature records (the search workflow's dedup skill).

``find_clusters(records)`` groups copies of one work (indices into the input);
``RecordDeduplicator`` is the workflow's ``Deduplicator``: it clusters, asks an optional
``PairAdjudicator`` (``LLMPairAdjudicator``) about borderline pairs, and merges each
cluster with ``merge_records``. ``docs/search.md`` ("Deduplication") explains the rules.
"""

from scholarstream.search.dedup.adjudicate import (
    LLMPairAdjudicator,
    PairAdjudicator,
    PairJudgement,
    PairJudgements,
)
from scholarstream.search.dedup.deduplicator import (
    PairReport,
    RecordDeduplicator,
    find_clusters,
    judge_pairs,
)
from scholarstream.search.dedup.matching import CONFLICTING_IDS, PairDecision, Verdict, compare
from scholarstream.search.dedup.merge import merge_records
from scholarstream.search.dedup.normalize import RecordKeys, record_keys

__all__ = [
    "CONFLICTING_IDS",
    "LLMPairAdjudicator",
    "PairAdjudicator",
    "PairDecision",
    "PairJudgement",
    "PairJudgements",
    "PairReport",
    "RecordDeduplicator",
    "RecordKeys",
    "Verdict",
    "compare",
    "find_clusters",
    "judge_pairs",
    "merge_records",
    "record_keys",
]
