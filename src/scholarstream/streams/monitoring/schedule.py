"""Streams run on their ``report_frequency``: a DBOS scheduled workflow (declared in
``scholarstream.engine.SCHEDULES``) wakes every few minutes and runs every due stream,
one at a time, through ``run_stream_now``.

Due means enabled, and never run or last run at least one period ago (``PERIODS``). The
check reads ``last_run_at``, not missed slots: after downtime a stream runs once. Safe to
repeat and to run in several processes: a stream that another run has just finished is
no longer due (checked again right before its run), and one that is running is refused by
the store's one-run claim and skipped. A stream whose run breaks is logged, and the
others still run."""

from __future__ import annotations

import datetime as dt
import logging
from dataclasses import dataclass, field
from typing import Any

from dbos import DBOS

from scholarstream.db.base import utcnow
from scholarstream.errors import ConflictError
from scholarstream.runtime import Runtime
from scholarstream.streams.monitoring.service import run_stream_now
from scholarstream.streams.monitoring.store import PERIODS, DueStream, ReportStore

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


async def run_due_streams(runtime: Runtime, *, now: dt.datetime | None = None) -> ScheduledRuns:
    """Runs every stream due at ``now`` (default: the current slot), one at a time."""
    at = now or slot_time(utcnow())
    store = ReportStore(
        runtime.database,
        retry_failed_after=dt.timedelta(
            minutes=runtime.settings.streams.retry_failed_after_minutes
        ),
    )
    outcome = ScheduledRuns()
    for due in await store.due_streams(at):
        name = str(due.stream_id)
        if not await store.is_due(due.stream_id, at):
            outcome.skipped.append(name)
            continue
        try:
            stored = await run_stream_now(runtime, due.owner_id, due.stream_id, now=at)
        except ConflictError:
            log.info("stream %s is already running; the schedule skips it", name)
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


@DBOS.step()
async def _run_due_streams_step() -> dict[str, list[str]]:
    from scholarstream.engine import current_runtime

    runtime = current_runtime()
    if not runtime.settings.streams.scheduler_enabled:
        return {}
    outcome = await run_due_streams(runtime)
    return {"ran": outcome.ran, "skipped": outcome.skipped, "failed": outcome.failed}


@DBOS.workflow()
async def run_due_streams_workflow(scheduled_at: dt.datetime, context: Any) -> None:
    outcome = await _run_due_streams_step()
    if any(outcome.values()):
        log.info(
            "scheduled stream runs: %d ran, %d skipped, %d failed",
            len(outcome["ran"]),
            len(outcome["skipped"]),
            len(outcome["failed"]),
        )


__all__ = [
    "CRON",
    "PERIODS",
    "DueStream",
    "ScheduledRuns",
    "run_due_streams",
    "run_due_streams_workflow",
    "slot_time",
]
