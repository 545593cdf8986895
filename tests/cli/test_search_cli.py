"""``scholarstream search``: the checkpoints in a terminal, against the local library (the
one source that needs no network), then the export."""

from __future__ import annotations

import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

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


def command(data_dir: Path, *args: str | Path, input: str = "") -> subprocess.CompletedProcess[str]:
    """The command as a user runs it: failures are the two plain lines on stderr."""
    return subprocess.run(
        [sys.executable, "-m", "scholarstream", "--data-dir", str(data_dir), *map(str, args)],
        input=input,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def invoke(data_dir: Path, *args: str | Path, input: str = "") -> Result:
    result = runner.invoke(
        app, ["--data-dir", str(data_dir), *map(str, args)], input=input, env={"COLUMNS": "80"}
    )
    if result.exception and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result


def test_enter_is_no_answer_and_the_run_is_kept_for_a_later_export(
    data_dir: Path, tmp_path: Path
) -> None:
    assert run(data_dir, "import", WOS)[0] == 0
    # Enter at the results does not accept them: the choices are shown again.
    answers = "a\n\nr 1 2\naccept\n"
    result = invoke(data_dir, "search", QUESTION, "-s", "library", input=answers)
    assert result.exit_code == 0, result.output
    out = " ".join(result.stdout.split())
    assert "Results: r N, i N, f TEXT, broaden, narrow, more, again or accept" in out
    assert "Nothing chosen." in out and "accept (finish with these results)" in out
    assert "Done:" in out and "2 marked relevant" in out
    match = re.search(r"Saved as search run ([0-9a-f]{8}): 'scholarstream search export \1", out)
    assert match, out
    run_id = match.group(1)

    listed = invoke(data_dir, "search", "runs")
    assert listed.exit_code == 0 and run_id in listed.stdout and "completed" in listed.stdout
    assert all(len(line) <= 80 for line in listed.stdout.splitlines())

    relevant = tmp_path / "relevant.ris"
    exported = invoke(
        data_dir, "search", "export", run_id, "--format", "ris", "--only", "relevant",
        "--out", relevant,
    )  # fmt: skip
    assert exported.exit_code == 0, exported.output
    assert relevant.read_text(encoding="utf-8").count("ER  -") == 2
    everything = tmp_path / "all.csv"
    exported = invoke(data_dir, "search", "export", run_id, "--format", "csv", "--out", everything)
    assert exported.exit_code == 0, exported.output
    assert "Wrote " in exported.stdout and everything.stat().st_size > 0

    unknown = command(data_dir, "search", "export", "0000", "--format", "ris")
    assert unknown.returncode == 1 and "No search run has an id starting 0000" in unknown.stderr


def test_an_export_with_nothing_in_it_is_refused_and_writes_no_file(
    data_dir: Path, tmp_path: Path
) -> None:
    target = tmp_path / "relevant.ris"
    # --yes marks nothing: --only relevant could only write an empty file. Said at once.
    result = command(
        data_dir, "search", QUESTION, "-s", "library", "--yes", "--only", "relevant",
        "--export", "ris", "--out", target,
    )  # fmt: skip
    assert result.returncode == 2
    errors = " ".join(result.stderr.split())
    assert "--yes shows you no results to mark" in errors and "--only all" in errors
    assert not target.exists()

    # A run with papers, none marked: exporting only the relevant ones writes nothing.
    assert run(data_dir, "import", WOS)[0] == 0
    done = invoke(data_dir, "search", QUESTION, "-s", "library", "--yes")
    assert done.exit_code == 0, done.output
    run_id = re.findall(r"search run ([0-9a-f]{8})", done.stdout)[0]
    refused = invoke(data_dir, "search", "export", run_id, "--only", "relevant", "--out", target)
    assert refused.exit_code == 1
    errors = " ".join(refused.stderr.split())
    assert "Nothing exported: no paper was marked relevant" in errors
    assert f"scholarstream search export {run_id} --format ris --only all" in errors
    assert not target.exists() and not target.with_name("relevant.ris.partial").exists()


def test_input_that_ends_before_an_answer_says_how_to_answer(data_dir: Path) -> None:
    assert run(data_dir, "import", WOS)[0] == 0
    result = command(data_dir, "search", QUESTION, "-s", "library", input="a\n")
    assert result.returncode == 2
    errors = " ".join(result.stderr.split())
    assert "The input ended before the search was finished." in errors
    assert "'accept'" in errors and "Traceback" not in errors
