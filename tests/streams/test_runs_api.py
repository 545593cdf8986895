"""The monitoring API over real HTTP (a live server with the durable engine, sources
answered from recorded responses), on SQLite and PostgreSQL: run a stream now (202 with the
run's report, ``running``, read until it has finished), list and read its reports, export
one as RIS, BibTeX and CSV; a second run while one is in progress is a 409; a failing
source gives a partial report; another user's stream and reports are a 404; without the
durable engine a run is refused (503) and nothing is claimed."""

from __future__ import annotations

import asyncio
import csv
import io
import time
import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import rispy
from bibtexparser.entrypoint import parse_string

from scholarstream.db.tables import StreamRow
from scholarstream.runtime import Runtime, build_runtime
from scholarstream.settings import Settings, load_settings
from scholarstream.streams.monitoring import ReportStore
from tests.chat.world import read_events
from tests.helpers import PASSWORD
from tests.search.world import LiteratureWorld
from tests.streams.script import FULL_CONFIG
from tests.web.live import Account, LiveServer, serve

STREAMS = "/api/v1/streams"
RECORDED = {"pubmed", "openalex", "semantic_scholar", "arxiv", "library"}
OTHERS = ["clinicaltrials", "crossref", "google_scholar"]
RUN_WAIT_SEC = 60.0


@contextmanager
def server(
    settings: Settings,
    world: LiteratureWorld,
    accounts: Sequence[Account] = (),
    *,
    engine: bool = True,
) -> Iterator[tuple[LiveServer, httpx.Client]]:
    with (
        serve(settings, accounts, source_transport=world.transport(), engine=engine) as live,
        httpx.Client(base_url=live.base_url, timeout=30) as client,
    ):
        yield live, client


def finished(client: httpx.Client, response: httpx.Response) -> dict[str, Any]:
    """The report of the run ``response`` started (202, ``running``), read at its
    ``Location`` until the durable engine has finished the run."""
    assert response.status_code == 202, response.text
    started: dict[str, Any] = response.json()
    assert started["status"] == "running" and started["report"] is None, started
    location = response.headers["location"]
    assert location == f"{STREAMS}/{started['stream_id']}/reports/{started['id']}"
    deadline = time.monotonic() + RUN_WAIT_SEC
    report: dict[str, Any]
    while (report := client.get(location).json())["status"] == "running":
        assert time.monotonic() < deadline, f"the run never finished: {report}"
        time.sleep(0.1)
    assert report["id"] == started["id"] and report["started_at"] == started["started_at"]
    return report


def run_now(client: httpx.Client, base: str) -> dict[str, Any]:
    """Runs the stream at ``base`` now: its finished report."""
    return finished(client, client.post(f"{base}/runs"))


def new_stream(client: httpx.Client) -> dict[str, Any]:
    """A stream made by the rule guide, searching only the sources with recorded answers."""
    cid = client.post(f"{STREAMS}/creation").json()["id"]
    for body in ({"message": "Here it is", "edits": FULL_CONFIG}, {"message": "create"}):
        with client.stream("POST", f"{STREAMS}/creation/{cid}/turns", json=body) as response:
            events = list(read_events(response))
    stream_url = events[-1].data["stream_url"]
    off = {name: {"enabled": False} for name in OTHERS}
    response = client.patch(stream_url, json={"retrieval": {"queries": off}})
    assert response.status_code == 200, response.text
    stream: dict[str, Any] = response.json()
    enabled = {name for name, q in stream["retrieval"]["queries"].items() if q["enabled"]}
    assert enabled == RECORDED
    return stream


def refused(response: httpx.Response, status: int, code: str) -> None:
    assert response.status_code == status, response.text
    body = response.json()
    assert body["code"] == code and body["message"] and body["hint"], body


def test_run_a_stream_read_its_reports_and_export_them(db_settings: Settings) -> None:
    with server(db_settings, LiteratureWorld()) as (_, client):
        stream = new_stream(client)
        base = f"{STREAMS}/{stream['id']}"
        assert client.get(f"{base}/reports").json() == {"reports": []}

        first = run_now(client, base)
        assert first["status"] == "complete"
        assert first["first"] is True  # the stream's first report: all of it is new to it
        report = first["report"]
        counts = report["counts"]
        assert counts["new"] == len(report["items"]) > 0
        assert counts["found"] == 200 and counts["duplicates_dropped"] > 0
        assert {s["source"] for s in first["sources"]} == RECORDED
        assert [g["kind"] for g in report["groups"]] == ["focus_area", "focus_area", "competitor"]
        assert report["timeline"]["by_year"]
        scores = [item["score"] for item in report["items"]]
        assert scores == sorted(scores, reverse=True)
        assert all(item["reason"] for item in report["items"])
        assert client.get(base).json()["last_run_at"] == first["started_at"]

        second = run_now(client, base)
        assert second["first"] is False
        assert second["report"]["counts"]["new"] == 0
        assert second["report"]["counts"]["already_reported"] == counts["distinct"]
        assert second["since"] == first["started_at"]

        listed = client.get(f"{base}/reports").json()["reports"]
        assert [r["id"] for r in listed] == [second["id"], first["id"]]
        assert [r["first"] for r in listed] == [False, True]
        assert listed[1]["counts"] == counts and listed[1]["failed_sources"] == []
        assert client.get(f"{base}/reports/{first['id']}").json() == first

        titles = [item["record"]["title"] for item in report["items"]]
        export = f"{base}/reports/{first['id']}/export"
        ris = client.get(export, params={"format": "ris"})
        assert ris.status_code == 200, ris.text
        assert ris.headers["content-disposition"].endswith('.ris"')
        assert len(rispy.loads(ris.text)) == len(titles)
        bib = client.get(export, params={"format": "bibtex"})
        assert len(parse_string(bib.text).entries) == len(titles)
        table = client.get(export, params={"format": "csv"})
        assert [row["title"] for row in csv.DictReader(io.StringIO(table.text))] == titles
        refused(client.get(export, params={"format": "docx"}), 422, "invalid_input")
        refused(client.get(f"{base}/reports/{uuid.uuid4()}"), 404, "not_found")
        refused(client.post(f"{STREAMS}/{uuid.uuid4()}/runs"), 404, "not_found")


