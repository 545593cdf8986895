"""``scholarstream import`` names the format a file was read in by its label, as the
Library page does, not by its id."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from scholarstream.cli import app
from scholarstream.cli.context import console
from tests.conftest import SHARED_DATA

SCOPUS = SHARED_DATA / "exports" / "asysd_testthat" / "scopus.ris"


def test_the_import_table_names_the_format_by_its_label(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(console, "width", 80)
    result = CliRunner().invoke(app, ["--data-dir", str(data_dir), "import", str(SCOPUS)])
    assert result.exit_code == 0, result.output
    row = next(line for line in result.stdout.splitlines() if "scopus.ris" in line)
    assert re.search(r"\bRIS\b", row)
    assert not re.search(r"\bris\b", row.replace("scopus.ris", ""))
