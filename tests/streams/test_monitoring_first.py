"""A stream's first report is marked ``first`` (issue 26): what its first run found in its
first window, not what is new since a last report. A run that failed wrote no report, so
the run after it is still the first to report; every later report is not."""

from __future__ import annotations

import datetime as dt

from scholarstream.streams.monitoring import ReportStore, run_stream_now
from tests.search.world import LiteratureWorld
from tests.streams.conftest import Make
from tests.streams.runner import runner
from tests.streams.test_monitoring import NOW, new_stream

HOUR = dt.timedelta(hours=1)


async def test_the_first_report_is_the_first_run_that_wrote_one(make: Make) -> None:
    runtime = make(LiteratureWorld())
    owner, stream = await new_stream(runtime)
    reports = ReportStore(runtime.database)
    assert await reports.latest(owner.id, stream.id) is None  # never ran

    # A run that broke before writing its report.
    broken = await reports.begin(owner.id, stream.id, now=NOW - 2 * HOUR)
    await reports.abort(owner.id, broken.report_id, "stopped by the test")

    first = await run_stream_now(runner(runtime), owner.id, stream.id, now=NOW)
    assert first.status in ("complete", "partial")
    assert first.first is True
    assert (await reports.get(owner.id, stream.id, first.id)).first is True

    second = await run_stream_now(runner(runtime), owner.id, stream.id, now=NOW + HOUR)
    assert second.first is False
    assert (await reports.get(owner.id, stream.id, second.id)).first is False

    listed = await reports.list(owner.id, stream.id)  # newest first
    assert [(r.id, r.first) for r in listed] == [
        (second.id, False),
        (first.id, True),
        (broken.report_id, True),  # nothing was reported before it either
    ]
    assert listed[-1].status == "failed"
    # The newest alone, as the dashboard reads it: the same as the list's first.
    latest = await reports.latest(owner.id, stream.id)
    assert latest is not None and (latest.id, latest.first) == (second.id, False)
    assert latest == await reports.get(owner.id, stream.id, second.id)
