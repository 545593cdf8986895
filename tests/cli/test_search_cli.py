"""``scholarstream search``: the checkpoints in a terminal, against the local library (the
one source that needs no network), then the export."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from typer.testing import CliRunner

from scholarstream.cli import app
from tests.conftest import SHARED_DATA

WOS = SHARED_DATA / "exports" / "asysd_testthat" / "wos_test.ris"  # 50 papers on cocker spaniels
QUESTION = "eye diseases in cocker spaniel dogs"
runner = CliRunner()


def run(data_dir: Path, *args: str | Path, input: str = "") -> tuple[int, str]:
    result = runner.invoke(app, ["--data-dir", str(data_dir), *map(str, args)], input=input)
    if result.exception and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.exit_code, result.stdout


def test_review_mark_iterate_and_export(data_dir: Path, tmp_path: Path) -> None:
    assert run(data_dir, "import", WOS)[0] == 0
    out_file = tmp_path / "relevant.ris"
    answers = "\n".join(
        [
            "a",  # approve the strategy
            "r 1 2",  # mark the two best relevant
            "i 3",
            "f only eye disease",
            "again",  # search again with that feedback
            "a",  # approve the second strategy
            "accept",
        ]
    )
    code, out = run(
        data_dir,
        "search",
        QUESTION,
        "--source",
        "library",
        "--export",
        "ris",
        "--only",
        "relevant",
        "--out",
        out_file,
        input=answers + "\n",
    )
    assert code == 0, out
    assert out.count("Search strategy") == 2 and out.count("Results · iteration") == 2
    assert "library" in out and "Marked: 2 relevant, 1 irrelevant." in out
    assert "2 marked relevant" in out
    assert out_file.read_text(encoding="utf-8").count("ER  -") == 2
    assert not out_file.with_name("relevant.ris.partial").exists()


def test_yes_runs_without_checkpoints(data_dir: Path, tmp_path: Path) -> None:
    assert run(data_dir, "import", WOS)[0] == 0
    target = tmp_path / "all.csv"
    code, out = run(
        data_dir, "search", QUESTION, "-s", "library", "--yes", "--export", "csv", "--out", target
    )
    assert code == 0, out
    assert "Search strategy" not in out and "Done:" in out
    rows = target.read_text(encoding="utf-8").strip().splitlines()
    assert len(rows) > 2 and "cocker" in target.read_text(encoding="utf-8").lower()


def test_edit_the_strategy_in_the_editor(
    data_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert run(data_dir, "import", WOS)[0] == 0
    editor = tmp_path / "editor.py"
    editor.write_text(
        textwrap.dedent(
            """
            import json, sys
            path = sys.argv[1]
            strategy = json.load(open(path))
            strategy["queries"][0]["query"] = "otitis externa"
            json.dump(strategy, open(path, "w"))
            """
        )
    )
    monkeypatch.setenv("EDITOR", f"{sys.executable} {editor}")
    code, out = run(data_dir, "search", QUESTION, "-s", "library", input="e\naccept\n")
    assert code == 0, out
    # The unedited strategy finds all 50 cocker spaniel papers; the edited one only these.
    assert "3 papers (3 found" in out and "Survey of otitis" in out


def test_bad_input_says_what_to_do(data_dir: Path) -> None:
    for args, explanation in {
        ("search", "  "): "question is empty",
        ("search", QUESTION, "--export", "docx"): "bibtex",
        ("search", QUESTION, "--source", "scopus"): "Unknown source",
    }.items():
        result = subprocess.run(
            [sys.executable, "-m", "scholarstream", "--data-dir", str(data_dir), *args],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert result.returncode == 2, (args, result.stderr)
        assert "Error:" in result.stderr and explanation in result.stderr, result.stderr
        assert "What to do:" in result.stderr
