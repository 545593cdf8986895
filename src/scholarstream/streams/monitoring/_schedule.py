"""Streams run on their ``report_frequency``: a DBOS scheduled workflow (the
``run-due-streams`` schedule, registered here with the durable layer) wakes every few
minutes, claims every due stream and puts its run on the ``stream-runs`` queue: the same
durable workflow as a run on demand (``workflows.stream_run_workflow``).

Due means enabled, and never run or last run at least one period ago (``PERIODS``). The
check reads ``last_run_at``, not missed slots: after downtime a stream runs once. Safe to
repeat and to run in several processes: a stream that another run has just finished is
no longer due (checked again in the claim's own transaction), and one that is running is
refused by the store's one-run claim and skipped.

Durable: the pass claims each stream in a step of its own, under a report id derived from
the pass's workflow id, then enqueues its run under a workflow id derived from the
report's; a pass interrupted between the two enqueues the run when it resumes, and
enqueueing it twice runs it once. A process killed in the middle of a run is recovered by
DBOS, which runs the run's step again: it finds its report still ``running`` and finishes
that run (``resume_run``), so the report is stored once. Each pass also enqueues again
the runs claimed more than ``UNQUEUED_AFTER`` ago and still ``running`` (a run already on
the queue is kept): a request whose process died between claiming the stream and
enqueueing its run leaves its report to the next pass. ``run_due_streams`` is the pass
without DBOS (each run in the caller, a broken one logged), for callers outside the
engine."""

from __future__ import annotations

import datetime as dt
import logging
import uuid
from dataclasses import dataclass, field
from typing import Any

from dbos import DBOS

from scholarstream.db import Database, utcnow
from scholarstream.durable import ScheduleSpec, current_runtime, register_schedule
from scholarstream.errors import ConflictError
from scholarstream.settings import StreamSettings
from scholarstream.streams.monitoring._service import StreamRunner, run_stream_now
from scholarstream.streams.monitoring._store import PERIODS, STALE_AFTER, DueStream, ReportStore
from scholarstream.streams.monitoring._workflows import enqueue_run

log = logging.getLogger(__name__)

# How often the schedule looks for due streams (six fields, seconds first). Runs start at
# the slot's time (``slot_time``), so a daily stream keeps its time of day.
INTERVAL_MINUTES = 5
CRON = f"0 */{INTERVAL_MINUTES} * * * *"


@dataclass
class ScheduledRuns:
    """What one pass did, by stream id (as strings, so DBOS can record it)."""

    ran: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)


def slot_time(now: dt.datetime) -> dt.datetime:
    """``now`` rounded down to the schedule's slot: a run's start (and the stream's next
    due time) does not drift by the few seconds a pass takes to reach it."""
    return now.replace(minute=now.minute - now.minute % INTERVAL_MINUTES, second=0, microsecond=0)


def _store(database: Database, settings: StreamSettings) -> ReportStore:
    return ReportStore(
        database,
        retry_failed_after=dt.timedelta(minutes=settings.retry_failed_after_minutes),
    )


async def run_due_streams(runner: StreamRunner, *, now: dt.datetime | None = None) -> ScheduledRuns:
    """Runs every stream due at ``now`` (default: the current slot), one at a time."""
    at = now or slot_time(utcnow())
    store = _store(runner.database, runner.settings.streams)
    outcome = ScheduledRuns()
    for due in await store.due_streams(at):
        name = str(due.stream_id)
        if not await store.is_due(due.stream_id, at):
            outcome.skipped.append(name)
            continue
        try:
            stored = await run_stream_now(runner, due.owner_id, due.stream_id, now=at, if_due=True)
        except ConflictError as exc:  # running, or just run by another pass
            log.info("the schedule skips stream %s: %s", name, exc.message)
            outcome.skipped.append(name)
            continue
        except Exception:
            log.exception("scheduled run of stream %s failed", name)
            outcome.failed.append(name)
            continue
        if stored.status == "failed":
            log.warning("scheduled run of stream %s failed: every source failed", name)
            outcome.failed.append(name)
        else:
            outcome.ran.append(name)
    return outcome


