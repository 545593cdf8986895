"""``scholarstream evidence``: the pack for a question as a numbered reference list, from
the local library (the one source that needs no network), and its export."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from scholarstream.cli import app
from tests.conftest import SHARED_DATA
from tests.helpers import assert_plain

WOS = SHARED_DATA / "exports" / "asysd_testthat" / "wos_test.ris"  # 50 papers on cocker spaniels
QUESTION = "primary cataract in cocker spaniels"
runner = CliRunner()


def run(data_dir: Path, *args: str | Path) -> tuple[int, str, str]:
    result = runner.invoke(app, ["--data-dir", str(data_dir), *map(str, args)])
    if result.exception and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture
def library(data_dir: Path) -> Path:
    assert run(data_dir, "import", WOS)[0] == 0
    return data_dir


def test_the_pack_is_a_numbered_reference_list(library: Path, tmp_path: Path) -> None:
    target = tmp_path / "pack.ris"
    code, out, _ = run(
        library, "evidence", QUESTION, "-s", "library", "--size", "3", "--export", "ris",
        "--output", target,
    )  # fmt: skip
    assert code == 0, out
    assert out.startswith(f"Evidence for: {QUESTION}")
    assert "[1] Engelhardt" in out and "[3] " in out and "[4] " not in out
    assert "cataract" in out.split("[2]")[0].lower()
    assert out.count("found in Local library") == 3
    assert "Local library: 25 records (of 50 matches), 3 in the pack." in out
    assert "the pack holds the best 3" in out
    assert f"Wrote 3 records to {target} (RIS)." in out.replace("\n", "")
    assert target.read_text(encoding="utf-8").count("ER  -") == 3
    assert not target.with_name("pack.ris.partial").exists()


def test_json_is_the_pack_and_the_search(library: Path) -> None:
    code, out, _ = run(library, "evidence", QUESTION, "--sources", "library", "-n", "2", "--json")
    assert code == 0, out
    result = json.loads(out)
    assert [item["key"] for item in result["pack"]["items"]] == [1, 2]
    assert result["search"]["sources"][0]["source"] == "library"
    assert result["search"]["queries"][0]["source"] == "library"


def test_nothing_found_says_what_to_try(library: Path) -> None:
    code, out, _ = run(library, "evidence", "quantum chromodynamics lattice", "-s", "library")
    assert code == 0, out
    assert "No evidence was found for this question." in out
    assert "--sources" in out


@pytest.mark.parametrize(
    ("args", "explanation"),
    [
        (("  ",), "question is empty"),
        (("x", "--export", "docx"), "Unknown export format"),
        (("x", "--output", "pack.ris"), "no format was asked for"),
        (("x", "--sources", "scopus"), "Unknown source 'scopus'"),
        (("x", "--sources", ","), "names no source"),
        (("x", "-s", "library", "--no-library"), "nothing to search"),
        (("x", "--size", "0"), "--size"),
        (("x", "--export", "ris", "--output", "/no/such/folder/x.ris"), "does not exist"),
    ],
)
def test_bad_arguments_say_what_to_do(
    data_dir: Path, args: tuple[str, ...], explanation: str
) -> None:
    code, out, _ = run(data_dir, "evidence", *args, "--json")
    assert code == 2, (args, out)
    error = json.loads(out)["error"]
    assert explanation in f"{error['message']} {error['hint']}", error
    assert error["hint"], error
    assert_plain(out)


def test_without_json_a_bad_argument_is_two_plain_lines(data_dir: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "scholarstream", "--data-dir", str(data_dir), "evidence", " "],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 2, result.stderr
    assert "Error: The question is empty." in result.stderr
    assert "What to do: Say what you want the evidence for" in result.stderr
