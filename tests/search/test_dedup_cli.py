"""``scholarstream dedup`` on real files: the CSV it writes, and its errors."""

from __future__ import annotations

import csv
import io
import subprocess
import sys
from pathlib import Path

from typer.testing import CliRunner

from scholarstream.cli.app import app
from scholarstream.errors import InvalidInputError
from tests.conftest import SHARED_DATA

SPECIAL = SHARED_DATA / "dedup" / "special_cases"
EXPORTS = SHARED_DATA / "exports" / "asysd_testthat"
runner = CliRunner()


def run(data_dir: Path, *args: str | Path) -> tuple[int, str, str, BaseException | None]:
    result = runner.invoke(app, ["--data-dir", str(data_dir), "dedup", *map(str, args)])
    return result.exit_code, result.stdout, result.stderr, result.exception


def rows(text: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(text)))


def truth_clusters() -> set[frozenset[str]]:
    with (SPECIAL / "merged_record_ids.csv").open(encoding="utf-8", newline="") as handle:
        return {frozenset(row["merged_ids"].split(";")) for row in csv.DictReader(handle)}


def test_writes_one_row_per_record_with_true_clusters(data_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "clusters.csv"
    code, _, err, _ = run(data_dir, SPECIAL / "records_pre_merged.csv", "--out", out)
    assert code == 0, err
    written = rows(out.read_text(encoding="utf-8"))
    assert list(written[0]) == ["record_id", "cluster_id"]
    assert [r["record_id"] for r in written] == [f"id_{n:07d}" for n in range(1, 13)]
    members: dict[str, set[str]] = {}
    for row in written:
        members.setdefault(row["cluster_id"], set()).add(row["record_id"])
    assert {frozenset(m) for m in members.values() if len(m) > 1} == truth_clusters()
    assert written[0]["cluster_id"] == "c000001"
    assert "Records: 12" in err and "clusters: 9" in err and "duplicates: 3" in err
    assert not (tmp_path / "clusters.csv.partial").exists()


def test_several_formats_and_records_without_ids(data_dir: Path, tmp_path: Path) -> None:
    ris = tmp_path / "no_ids.ris"
    ris.write_text(
        "TY  - JOUR\nTI  - Taurine in cats and dogs\nAU  - Doe, Jane\nPY  - 2020\n"
        "JO  - Animals\nER  - \n\n"
        "TY  - JOUR\nTI  - Taurine in cats and dogs.\nAU  - Doe, J.\nPY  - 2020\n"
        "JO  - Animals (Basel)\nER  - \n\n"
        "TY  - JOUR\nAU  - Doe, J\nER  - \n",
        encoding="utf-8",
    )
    code, out, err, _ = run(data_dir, EXPORTS / "scopus.ris", ris, "--out", "-")
    assert code == 0, err
    written = rows(out)
    names = ["no_ids.ris:1", "no_ids.ris:2", "no_ids.ris:3"]
    assert [r["record_id"] for r in written[-3:]] == names
    assert written[-2]["cluster_id"] == written[-3]["cluster_id"]
    # The record without a title has its row, in a cluster of its own.
    assert [r["cluster_id"] for r in written].count(written[-1]["cluster_id"]) == 1
    assert len(written) == 10 + 3
    assert "1 not compared" in err and "record 3" in err and "skipped: 0" in err


def test_bad_input_fails_with_what_to_do(data_dir: Path, tmp_path: Path) -> None:
    empty = tmp_path / "empty.csv"
    empty.write_text("ID,title,year\n", encoding="utf-8")
    junk = tmp_path / "junk.bin"
    junk.write_bytes(b"\x00\x01\x02")
    out = tmp_path / "out.csv"
    out.write_text("the previous result\n", encoding="utf-8")
    for args, explanation in {
        (str(tmp_path / "missing.ris"),): "Not a file",
        (str(junk),): "Cannot tell the format",
        (str(empty),): "No records found",
        (str(SPECIAL / "records_pre_merged.csv"), "--format", "docx"): "Unknown import format",
    }.items():
        *_, exception = run(data_dir, *args, "--out", out)
        assert isinstance(exception, InvalidInputError), args
        assert explanation in exception.message and exception.hint
    assert out.read_text(encoding="utf-8") == "the previous result\n"
    assert not list(tmp_path.glob("*.partial"))


def test_the_command_line_exits_2_with_error_and_what_to_do(data_dir: Path, tmp_path: Path) -> None:
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "scholarstream",
            "--data-dir",
            str(data_dir),
            "dedup",
            str(tmp_path / "missing.ris"),
            "--out",
            str(tmp_path / "out.csv"),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 2, result.stderr
    assert "Error:" in result.stderr and "What to do:" in result.stderr
    assert "missing.ris" in result.stderr
    assert not (tmp_path / "out.csv").exists()