# Report ids of scheduled runs: a name in this namespace per (workflow, stream).
_RUN_IDS = uuid.UUID("5f0e2a9c-51e8-4c1b-9a0e-3d7b8f6c2a14")


def _report_id(workflow_id: str, stream_id: str) -> uuid.UUID:
    return uuid.uuid5(_RUN_IDS, f"{workflow_id}/{stream_id}")


# A run claimed this long ago and still ``running`` is enqueued again by the next pass (a
# run already enqueued is kept, so this only starts the run of a claim whose process died
# before it enqueued it); one older than ``STALE_AFTER`` is left to the stale rule.
UNQUEUED_AFTER = dt.timedelta(minutes=2)


@DBOS.step()
async def _unfinished_step() -> list[list[str]]:
    """The runs still ``running`` that were claimed between ``STALE_AFTER`` and
    ``UNQUEUED_AFTER`` ago."""
    now = utcnow()
    runtime = current_runtime()
    store = _store(runtime.database, runtime.settings.streams)
    runs = await store.running_between(now - STALE_AFTER, now - UNQUEUED_AFTER)
    return [[str(owner_id), str(report_id)] for owner_id, report_id in runs]


@DBOS.step()
async def _plan_step() -> dict[str, Any] | None:
    """The slot's time and its due streams; ``None`` with the scheduler turned off."""
    runtime = current_runtime()
    if not runtime.settings.streams.scheduler_enabled:
        return None
    at = slot_time(utcnow())
    due = await _store(runtime.database, runtime.settings.streams).due_streams(at)
    return {"at": at.isoformat(), "due": [[str(d.owner_id), str(d.stream_id)] for d in due]}


@DBOS.step()
async def _claim_step(owner_id: str, stream_id: str, at: str, report_id: str) -> bool:
    """Claims the stream for the run of ``report_id``: ``False`` when it is not due any
    more or another run has it. ``True`` again for a claim made before a crash."""
    runtime = current_runtime()
    store = _store(runtime.database, runtime.settings.streams)
    owner, stream, report = uuid.UUID(owner_id), uuid.UUID(stream_id), uuid.UUID(report_id)
    if await store.status(owner, report) is not None:
        return True
    when = dt.datetime.fromisoformat(at)
    if not await store.is_due(stream, when):
        return False
    try:
        await store.begin(owner, stream, now=when, report_id=report, if_due=True)
    except ConflictError as exc:  # running, or just run by another pass
        log.info("the schedule skips stream %s: %s", stream_id, exc.message)
        return False
    return True


@DBOS.workflow()
async def run_due_streams_workflow(scheduled_at: dt.datetime, context: Any) -> list[str]:
    """Claims every due stream and enqueues its run, and enqueues again the runs claimed a
    while ago and still running (kept if they were enqueued); the runs' workflow ids."""
    enqueued: list[str] = []
    for owner, report in await _unfinished_step():
        enqueued.append(await enqueue_run(uuid.UUID(owner), uuid.UUID(report)))
    unfinished = len(enqueued)
    plan = await _plan_step()
    if plan is None:
        return enqueued
    skipped = 0
    for owner_id, stream_id in plan["due"]:
        report_id = _report_id(DBOS.workflow_id or "", stream_id)
        if not await _claim_step(owner_id, stream_id, plan["at"], str(report_id)):
            skipped += 1
            continue
        enqueued.append(await enqueue_run(uuid.UUID(owner_id), report_id))
    if len(enqueued) > unfinished or skipped:
        log.info(
            "scheduled stream runs: %d enqueued, %d skipped (running or just run)",
            len(enqueued) - unfinished,
            skipped,
        )
    return enqueued


# Registered at import: bootstrap imports this module before the engine launches.
SCHEDULE = register_schedule(ScheduleSpec("run-due-streams", CRON, run_due_streams_workflow))

__all__ = [
    "CRON",
    "PERIODS",
    "SCHEDULE",
    "DueStream",
    "ScheduledRuns",
    "run_due_streams",
    "run_due_streams_workflow",
    "slot_time",
]
