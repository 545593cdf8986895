"""Streams on their report_frequency, on each backend, with the sources answered from
recorded responses: a stream is due one period after its last run, for each frequency; a
stream that missed many slots runs once and is then not due until its next period; a
stream whose every source failed waits an hour before it is tried again;
disabled streams are never due; a pass runs every due stream, skips a running one and
goes on past a failed one; the scheduled workflow (registered with the durable layer)
enqueues their runs on the ``stream-runs`` queue, where the engine runs them, and does
nothing when the scheduler is turned off; a run on demand is the same durable workflow,
enqueued once however many times it is asked for; a claim whose run was never enqueued (its
process died in between) is run by the next pass, under its report."""

from __future__ import annotations

import datetime as dt
import uuid

import pytest
from dbos import DBOS
from sqlalchemy import update

from scholarstream.bootstrap import build_engine
from scholarstream.db import utcnow
from scholarstream.db.tables import StreamRow
from scholarstream.durable import default_registry, runtime_holder
from scholarstream.errors import ConflictError
from scholarstream.runtime import Runtime
from scholarstream.settings import Settings, load_settings
from scholarstream.streams import StreamStore, StreamUpdate, build_retrieval_config
from scholarstream.streams.core import ReportFrequency
from scholarstream.streams.monitoring import (
    CRON,
    PERIODS,
    UNQUEUED_AFTER,
    DueStream,
    ReportStore,
    enqueue_run,
    run_due_streams,
    run_due_streams_workflow,
    run_workflow_id,
    slot_time,
    start_stream_run,
    wait_for_run,
)
from tests.helpers import make_runtime, new_user
from tests.search.world import LiteratureWorld
from tests.streams.conftest import Make
from tests.streams.runner import runner
from tests.streams.test_monitoring import SOURCES, nlp_stream

NOW = dt.datetime(2026, 11, 30, 9, 0, tzinfo=dt.UTC)
SECOND = dt.timedelta(seconds=1)


async def new_stream(
    runtime: Runtime,
    owner_id: uuid.UUID | None = None,
    *,
    frequency: ReportFrequency = ReportFrequency.WEEKLY,
    sources: list[str] = SOURCES,
) -> DueStream:
    if owner_id is None:
        owner_id = (await new_user(runtime)).id
    base = nlp_stream()
    config = base.model_copy(
        update={
            "report_frequency": frequency,
            "retrieval": build_retrieval_config(
                keywords=base.keywords,
                focus_areas=base.focus_areas,
                competitors=base.competitors,
                sources=sources,
            ),
        }
    )
    stream = await StreamStore(runtime.database).create(owner_id, config)
    return DueStream(owner_id, stream.id)


async def set_last_run(runtime: Runtime, stream_id: uuid.UUID, at: dt.datetime) -> None:
    async with runtime.database.session(write=True) as session:
        await session.execute(
            update(StreamRow).where(StreamRow.id == stream_id).values(last_run_at=at)
        )


async def result_of(workflow_id: str) -> object:
    """What the workflow returned, once it has finished."""
    return await (await DBOS.retrieve_workflow_async(workflow_id)).get_result()


def test_every_frequency_has_a_period() -> None:
    assert set(PERIODS) == set(ReportFrequency)
    assert PERIODS[ReportFrequency.WEEKLY] == dt.timedelta(days=7)


@pytest.mark.parametrize("frequency", list(ReportFrequency))
async def test_a_stream_is_due_one_period_after_its_last_run(
    make: Make, frequency: ReportFrequency
) -> None:
    runtime = make(LiteratureWorld())
    store = ReportStore(runtime.database)
    due = await new_stream(runtime, frequency=frequency)
    # Never run: due at once.
    assert await store.due_streams(NOW) == [due]

    await set_last_run(runtime, due.stream_id, NOW)
    period = PERIODS[frequency]
    assert await store.due_streams(NOW + period - SECOND) == []
    assert not await store.is_due(due.stream_id, NOW + period - SECOND)
    assert await store.due_streams(NOW + period) == [due]
    assert await store.is_due(due.stream_id, NOW + period)


