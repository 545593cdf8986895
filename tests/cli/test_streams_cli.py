"""``streams list|run|reports|report`` in a real data directory. ``streams run`` runs the
stream as a durable workflow in the command's own engine and waits for it. The network is
blocked, so PubMed fails and the run is partial with what the library found; a stream whose
every source fails exits non-zero; another id is a clear error."""

from __future__ import annotations

import asyncio
import json
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
from tests.helpers import make_runtime
from tests.streams.script import FULL_CONFIG

runner = CliRunner()


@pytest.fixture(autouse=True)
def no_engine_left() -> Iterator[None]:
    # DBOS is one instance per process: none may be left over, by another test or this one.
    DBOS.destroy(destroy_registry=False)
    yield
    DBOS.destroy(destroy_registry=False)


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

    code, out = run(data_dir, "streams", "run", str(stream_id))
    assert code == 0, out
    assert out.startswith("partial: 0 new items since")
    assert "pubmed failed" in out

    code, out = run(data_dir, "streams", "reports", str(stream_id))
    assert code == 0 and "1 reports" in out and "partial" in out and "pubmed" in out
    code, out = run(data_dir, "streams", "list")
    assert "never" not in out

    code, out = run(data_dir, "streams", "reports", str(stream_id), "--json")
    (summary,) = json.loads(out)["reports"]
    assert summary["failed_sources"] == ["pubmed"]
    report_id = summary["id"]
    code, out = run(data_dir, "streams", "list", "--json")
    assert json.loads(out)["streams"][0]["last_run_at"] is not None
    code, out = run(data_dir, "streams", "report", str(stream_id), report_id, "--json")
    assert code == 0 and json.loads(out)["status"] == "partial"
    target = tmp_path / "report.ris"
    code, out = run(
        data_dir, "streams", "report", str(stream_id), report_id, "--export", "ris", "--out", target
    )
    assert code == 0 and "Exported 0 items" in out and target.exists()


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
