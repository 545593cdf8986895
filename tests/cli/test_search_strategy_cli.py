"""``scholarstream search strategy``: the strategy a question gets, without searching (no
source is called: the library needs no network, PubMed's query is only written)."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from scholarstream.cli import app
from scholarstream.errors import InvalidInputError

runner = CliRunner()
QUESTION = "Endoscopic ultrasound for the staging of gastric cancer in adults"


def run(data_dir: Path, *args: str) -> tuple[int, str]:
    result = runner.invoke(app, ["--data-dir", str(data_dir), *args])
    if result.exception and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.exit_code, result.output


def test_the_strategy_as_json(data_dir: Path) -> None:
    code, out = run(
        data_dir, "search", "strategy", QUESTION, "--offline", "--json", "-s", "pubmed",
        "-s", "library",
    )  # fmt: skip
    assert code == 0, out
    shown = json.loads(out)
    assert shown["builder"] == "rules"
    assert [q["source"] for q in shown["strategy"]["queries"]] == ["pubmed", "library"]
    pubmed = shown["strategy"]["queries"][0]["query"]
    assert '"Stomach Neoplasms"[MeSH]' in pubmed and '"Endosonography"[MeSH]' in pubmed
    assert "Diagnosis" not in pubmed and " NOT " not in pubmed
    mapped = {h["heading"]: h["how"] for c in shown["mesh"] for h in c["headings"]}
    assert mapped["Stomach Neoplasms"] == "entry term"
    assert "MeSH: " in shown["strategy"]["rationale"]


def test_the_question_needs_no_quotes(data_dir: Path) -> None:
    quoted = run(data_dir, "search", "strategy", QUESTION, "--offline", "--json")
    unquoted = run(data_dir, "search", "strategy", *QUESTION.split(), "--offline", "--json")
    assert quoted[0] == unquoted[0] == 0
    assert json.loads(unquoted[1]) == json.loads(quoted[1])
    assert json.loads(unquoted[1])["question"] == QUESTION


def test_the_strategy_as_tables(data_dir: Path) -> None:
    code, out = run(data_dir, "search", "strategy", "heart attack in women", "--offline")
    assert code == 0, out
    assert "Myocardial Infarction" in out and "entry term" in out
    assert "Queries" in out and "rule-based builder" in out


def test_plain_errors(data_dir: Path) -> None:
    result = runner.invoke(app, ["--data-dir", str(data_dir), "search", "strategy", "  "])
    assert isinstance(result.exception, InvalidInputError)
    assert result.exception.message == "The question is empty."
    result = runner.invoke(
        app, ["--data-dir", str(data_dir), "search", "strategy", "asthma", "-s", "scopus"]
    )
    assert isinstance(result.exception, InvalidInputError)
    assert "Unknown source" in result.exception.message


def test_a_broader_heading_is_searched_as_indexed_never_exploded(data_dir: Path) -> None:
    question = "Red flags to screen for vertebral fracture in patients with low-back pain"
    code, out = run(
        data_dir, "search", "strategy", question, "--offline", "--json", "-s", "pubmed"
    )  # fmt: skip
    assert code == 0, out
    pubmed = json.loads(out)["strategy"]["queries"][0]["query"]
    assert '"Low Back Pain"[MeSH]' in pubmed and '"Back Pain"[Mesh:NoExp]' in pubmed
    assert '"Back Pain"[MeSH]' not in pubmed


def test_a_country_is_its_geographic_heading(data_dir: Path) -> None:
    code, out = run(
        data_dir, "search", "strategy", "dengue vaccine effectiveness in Brazil", "--offline",
        "--json", "-s", "pubmed",
    )  # fmt: skip
    assert code == 0, out
    assert '"Brazil"[MeSH]' in json.loads(out)["strategy"]["queries"][0]["query"]
