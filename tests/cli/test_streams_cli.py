"""``streams list|run|reports|report`` in a real data directory. ``streams run`` runs the
stream as a durable workflow in the command's own engine and waits for it. The network is
blocked, so PubMed fails and the run is partial with what the library found; a stream whose
every source fails exits non-zero; another id is a clear error. A stream and a report are
named by their whole ids or by the first characters the lists show; a prefix that names none
or several says so and what to do."""

from __future__ import annotations

import asyncio
import json
import re
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from dbos import DBOS
from typer.testing import CliRunner

from scholarstream.accounts import ensure_local_user
from scholarstream.cli import app
from scholarstream.db import upgrade_async
from scholarstream.db.tables import StreamRow
from scholarstream.errors import ScholarStreamError
from scholarstream.settings import load_settings
from scholarstream.streams import (
    PartialStreamConfig,
    RetrievalUpdate,
    StreamQueryUpdate,
    StreamStore,
    StreamUpdate,
    build_retrieval_config,
    finish_config,
)
from tests.conftest import SHARED_DATA
from tests.helpers import assert_plain, make_runtime
from tests.streams.script import FULL_CONFIG

runner = CliRunner()


@pytest.fixture(autouse=True)
def no_engine_left() -> Iterator[None]:
    # DBOS is one instance per process: none may be left over, by another test or this one.
    DBOS.destroy(destroy_registry=False)
    yield
    DBOS.destroy(destroy_registry=False)


def fails(data_dir: Path, *args: str) -> str:
    """What a refused command says (``main`` prints it as two plain lines)."""
    result = runner.invoke(app, ["--data-dir", str(data_dir), *args], env={"COLUMNS": "160"})
    assert isinstance(result.exception, ScholarStreamError), (result.output, result.exception)
    said = f"{result.exception.message}\nWhat to do: {result.exception.hint}"
    assert_plain(said)
    return said


def run(data_dir: Path, *args: str | Path) -> tuple[int, str]:
    result = runner.invoke(
        app, ["--data-dir", str(data_dir), *map(str, args)], env={"COLUMNS": "160"}
    )
    return result.exit_code, result.stdout + result.stderr


def new_stream(data_dir: Path, sources: list[str]) -> uuid.UUID:
    async def create() -> uuid.UUID:
        settings = load_settings(data_dir=data_dir)
        await upgrade_async(settings.app_database_url)
        runtime = make_runtime(settings)
        try:
            async with runtime.database.session() as session:
                owner = (await ensure_local_user(session)).id
            config = finish_config(PartialStreamConfig.model_validate(FULL_CONFIG))
            config = config.model_copy(
                update={
                    "retrieval": build_retrieval_config(
                        keywords=config.keywords,
                        focus_areas=config.focus_areas,
                        competitors=config.competitors,
                        sources=sources,
                    )
                }
            )
            store = StreamStore(runtime.database)
            stream = await store.create(owner, config)
            enabled = {name: StreamQueryUpdate(enabled=True) for name in sources}
            await store.update(
                owner, stream.id, StreamUpdate(retrieval=RetrievalUpdate(queries=enabled))
            )
            return stream.id
        finally:
            await runtime.close()

    return asyncio.run(create())


def test_list_run_and_read_reports(data_dir: Path, tmp_path: Path) -> None:
    code, out = run(data_dir, "streams", "list")
    assert code == 0 and "No streams yet" in out
    stream_id = new_stream(data_dir, ["pubmed", "library"])

    code, out = run(data_dir, "streams", "list")
    assert code == 0 and stream_id.hex[:8] in out and "Palatin" in out  # a short id
    assert "never" in out

    # The short id 'streams list' shows is enough, as for every command.
    short = stream_id.hex[:8]
    code, out = run(data_dir, "streams", "run", short)
    assert code == 0, out
    assert out.startswith("partial: 0 new items since")
    # Sources by the names a user reads, the report by its short id, never a UUID.
    assert "PubMed failed" in out and "pubmed" not in out
    assert re.search(r"\(report [0-9a-f]{8}\)", out), out
    assert re.search(r"[0-9a-f]{8}-[0-9a-f]{4}-", out) is None, out

    code, out = run(data_dir, "streams", "reports", short)
    assert code == 0 and re.search(r"\b1 report\b", out) and "partial" in out and "PubMed" in out
    code, out = run(data_dir, "streams", "list")
    assert "never" not in out

    code, out = run(data_dir, "streams", "reports", str(stream_id), "--json")
    (summary,) = json.loads(out)["reports"]
    assert summary["failed_sources"] == ["pubmed"]
    report_id = summary["id"]
    report_short = uuid.UUID(report_id).hex[:8]
    code, out = run(data_dir, "streams", "reports", short)
    assert report_short in out and report_id not in out  # listed by its short id too
    code, out = run(data_dir, "streams", "list", "--json")
    assert json.loads(out)["streams"][0]["last_run_at"] is not None
    code, out = run(data_dir, "streams", "report", str(stream_id), report_id, "--json")
    assert code == 0 and json.loads(out)["status"] == "partial"
    code, out = run(data_dir, "streams", "report", short, report_short, "--json")
    assert code == 0 and json.loads(out)["id"] == report_id
    target = tmp_path / "report.ris"
    code, out = run(
        data_dir, "streams", "report", short, report_short, "--export", "ris", "--out", target
    )
    assert code == 0 and "Exported 0 items" in out and target.exists()

    # A screening project from the report, named the same way: the ids are found (the
    # report is empty, which is what the refusal says).
    said = fails(
        data_dir, "screening", "create", "Empty", "--stream-report", f"{short}/{report_short}"
    )
    assert said.startswith("This report has no items to screen."), said


