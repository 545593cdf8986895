"""``scholarstream screening``: create a project from a library search or collection, list
the projects, print the status with the PRISMA counts, export the decisions and the
diagram; bad input is refused plainly, before anything is written."""

from __future__ import annotations

import asyncio
import csv
import io
import json
import re
import uuid
from pathlib import Path

import pytest
import rispy
from typer.testing import CliRunner

from scholarstream.accounts import ensure_local_user
from scholarstream.cli import app
from scholarstream.cli.context import console
from scholarstream.errors import ScholarStreamError
from scholarstream.screening import DecisionIn, screening_service
from scholarstream.settings import load_settings
from tests.helpers import assert_plain, make_runtime
from tests.screening.world import EXCLUSION, svg_words, triptans

runner = CliRunner()


def invoke(data_dir: Path, *args: str) -> str:
    result = runner.invoke(app, ["--data-dir", str(data_dir), *args])
    assert result.exit_code == 0, (result.output, result.exception)
    return result.stdout


def fails(data_dir: Path, *args: str) -> str:
    """What the command's failure says (``main`` prints it as two plain lines)."""
    result = runner.invoke(app, ["--data-dir", str(data_dir), *args])
    assert isinstance(result.exception, ScholarStreamError), (result.output, result.exception)
    said = str(result.exception)
    assert_plain(said)
    return said


def _screen(data_dir: Path, project_id: uuid.UUID, decisions: int) -> None:
    """Decides the first records as the review did, through the service."""

    async def work() -> None:
        runtime = make_runtime(load_settings(data_dir=data_dir))
        try:
            service = screening_service(runtime)
            async with runtime.database.session() as session:
                user = await ensure_local_user(session)
            review = triptans()
            for _ in range(decisions):
                step = await service.next(user.id, project_id)
                assert step.record is not None
                relevant = review.relevant(step.record.title)
                await service.decide(
                    user.id,
                    project_id,
                    DecisionIn(
                        record_id=step.record.id,
                        decision="include" if relevant else "exclude",
                        reason=None if relevant else EXCLUSION[0],
                    ),
                )
        finally:
            await runtime.close()

    asyncio.run(work())