async def test_a_missed_week_runs_once_then_waits_for_the_next_period(make: Make) -> None:
    world = LiteratureWorld()
    runtime = make(world)
    store = ReportStore(runtime.database)
    due = await new_stream(runtime, frequency=ReportFrequency.WEEKLY)
    first = await run_due_streams(runner(runtime), now=NOW)
    assert first.ran == [str(due.stream_id)]

    # The server was down for five weeks: one run when it is back, not five.
    back = NOW + dt.timedelta(weeks=5, hours=3)
    assert await store.due_streams(back) == [due]
    caught_up = await run_due_streams(runner(runtime), now=back)
    assert caught_up.ran == [str(due.stream_id)]
    reports = await store.list(due.owner_id, due.stream_id)
    assert [r.started_at for r in reports] == [back, NOW]
    # The catch-up run searched from the last run, so nothing in between is lost.
    assert reports[0].since == NOW

    # Not due again until a week after the catch-up run.
    for later in (back + dt.timedelta(minutes=5), back + dt.timedelta(days=6, hours=23)):
        assert await store.due_streams(later) == []
        assert (await run_due_streams(runner(runtime), now=later)).ran == []
    assert await store.due_streams(back + dt.timedelta(weeks=1)) == [due]
    assert len(await store.list(due.owner_id, due.stream_id)) == 2


async def test_disabled_streams_are_not_due(make: Make) -> None:
    runtime = make(LiteratureWorld())
    store = ReportStore(runtime.database)
    due = await new_stream(runtime)
    await StreamStore(runtime.database).update(
        due.owner_id, due.stream_id, StreamUpdate(enabled=False)
    )
    assert await store.due_streams(NOW + dt.timedelta(days=365)) == []
    outcome = await run_due_streams(runner(runtime), now=NOW)
    assert (outcome.ran, outcome.skipped, outcome.failed) == ([], [], [])
    assert await store.list(due.owner_id, due.stream_id) == []


async def test_a_pass_runs_due_streams_skips_a_running_one_and_survives_a_failed_one(
    make: Make,
) -> None:
    runtime = make(LiteratureWorld(failing=("arxiv",)))
    store = ReportStore(runtime.database)
    healthy = await new_stream(runtime)
    running = await new_stream(runtime, healthy.owner_id)
    # Its only source is down: the run fails, and the pass goes on with the others.
    broken = await new_stream(runtime, sources=["arxiv"])
    other_user = await new_stream(runtime)
    not_yet = await new_stream(runtime)
    await set_last_run(runtime, not_yet.stream_id, NOW - dt.timedelta(days=1))
    await store.begin(running.owner_id, running.stream_id, now=NOW)

    outcome = await run_due_streams(runner(runtime), now=NOW)

    assert sorted(outcome.ran) == sorted([str(healthy.stream_id), str(other_user.stream_id)])
    assert outcome.skipped == [str(running.stream_id)]
    assert outcome.failed == [str(broken.stream_id)]
    (still_running,) = await store.list(running.owner_id, running.stream_id)
    assert still_running.status == "running"
    assert await store.list(not_yet.owner_id, not_yet.stream_id) == []
    # A run is (partial: arxiv is down) stored for each stream that ran.
    for ran in (healthy, other_user):
        (report,) = await store.list(ran.owner_id, ran.stream_id)
        assert report.status == "partial" and report.started_at == NOW


async def test_a_stream_whose_every_source_failed_waits_before_it_is_tried_again(
    make: Make,
) -> None:
    runtime = make(LiteratureWorld(failing=("arxiv",)))
    store = ReportStore(runtime.database)
    broken = await new_stream(runtime, sources=["arxiv"])
    assert (await run_due_streams(runner(runtime), now=NOW)).failed == [str(broken.stream_id)]
    wait = dt.timedelta(minutes=runtime.settings.streams.retry_failed_after_minutes)
    assert wait == dt.timedelta(hours=1)

    # Not at every 5-minute check while the source is down...
    for later in (NOW + dt.timedelta(minutes=5), NOW + wait - dt.timedelta(minutes=5)):
        assert await store.due_streams(later) == []
        assert (await run_due_streams(runner(runtime), now=later)).failed == []
    # ...but once the wait is over.
    healthy = make(LiteratureWorld())
    back = await run_due_streams(runner(healthy), now=NOW + wait)
    assert back.ran == [str(broken.stream_id)]
    statuses = [r.status for r in await store.list(broken.owner_id, broken.stream_id)]
    assert statuses == ["complete", "failed"]


def test_runs_start_at_their_slot() -> None:
    assert slot_time(NOW + dt.timedelta(minutes=7, seconds=12, microseconds=5)) == NOW.replace(
        minute=5
    )
    assert slot_time(NOW) == NOW