async def _owner(runtime: Runtime, stream_id: uuid.UUID) -> uuid.UUID:
    async with runtime.database.session() as session:
        row = await session.get(StreamRow, stream_id)
        assert row is not None
        return row.owner_id


async def _claim(settings: Settings, stream_id: uuid.UUID) -> uuid.UUID:
    """Starts a run of the stream the way another process would, and leaves it running."""
    runtime = build_runtime(settings)
    try:
        store = ReportStore(runtime.database)
        return (await store.begin(await _owner(runtime, stream_id), stream_id)).report_id
    finally:
        await runtime.close()


async def _abort(settings: Settings, stream_id: uuid.UUID, report_id: uuid.UUID) -> None:
    runtime = build_runtime(settings)
    try:
        owner = await _owner(runtime, stream_id)
        await ReportStore(runtime.database).abort(owner, report_id, "stopped by the test")
    finally:
        await runtime.close()


def test_a_run_in_progress_is_a_conflict_and_a_failing_source_a_partial_report(
    db_settings: Settings,
) -> None:
    with server(db_settings, LiteratureWorld(failing=("openalex",))) as (_, client):
        stream = new_stream(client)
        base = f"{STREAMS}/{stream['id']}"
        stream_id = uuid.UUID(stream["id"])
        running = asyncio.run(_claim(db_settings, stream_id))

        refused(client.post(f"{base}/runs"), 409, "conflict")
        (listed,) = client.get(f"{base}/reports").json()["reports"]
        assert (listed["status"], listed["counts"]) == ("running", None)
        refused(client.get(f"{base}/reports/{running}/export"), 409, "conflict")

        asyncio.run(_abort(db_settings, stream_id, running))
        partial = run_now(client, base)
        assert partial["status"] == "partial"
        failed = [s for s in partial["sources"] if not s["ok"]]
        assert [s["source"] for s in failed] == ["openalex"] and failed[0]["error"]
        assert partial["report"]["items"]
        assert client.get(base).json()["last_run_at"] == partial["started_at"]
        statuses = [r["status"] for r in client.get(f"{base}/reports").json()["reports"]]
        assert statuses == ["partial", "failed"]


def test_another_user_gets_404_for_a_streams_runs_and_reports(
    data_dir: Path, db_settings: Settings
) -> None:
    settings = load_settings(
        data_dir=data_dir, database_url=db_settings.app_database_url, server={"multi_user": True}
    )
    accounts = [Account(name, PASSWORD, name.title()) for name in ("alice", "bob")]
    with (
        server(settings, LiteratureWorld(), accounts) as (live, alice),
        httpx.Client(base_url=live.base_url, timeout=30) as bob,
    ):
        for client, name in ((alice, "alice"), (bob, "bob")):
            login = client.post("/api/v1/auth/login", json={"username": name, "password": PASSWORD})
            assert login.status_code == 200, login.text
            client.headers["Origin"] = live.base_url
        stream = new_stream(alice)
        base = f"{STREAMS}/{stream['id']}"
        report = run_now(alice, base)

        refused(bob.post(f"{base}/runs"), 404, "not_found")
        refused(bob.get(f"{base}/reports"), 404, "not_found")
        refused(bob.get(f"{base}/reports/{report['id']}"), 404, "not_found")
        refused(bob.get(f"{base}/reports/{report['id']}/export"), 404, "not_found")
        assert [r["id"] for r in alice.get(f"{base}/reports").json()["reports"]] == [report["id"]]


def test_without_the_durable_engine_a_run_is_refused_and_nothing_is_claimed(
    db_settings: Settings,
) -> None:
    with server(db_settings, LiteratureWorld(), engine=False) as (_, client):
        stream = new_stream(client)
        base = f"{STREAMS}/{stream['id']}"
        refused(client.post(f"{base}/runs"), 503, "engine_unavailable")
        assert client.get(f"{base}/reports").json() == {"reports": []}
        assert client.get(base).json()["last_run_at"] is None
