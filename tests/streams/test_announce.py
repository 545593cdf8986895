"""A finished stream run is announced through apprise to the stream's and the owner's
notification targets (a real ``json://`` webhook on loopback): the new items with their
reasons and a link to the report; a partial run says what failed; a complete run with
nothing new is not announced; a target that fails is recorded with the report and the run
still succeeds; the stored report keeps each target's outcome without the URL. The link is on
``server.public_url``, else on the address the server was started on (``serve --port``)."""

from __future__ import annotations

import datetime as dt
import uuid

import pytest

from scholarstream.notify import NotificationTargetStore
from scholarstream.settings import Settings
from scholarstream.streams.monitoring import (
    Report,
    ReportCounts,
    ReportStore,
    SourceOutcome,
    StoredReport,
    report_notification,
    run_stream_now,
)
from tests.helpers import make_runtime
from tests.notify.hooks import hook_server
from tests.search.world import LiteratureWorld
from tests.streams.conftest import Make
from tests.streams.runner import runner
from tests.streams.test_monitoring import NOW, new_stream

LINK = "http://scholarstream.example/streams/s/reports/r"


def stored(status: str, new: int, failed: tuple[str, ...] = ()) -> StoredReport:
    sources = [SourceOutcome(source="pubmed", ok=True, found=new)]
    sources += [SourceOutcome(source=name, ok=False, error="down") for name in failed]
    counts = ReportCounts(
        found=new, distinct=new, duplicates_dropped=0, already_reported=0, new=new, by_source={}
    )
    report = Report(stream_id=uuid.uuid4(), stream_name="Watch", since=NOW.date(), counts=counts)
    return StoredReport.model_validate(
        {
            "id": uuid.uuid4(),
            "stream_id": report.stream_id,
            "status": status,
            "started_at": NOW,
            "finished_at": NOW,
            "since": NOW,
            "report": report,
            "sources": sources,
        }
    )


def test_what_each_outcome_announces() -> None:
    assert report_notification(stored("complete", 0), "Watch", LINK) is None

    complete = report_notification(stored("complete", 7), "Watch", LINK)
    assert complete is not None
    assert (complete.title, complete.level, complete.url) == ("Watch: 7 new items", "success", LINK)
    assert "and 2 more" in complete.body

    partial = report_notification(stored("partial", 1, failed=("openalex",)), "Watch", LINK)
    assert partial is not None and partial.level == "warning"
    assert partial.title == "Watch: 1 new item"
    assert "Partial report: openalex failed" in partial.body

    failed = report_notification(stored("failed", 0, failed=("pubmed2",)), "Watch", LINK)
    assert failed is not None and failed.level == "failure"
    assert failed.title == "Watch: the run failed"
    assert "searches the same period again" in failed.body


async def test_a_run_is_announced_to_the_streams_and_the_owners_targets(make: Make) -> None:
    runtime = make(LiteratureWorld(failing=("openalex",)))
    owner, stream = await new_stream(runtime)
    targets = NotificationTargetStore.for_server(runtime.settings, runtime.database)
    with hook_server() as hooks:
        secret = f"json://team:s3cret-pass@127.0.0.1:{hooks.port}/stream"
        await targets.add(owner.id, secret, label="Team", stream_id=stream.id)
        await targets.add(owner.id, hooks.url("/me"), label="Me")
        await targets.add(owner.id, hooks.url("/broken"), label="Broken")

        report = await run_stream_now(runner(runtime), owner.id, stream.id, now=NOW)

        posted = {p.path: p.body for p in hooks.received()}
    assert report.status == "partial" and report.report is not None
    assert set(posted) == {"/stream", "/me", "/broken"}
    body = posted["/stream"]
    assert body["title"] == f"{stream.stream_name}: {report.report.counts.new} new items"
    assert "Partial report: openalex failed" in body["message"]
    top = report.report.items[0]
    assert top.reason in body["message"]
    assert f"/streams/{stream.id}/reports/{report.id}" in body["message"]
    assert posted["/me"]["message"] == body["message"]

    outcomes = {d.label: d for d in report.notifications}
    assert outcomes["Team"].ok and outcomes["Me"].ok
    assert not outcomes["Broken"].ok and outcomes["Broken"].error
    again = await ReportStore(runtime.database).get(owner.id, stream.id, report.id)
    assert again.notifications == report.notifications
    assert "s3cret-pass" not in again.model_dump_json()  # previews mask the password


async def test_nothing_new_is_not_announced_and_no_targets_is_fine(make: Make) -> None:
    runtime = make(LiteratureWorld())
    owner, stream = await new_stream(runtime)
    first = await run_stream_now(runner(runtime), owner.id, stream.id, now=NOW)
    assert first.notifications == []  # no targets: nothing sent, nothing recorded
    targets = NotificationTargetStore.for_server(runtime.settings, runtime.database)
    with hook_server() as hooks:
        await targets.add(owner.id, hooks.url("/me"), label="Me")
        second = await run_stream_now(
            runner(runtime), owner.id, stream.id, now=NOW + dt.timedelta(days=7)
        )
        assert hooks.received() == []
    assert second.status == "complete" and second.report is not None
    assert second.report.counts.new == 0 and second.notifications == []


@pytest.mark.parametrize(
    ("public_url", "base"),
    [
        (None, "http://127.0.0.1:8731"),
        ("https://scholar.example.org/", "https://scholar.example.org"),
    ],
)
async def test_the_link_is_on_the_address_the_server_was_started_on(
    db_settings: Settings, public_url: str | None, base: str
) -> None:
    # As `scholarstream serve --port 8731` does (cli/server_cmd.py); the settings say 8000.
    configured = db_settings.model_copy(
        update={"server": db_settings.server.model_copy(update={"public_url": public_url})}
    )
    assert configured.server.port == 8000
    runtime = make_runtime(
        configured.serving_at("127.0.0.1", 8731), source_transport=LiteratureWorld().transport()
    )
    try:
        owner, stream = await new_stream(runtime)
        targets = NotificationTargetStore.for_server(runtime.settings, runtime.database)
        with hook_server() as hooks:
            await targets.add(owner.id, hooks.url("/me"), label="Me")
            report = await run_stream_now(runner(runtime), owner.id, stream.id, now=NOW)
            (posted,) = hooks.received()
    finally:
        await runtime.close()
    link = f"{base}/streams/{stream.id}/reports/{report.id}"
    assert posted.body["message"].endswith(link), posted.body["message"]
