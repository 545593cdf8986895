"""Every input record is in exactly one cluster, also one that cannot be compared (issue 20,
point 13): a record read without a title, or with a title that has no words, is its own
cluster, in the deduplicator and in ``scholarstream dedup``. Real records from
../shared/data/dedup with the title taken out."""

from __future__ import annotations

import csv
import io
import re
from pathlib import Path

from typer.testing import CliRunner

from scholarstream.cli.app import app
from scholarstream.papers import Identifiers, Paper
from scholarstream.papers.dedup import RecordDeduplicator, find_clusters
from scholarstream.papers.formats import read_file
from tests.conftest import SHARED_DATA

SPECIAL = SHARED_DATA / "dedup" / "special_cases" / "records_pre_merged.csv"
SCOPUS = SHARED_DATA / "exports" / "asysd_testthat" / "scopus.ris"
UNTITLED = "id_0000005"
"""A record of a true duplicate pair (with id_0000006): authors, year, journal, volume,
pages and DOI, whose title is taken out."""
runner = CliRunner()


def special_rows() -> tuple[list[str], list[dict[str, str]]]:
    with SPECIAL.open(encoding="utf-8", newline="") as handle:
        reader = csv.DictReader(handle)
        return list(reader.fieldnames or []), list(reader)


def without_title(tmp_path: Path, *ids: str) -> Path:
    """The special cases file with the title of ``ids`` emptied."""
    fields, rows = special_rows()
    for row in rows:
        if row["ID"] in ids:
            row["title"] = ""
    path = tmp_path / "untitled.csv"
    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=fields)
        writer.writeheader()
        writer.writerows(rows)
    return path


def special_papers() -> list[Paper]:
    return [item for item in read_file(SPECIAL) if isinstance(item, Paper)]


def test_a_record_that_cannot_be_read_is_its_own_cluster() -> None:
    papers = special_papers()
    assert [p.record_id for p in papers] == [f"id_{n:07d}" for n in range(1, 13)]
    position = [p.record_id for p in papers].index(UNTITLED)
    together = find_clusters(papers)
    assert [position, position + 1] in together

    entries: list[Paper | None] = list(papers)
    entries[position] = None  # read, but not a record (no title)
    clusters = find_clusters(entries)

    assert sorted(i for cluster in clusters for i in cluster) == list(range(len(papers)))
    assert [position] in clusters and [position + 1] in clusters
    others = [c for c in together if position not in c]
    assert all(c in clusters for c in others)


def scopus_papers() -> list[Paper]:
    return [item for item in read_file(SCOPUS) if isinstance(item, Paper)]


def test_records_whose_titles_have_no_words_are_never_merged() -> None:
    papers = scopus_papers()
    full = papers[1]  # authors, journal, volume, pages, year
    assert full.authors and full.venue and full.volume and full.pages and full.year
    # Without identifiers only the title could tell these apart: it cannot, so each stays
    # its own cluster (before the fix the three merged on volume and pages).
    blank = [
        full.model_copy(update={"title": title, "ids": Identifiers()})
        for title in (".", "?", "[ ]")
    ]
    assert find_clusters(blank) == [[0], [1], [2]]
    size = len(papers)
    assert find_clusters([*papers, *blank])[-3:] == [[size], [size + 1], [size + 2]]


async def test_the_workflow_deduplicator_keeps_an_uncomparable_record() -> None:
    papers = scopus_papers()
    blank = papers[1].model_copy(update={"title": "--", "ids": Identifiers()})
    merged = await RecordDeduplicator().deduplicate([*papers, blank, blank.model_copy()])
    assert len(merged) == len(find_clusters(papers)) + 2
    assert [r.title for r in merged[-2:]] == ["--", "--"]


def test_the_dedup_command_gives_an_untitled_ris_record_its_own_row(
    data_dir: Path, tmp_path: Path
) -> None:
    text = SCOPUS.read_text(encoding="utf-8-sig")
    records = [part for part in re.split(r"(?m)^ER  - *\n", text) if part.strip()]
    assert len(records) == 10
    untitled = re.sub(r"(?m)^TI  - .*\n", "", records[1])
    assert "TI  - " not in untitled and "VL  - " in untitled and "SP  - " in untitled
    path = tmp_path / "scopus_untitled.ris"
    parts = [*records[:1], untitled, *records[2:], records[1]]
    path.write_text("".join(f"{part}ER  - \n\n" for part in parts), encoding="utf-8")

    result = runner.invoke(app, ["--data-dir", str(data_dir), "dedup", str(path), "--out", "-"])

    assert result.exit_code == 0, result.stderr
    written = list(csv.DictReader(io.StringIO(result.stdout)))
    names = [f"scopus_untitled.ris:{n}" for n in range(1, 12)]
    assert [r["record_id"] for r in written] == names
    clusters = [r["cluster_id"] for r in written]
    # The untitled record 2 cannot be compared, not even with its full copy (record 11).
    assert clusters.count(clusters[1]) == 1 and clusters.count(clusters[10]) == 1
    assert len(set(clusters)) == 11
    assert "Records: 11" in result.stderr and "record 2" in result.stderr


def test_the_dedup_command_writes_a_row_for_a_record_without_a_title(
    data_dir: Path, tmp_path: Path
) -> None:
    path = without_title(tmp_path, UNTITLED)
    result = runner.invoke(app, ["--data-dir", str(data_dir), "dedup", str(path), "--out", "-"])
    assert result.exit_code == 0, result.stderr
    written = list(csv.DictReader(io.StringIO(result.stdout)))
    assert [r["record_id"] for r in written] == [f"id_{n:07d}" for n in range(1, 13)]
    cluster = {r["record_id"]: r["cluster_id"] for r in written}
    members = [r for r, c in cluster.items() if c == cluster[UNTITLED]]
    assert members == [UNTITLED]
    assert [r for r, c in cluster.items() if c == cluster["id_0000006"]] == ["id_0000006"]
    assert cluster["id_0000001"] == cluster["id_0000002"]
    assert "Records: 12" in result.stderr and "clusters: 10" in result.stderr
    assert "record 5" in result.stderr and "no title" in result.stderr
    assert "Skipped" not in result.stderr
