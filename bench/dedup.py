"""Deduplication accuracy and speed on labelled duplicate sets.

Each set is a directory in the layout of ../shared/data/dedup (the default runs those and
the sets under bench/data/dedup, built from other fields): a records CSV
(``records_pre_merged.csv``, or the ASySD ``labelled_test_set.csv``) and a CSV of the true
duplicate clusters (``merged_record_ids.csv``, or ASySD's clusters taken from bib-dedupe,
``*clusters*.csv``), one cluster per row, record ids joined by ``;`` in column
``merged_ids``. Ids are matched with the ``id_`` prefix and leading zeros dropped, so
bib-dedupe's ``id_0000001`` is ASySD's ``record_id`` 1. A record in no cluster is unique.

Records are read through the product's own CSV import (the path a user's file takes), then
``find_clusters`` groups them (rules only, no model). The counting convention is printed
with the table.

    python bench/dedup.py [--data DIR [DIR ...]] [--json bench/results/dedup.json]
"""

from __future__ import annotations

import argparse
import csv
import itertools
import json
import re
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

from scholarstream.papers import Record
from scholarstream.papers.dedup import find_clusters
from scholarstream.papers.formats import RecordProblem, read_file

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "dedup"
OWN_DATA = Path(__file__).resolve().parent / "data" / "dedup"
"""Sets built for this project outside biomedicine (each with a SOURCE.txt)."""
RECORD_FILES = ("records_pre_merged.csv", "labelled_test_set.csv")
CLUSTER_FILES = ("merged_record_ids.csv", "*clusters*.csv")

CONVENTION = """\
Counting (per record): a true duplicate is a record that is not the first (lowest index)
of its true cluster; a record marked duplicate is one that is not the first of its found
cluster. A marked record is a false positive (FP) if its found cluster holds a record of
another true cluster (it was merged with a record it is not a duplicate of), else a true
positive (TP). Sensitivity = TP / true duplicates. Specificity = TN / (TN + FP) with
N = records that are not true duplicates (one per true work) and TN = N - FP.
Pairwise figures count the record pairs inside found clusters against those inside true
clusters."""

_ID = re.compile(r"^(?:id_)?0*(\d+)$", re.IGNORECASE)


@dataclass
class Score:
    records: int
    true_duplicates: int
    found: int
    true_positives: int
    false_positives: int
    sensitivity: float
    specificity: float
    pair_precision: float
    pair_recall: float


@dataclass
class SetResult(Score):
    name: str
    skipped: int
    seconds: float


def canonical_id(value: str) -> str:
    """``id_0000001`` and ``1`` name the same record."""
    value = value.strip()
    match = _ID.match(value)
    return match.group(1) if match else value


def _one(directory: Path, patterns: Sequence[str]) -> Path:
    for pattern in patterns:
        found = sorted(directory.glob(pattern))
        if found:
            return found[0]
    raise SystemExit(f"{directory}: no file matching {', '.join(patterns)}")


def read_set(directory: Path) -> tuple[list[Record], list[int], int]:
    """The set's records (product CSV import), each record's true cluster number, and how
    many rows the import skipped."""
    records: list[Record] = []
    skipped = 0
    for item in read_file(_one(directory, RECORD_FILES)):
        if isinstance(item, RecordProblem):
            skipped += 1
        else:
            records.append(item)
    cluster_of: dict[str, int] = {}
    with _one(directory, CLUSTER_FILES).open(encoding="utf-8-sig", newline="") as handle:
        for number, row in enumerate(csv.DictReader(handle)):
            for record_id in row["merged_ids"].split(";"):
                if record_id.strip():
                    cluster_of[canonical_id(record_id)] = number
    singles = itertools.count(len(cluster_of) + 1)
    truth = [cluster_of.get(canonical_id(record.record_id or ""), -1) for record in records]
    return records, [label if label >= 0 else next(singles) for label in truth], skipped


def _pairs(clusters: Sequence[Sequence[int]]) -> set[tuple[int, int]]:
    return {pair for cluster in clusters for pair in itertools.combinations(sorted(cluster), 2)}


def score(found: Sequence[Sequence[int]], truth: Sequence[int]) -> Score:
    """The figures of the printed convention (``truth[i]``: record i's true cluster)."""
    first_of_truth: dict[int, int] = {}
    for index, label in enumerate(truth):
        first_of_truth.setdefault(label, index)
    true_duplicates = sum(1 for i, label in enumerate(truth) if first_of_truth[label] != i)
    negatives = len(truth) - true_duplicates
    marked = tp = fp = 0
    for cluster in found:
        members = sorted(cluster)
        mixed = len({truth[i] for i in members}) > 1
        for _ in members[1:]:
            marked += 1
            if mixed:
                fp += 1
            else:
                tp += 1
    by_truth: dict[int, list[int]] = {}
    for index, label in enumerate(truth):
        by_truth.setdefault(label, []).append(index)
    found_pairs, true_pairs = _pairs(found), _pairs(list(by_truth.values()))
    common = len(found_pairs & true_pairs)
    return Score(
        records=len(truth),
        true_duplicates=true_duplicates,
        found=marked,
        true_positives=tp,
        false_positives=fp,
        sensitivity=tp / true_duplicates if true_duplicates else 1.0,
        specificity=(negatives - fp) / negatives if negatives else 1.0,
        pair_precision=common / len(found_pairs) if found_pairs else 1.0,
        pair_recall=common / len(true_pairs) if true_pairs else 1.0,
    )


def run_set(directory: Path) -> SetResult:
    records, truth, skipped = read_set(directory)
    started = time.perf_counter()
    found = find_clusters(records)
    seconds = time.perf_counter() - started
    assert sorted(i for cluster in found for i in cluster) == list(range(len(records)))
    return SetResult(
        name=directory.name, skipped=skipped, seconds=seconds, **asdict(score(found, truth))
    )


def print_table(results: Sequence[SetResult]) -> None:
    print(CONVENTION)
    print()
    header = (
        f"{'set':20} {'records':>7} {'true dups':>9} {'found':>6} {'TP':>6} {'FP':>4} "
        f"{'sensitivity':>11} {'specificity':>11} {'pair P':>7} {'pair R':>7} {'seconds':>8}"
    )
    print(header)
    print("-" * len(header))
    for r in results:
        print(
            f"{r.name:20} {r.records:7d} {r.true_duplicates:9d} {r.found:6d} "
            f"{r.true_positives:6d} {r.false_positives:4d} {r.sensitivity:11.4f} "
            f"{r.specificity:11.4f} {r.pair_precision:7.4f} {r.pair_recall:7.4f} "
            f"{r.seconds:8.3f}"
        )
    skipped = sum(r.skipped for r in results)
    if skipped:
        print(f"({skipped} rows the CSV import could not read were left out)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--data",
        type=Path,
        nargs="+",
        default=None,
        help=f"set directories (default: every set under {DATA} and {OWN_DATA})",
    )
    parser.add_argument("--json", type=Path, help="also write the figures as JSON here")
    args = parser.parse_args()
    directories: list[Path] = args.data or [
        p
        for root in (DATA, OWN_DATA)
        if root.is_dir()
        for p in sorted(root.iterdir())
        if p.is_dir()
    ]
    results = [run_set(directory) for directory in directories]
    print_table(results)
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        payload = {"convention": CONVENTION, "sets": [asdict(r) for r in results]}
        args.json.write_text(json.dumps(payload, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