async def test_the_scheduled_workflow_runs_due_streams_through_the_engine(
    make: Make, db_settings: Settings
) -> None:
    schedule = next(s for s in default_registry().schedules if s.name == "run-due-streams")
    assert (schedule.cron, schedule.workflow) == (CRON, run_due_streams_workflow)
    runtime = make(LiteratureWorld())
    store = ReportStore(runtime.database)
    DBOS.destroy(destroy_registry=False)
    engine = build_engine(runtime)
    await engine.launch()
    try:
        # Turned off: the schedule still fires, and runs nothing.
        off_settings = load_settings(
            data_dir=db_settings.data_dir,
            database_url=db_settings.database_url,
            streams={"scheduler_enabled": False},
        )
        off = make_runtime(off_settings)
        due = await new_stream(runtime)
        with runtime_holder().installed(off):
            assert await run_due_streams_workflow(NOW, None) == []
        assert await store.list(due.owner_id, due.stream_id) == []
        await off.close()

        # On: the pass claims the stream and enqueues its run, which the engine runs.
        (enqueued,) = await run_due_streams_workflow(NOW, None)
        (running,) = await store.list(due.owner_id, due.stream_id)
        assert enqueued == run_workflow_id(running.id)
        assert await result_of(enqueued) == "complete"
        (report,) = await store.list(due.owner_id, due.stream_id)
        assert (report.id, report.status) == (running.id, "complete")
        # Run again at once (a second process, a repeated slot): nothing is due.
        assert await run_due_streams_workflow(NOW, None) == []
        assert len(await store.list(due.owner_id, due.stream_id)) == 1
    finally:
        await engine.shutdown()
        DBOS.destroy(destroy_registry=False)


async def test_a_run_on_demand_is_the_same_durable_workflow_enqueued_once(make: Make) -> None:
    runtime = make(LiteratureWorld())
    store = ReportStore(runtime.database)
    due = await new_stream(runtime)
    DBOS.destroy(destroy_registry=False)
    engine = build_engine(runtime)
    await engine.launch()
    try:
        started = await start_stream_run(runtime.database, due.owner_id, due.stream_id)
        assert (started.status, started.report) == ("running", None)
        # One run at a time: a second request is refused while the first runs.
        with pytest.raises(ConflictError):
            await start_stream_run(runtime.database, due.owner_id, due.stream_id)
        # Enqueued again (a pass resumed after a crash): the same workflow, run once.
        assert await enqueue_run(due.owner_id, started.id) == run_workflow_id(started.id)
        done = await wait_for_run(runtime.database, due.owner_id, started)
        assert (done.id, done.status, done.started_at) == (
            started.id,
            "complete",
            started.started_at,
        )
        assert done.report is not None and done.report.counts.new > 0
        (only,) = await store.list(due.owner_id, due.stream_id)
        assert only.id == started.id
        steps = await DBOS.list_workflow_steps_async(run_workflow_id(started.id))
        assert [step["function_name"] for step in steps] == ["streams.run"]
    finally:
        await engine.shutdown()
        DBOS.destroy(destroy_registry=False)


async def test_a_claim_whose_run_was_never_enqueued_is_run_by_the_next_pass(make: Make) -> None:
    runtime = make(LiteratureWorld())
    store = ReportStore(runtime.database)
    due = await new_stream(runtime)
    # A request claimed the stream three minutes ago, and its process died before it
    # enqueued the run: the report is running, with no workflow.
    claimed = utcnow() - UNQUEUED_AFTER - dt.timedelta(minutes=1)
    orphan = (await store.begin(due.owner_id, due.stream_id, now=claimed)).report_id
    # One claimed just now is the request's own to enqueue.
    recent = await new_stream(runtime, due.owner_id)
    await set_last_run(runtime, recent.stream_id, utcnow())  # not due either
    just_claimed = (await store.begin(recent.owner_id, recent.stream_id)).report_id
    DBOS.destroy(destroy_registry=False)
    engine = build_engine(runtime)
    await engine.launch()
    try:
        # The stream itself is due, and refused to the pass: it is running.
        assert await run_due_streams_workflow(NOW, None) == [run_workflow_id(orphan)]
        assert await result_of(run_workflow_id(orphan)) == "complete"
        (report,) = await store.list(due.owner_id, due.stream_id)
        assert (report.id, report.status, report.started_at) == (orphan, "complete", claimed)
        (waiting,) = await store.list(recent.owner_id, recent.stream_id)
        assert (waiting.id, waiting.status) == (just_claimed, "running")
        # A pass while a run is on the queue (or running) keeps it: one workflow, run once.
        again = await store.begin(due.owner_id, due.stream_id, now=utcnow() - 2 * UNQUEUED_AFTER)
        await enqueue_run(due.owner_id, again.report_id)
        await run_due_streams_workflow(NOW, None)
        await run_due_streams_workflow(NOW, None)
        assert await result_of(run_workflow_id(again.report_id)) == "complete"
        statuses = [r.status for r in await store.list(due.owner_id, due.stream_id)]
        assert statuses == ["complete", "complete"]
    finally:
        await engine.shutdown()
        DBOS.destroy(destroy_registry=False)
