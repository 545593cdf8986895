"""Deduplication of literature records: the paper search's dedup skill, the stream runs',
the chat tools' and the `dedup` command's.

``find_clusters(records)`` groups copies of one work (indices into the input);
``RecordDeduplicator`` is the workflow's ``Deduplicator``: it clusters, asks an optional
``PairAdjudicator`` (the search's ``LLMPairAdjudicator``) about borderline pairs, and merges each
cluster with ``merge_records``. ``docs/search.md`` ("Deduplication") explains the rules.
"""

from scholarstream.papers.dedup._deduplicator import (
    PairAdjudicator,
    PairReport,
    RecordDeduplicator,
    find_clusters,
    judge_pairs,
)
from scholarstream.papers.dedup._matching import CONFLICTING_IDS, PairDecision, Verdict, compare
from scholarstream.papers.dedup._merge import fill_in, merge_records
from scholarstream.papers.dedup._normalize import RecordKeys, record_keys

__all__ = [
    "CONFLICTING_IDS",
    "PairAdjudicator",
    "PairDecision",
    "PairReport",
    "RecordDeduplicator",
    "RecordKeys",
    "Verdict",
    "compare",
    "fill_in",
    "find_clusters",
    "judge_pairs",
    "merge_records",
    "record_keys",
]