def test_a_failed_run_and_bad_input_say_so(data_dir: Path) -> None:
    stream_id = new_stream(data_dir, ["pubmed"])
    code, out = run(data_dir, "streams", "run", str(stream_id))
    assert code == 1 and out.startswith("failed: 0 new items")

    other, export = str(uuid.uuid4()), ("--export", "docx")
    for args, exit_code, explanation in (
        (("run", other), 1, "was not found"),
        (("report", str(stream_id), other, *export), 2, "bibtex"),  # the formats there are
    ):
        result = subprocess.run(
            [sys.executable, "-m", "scholarstream", "--data-dir", str(data_dir), "streams", *args],
            capture_output=True,
            text=True,
            check=False,
        )
        assert result.returncode == exit_code, result.stderr
        assert "What to do:" in result.stderr and explanation in result.stderr


def _rename(data_dir: Path, stream_id: uuid.UUID, new_id: uuid.UUID) -> None:
    """Gives a stream (with nothing of its own yet) another id: two ids sharing a prefix."""

    async def work() -> None:
        from sqlalchemy import update

        runtime = make_runtime(load_settings(data_dir=data_dir))
        try:
            async with runtime.database.session() as session:
                await session.execute(
                    update(StreamRow).where(StreamRow.id == stream_id).values(id=new_id)
                )
                await session.commit()
        finally:
            await runtime.close()

    asyncio.run(work())


def test_a_prefix_that_names_no_stream_or_several_says_what_to_do(data_dir: Path) -> None:
    first, second = new_stream(data_dir, ["library"]), new_stream(data_dir, ["library"])
    _rename(data_dir, first, uuid.UUID("abcd1234-0000-4000-8000-000000000001"))
    _rename(data_dir, second, uuid.UUID("abcd5678-0000-4000-8000-000000000002"))

    for command in ("run", "reports", "report"):
        rest = ("0000",) if command == "report" else ()  # the report is never reached
        said = fails(data_dir, "streams", command, "abcd", *rest)
        assert "2 stream ids start abcd (abcd1234…, abcd5678…)." in said, said
        assert "What to do: Give more characters of the id." in said
        said = fails(data_dir, "streams", command, "ffff", *rest)
        assert "No stream has an id starting ffff." in said, said
        assert "'scholarstream streams list' lists them with their ids." in said
        said = fails(data_dir, "streams", command, "Palatinose", *rest)
        assert "'Palatinose' is not an id." in said, said
        assert "its first 8 characters are enough" in said

    # One of them, by enough of its id; a report it does not have is named as such.
    code, out = run(data_dir, "streams", "reports", "abcd1234")
    assert code == 0 and "0 reports" in out
    said = fails(data_dir, "streams", "report", "abcd1234", "0000")
    assert "No report has an id starting 0000." in said
    assert "'scholarstream streams reports abcd1234'" in said


def query_library(data_dir: Path, stream_id: uuid.UUID, query: StreamQueryUpdate) -> None:
    """Changes what the stream asks of the library."""

    async def change() -> None:
        runtime = make_runtime(load_settings(data_dir=data_dir))
        try:
            async with runtime.database.session() as session:
                owner = (await ensure_local_user(session)).id
            update = StreamUpdate(retrieval=RetrievalUpdate(queries={"library": query}))
            await StreamStore(runtime.database).update(owner, stream_id, update)
        finally:
            await runtime.close()

    asyncio.run(change())


def test_a_source_with_more_matches_than_its_limit_says_so(data_dir: Path) -> None:
    """A stream takes a source's best matches up to its limit: the run says how many more
    there were and how to take them, instead of leaving them unmentioned."""
    stream_id = new_stream(data_dir, ["library"])

    query_library(data_dir, stream_id, StreamQueryUpdate(query="dogs", limit=1))
    scopus = SHARED_DATA / "exports" / "asysd_testthat" / "scopus.ris"
    assert run(data_dir, "import", scopus)[0] == 0
    code, out = run(data_dir, "streams", "run", str(stream_id))
    assert code == 0, out
    assert "Local library: 8 matched, the best 1 taken" in out, out
    assert "Results per run" in out


def test_a_run_shows_its_best_items_and_names_the_command_that_lists_them_all(
    data_dir: Path,
) -> None:
    stream_id = new_stream(data_dir, ["library"])

    wide = StreamQueryUpdate(query="dogs cats animals disease", limit=50)
    query_library(data_dir, stream_id, wide)
    assert (
        run(data_dir, "import", SHARED_DATA / "exports" / "asysd_testthat" / "wos_test.ris")[0] == 0
    )
    code, out = run(data_dir, "streams", "run", str(stream_id))
    assert code == 0, out
    listed = re.findall(r"^\s*(\d+)\. ", out, flags=re.MULTILINE)
    assert listed == [str(n) for n in range(1, 11)], out
    more = re.search(r"… and (\d+) more: `scholarstream streams report (\w{8}) (\w{8})`", out)
    assert more is not None, out
    assert more.group(2) == stream_id.hex[:8]

    code, out = run(data_dir, "streams", "report", more.group(2), more.group(3))
    assert code == 0, out
    everything = re.findall(r"^\s*(\d+)\. ", out, flags=re.MULTILINE)
    assert len(everything) == 10 + int(more.group(1)), out
    assert "more:" not in out