def test_create_list_status_and_export(
    data_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(console, "width", 80)  # a terminal's default
    source = tmp_path / "triptans.csv"
    source.write_bytes(triptans().csv_bytes)
    invoke(data_dir, "import", str(source))

    refused = fails(data_dir, "screening", "create", "Nothing to screen")
    assert "--library-query" in refused and "--run" in refused
    out = invoke(
        data_dir,
        "screening",
        "create",
        "Triptans",
        "--library-query",
        "",
        "--keyword",
        "migraine",
        "--include",
        "Randomised trial",
        *[arg for reason in EXCLUSION for arg in ("--exclude", reason)],
        "--json",
    )
    project = json.loads(out)
    assert project["record_count"] == 40 and project["exclusion_criteria"] == EXCLUSION
    project_id = uuid.UUID(project["id"])

    listed = json.loads(invoke(data_dir, "screening", "list", "--json"))["projects"]
    assert [p["id"] for p in listed] == [str(project_id)]
    table = invoke(data_dir, "screening", "list")
    short = project_id.hex[:8]  # as every list shows an id, and every command takes it back
    assert "Triptans" in table and short in table and str(project_id) not in table

    _screen(data_dir, project_id, 10)
    # The list names each project and says how far you are, in 80 columns.
    assert (
        json.loads(invoke(data_dir, "screening", "list", "--json"))["projects"][0]["screened"] == 10
    )
    table = invoke(data_dir, "screening", "list")
    row = next(line for line in table.splitlines() if short in line)
    assert "Triptans" in row and "10 / 40" in row
    assert max(map(len, table.splitlines())) <= 80
    status = json.loads(invoke(data_dir, "screening", "status", str(project_id), "--json"))
    assert status["progress"]["screened"] == 10
    assert status["prisma"]["screened"] == 10
    text = invoke(data_dir, "screening", "status", short)
    assert "You screened 10 of 40 records" in text and "PRISMA 2020 flow" in text
    removed = next(line for line in text.splitlines() if "Duplicate records removed" in line)
    assert re.search(r"│\s+0 │", removed), removed  # the library's merges: none here

    ris = tmp_path / "decisions.ris"
    invoke(data_dir, "screening", "export", str(project_id), "--format", "ris", "-o", str(ris))
    entries = rispy.loads(ris.read_text(encoding="utf-8"))
    assert len(entries) == 40
    assert sum(any("Screening decision:" in n for n in e.get("notes", [])) for e in entries) == 40

    png = tmp_path / "prisma.png"
    invoke(data_dir, "screening", "export", short, "-f", "prisma-png", "-o", str(png))
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    svg = tmp_path / "prisma.svg"
    invoke(data_dir, "screening", "export", str(project_id), "-f", "prisma-svg", "-o", str(svg))
    assert "Records screened (n = 10)" in svg_words(svg.read_text(encoding="utf-8"))
    counts = tmp_path / "prisma.csv"
    invoke(data_dir, "screening", "export", str(project_id), "-f", "prisma-csv", "-o", str(counts))
    rows = list(csv.reader(io.StringIO(counts.read_text(encoding="utf-8-sig"))))
    assert ["screening", "Records screened", "10"] in rows
    # Without -o, a file named after the project, as the web downloads are.
    monkeypatch.chdir(tmp_path)
    said = invoke(data_dir, "screening", "export", short, "-f", "bibtex")
    assert (tmp_path / "triptans-screening.bib").is_file(), said
    invoke(data_dir, "screening", "export", short, "-f", "prisma-svg")
    assert (tmp_path / "triptans-prisma.svg").read_text(encoding="utf-8").startswith("<svg")

    assert "prisma-png" in fails(data_dir, "screening", "export", str(project_id), "-f", "docx")
    assert "'not-an-id' is not an id" in fails(data_dir, "screening", "status", "not-an-id")
    assert "was not found" in fails(data_dir, "screening", "status", str(uuid.uuid4()))
    other = "0000" if not short.startswith("0000") else "ffff"
    unknown = fails(data_dir, "screening", "export", other)
    assert f"No screening project has an id starting {other}." in unknown
    assert "'scholarstream screening list' lists them" in unknown
    no_run = fails(data_dir, "screening", "create", "From a run", "--run", other)
    assert f"No search run has an id starting {other}." in no_run
    assert "'scholarstream search runs' lists them" in no_run
    assert "STREAM/REPORT" in fails(
        data_dir, "screening", "create", "Half", "--stream-report", short
    )


def test_create_refuses_a_name_one_of_your_projects_has(data_dir: Path, tmp_path: Path) -> None:
    source = tmp_path / "triptans.csv"
    source.write_bytes(triptans().csv_bytes)
    invoke(data_dir, "import", str(source))
    invoke(data_dir, "screening", "create", "Triptans for migraine", "--library-query", "")

    said = fails(data_dir, "screening", "create", " TRIPTANS  for migraine", "--library-query", "")
    assert "You already have a screening project named “Triptans for migraine”" in said
    assert "Choose another name, or open “Triptans for migraine”" in said
    assert "'scholarstream screening list'" in said
    listed = json.loads(invoke(data_dir, "screening", "list", "--json"))["projects"]
    assert [p["name"] for p in listed] == ["Triptans for migraine"]


def test_create_says_where_to_screen_on_the_public_address_or_the_servers(
    data_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The CLI cannot know the address a server listens on (``serve --port`` may differ from
    the settings): a whole link on ``server.public_url``, else the page's path and how to
    get a link; never a made-up address."""
    monkeypatch.setattr(console, "width", 60)  # a narrow terminal: the line is never cut
    source = tmp_path / "triptans.csv"
    source.write_bytes(triptans().csv_bytes)
    invoke(data_dir, "import", str(source))
    monkeypatch.delenv("SCHOLARSTREAM_SERVER__PUBLIC_URL", raising=False)
    first = invoke(data_dir, "screening", "create", "Triptans", "--library-query", "")
    project_id = first.split("Project id: ", 1)[1].split()[0]
    assert (
        f"Screen it in the web UI: open /screening/{project_id}/screen on your ScholarStream "
        "server's address (set server.public_url to get a whole link here)."
    ) in first
    assert "http" not in first

    monkeypatch.setenv("SCHOLARSTREAM_SERVER__PUBLIC_URL", "https://review.example.org/")
    second = invoke(data_dir, "screening", "create", "Again", "--library-query", "")
    project_id = second.split("Project id: ", 1)[1].split()[0]
    assert (
        f"Screen it in the web UI at https://review.example.org/screening/{project_id}/screen"
        in second
    )
