"""Monitoring runs and their reports in the database, through the owner's scope.

``begin`` claims the stream for one run (a second run of the same stream while one is
``running`` is a ``ConflictError``, enforced by a partial unique index so it holds across
processes) and hands back what the run needs: the stream, each source's window start,
every key the stream already reported and the items the user judged. A source's window
starts where the last run that searched it successfully started (its outcome in that
run's report is ``ok``), so a source that failed, in a ``partial`` run too, is searched
again from the same date; a source never searched successfully starts at the default
window. ``finish`` stores the report,
the keys it reported, and the stream's ``last_run_at`` (a complete or partial run);
``abort`` ends a run that broke. ``resume`` hands back what a run still ``running`` needs
again, so a scheduled run interrupted by a crash is finished under its own report (the
schedule names the report it begins: ``begin(report_id=...)``, ``status``).
``due_streams`` is the schedule's question: which streams, of every owner, are due now;
``running_between`` finds the runs it enqueues again (a claim whose process died before
it enqueued the run)."""

from __future__ import annotations

import datetime as dt
import uuid
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import ColumnElement, and_, or_, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from scholarstream.db import Database, OwnerScope, utcnow
from scholarstream.db.tables import StreamReportedItemRow, StreamReportRow, StreamRow
from scholarstream.errors import ConflictError, NotFoundError
from scholarstream.notify import Delivery
from scholarstream.search.core import LabelledPaper
from scholarstream.streams._store import STREAM, to_stream
from scholarstream.streams.core import ReportFrequency, Stream
from scholarstream.streams.monitoring._engine import first_since
from scholarstream.streams.monitoring._feedback import labelled_items
from scholarstream.streams.monitoring._report import (
    Report,
    ReportSummary,
    RunResult,
    SourceOutcome,
    StoredReport,
)

REPORT = "Report"
# A run still marked running after this long died with its process; the next run takes over.
STALE_AFTER = dt.timedelta(hours=1)
# How long after its last run a stream is due again, per report_frequency.
PERIODS: dict[ReportFrequency, dt.timedelta] = {
    ReportFrequency.DAILY: dt.timedelta(days=1),
    ReportFrequency.WEEKLY: dt.timedelta(weeks=1),
    ReportFrequency.BIWEEKLY: dt.timedelta(weeks=2),
    ReportFrequency.MONTHLY: dt.timedelta(days=30),
}


@dataclass(frozen=True)
class DueStream:
    owner_id: uuid.UUID
    stream_id: uuid.UUID


def _due(now: dt.datetime, retry_failed_after: dt.timedelta) -> ColumnElement[bool]:
    """Enabled, never run or run at least one period ago, and no run in which every source
    failed within ``retry_failed_after``. Based on ``last_run_at``, not on slots: a stream
    that missed several slots is due once."""
    recently_failed = (
        select(StreamReportRow.id)
        .where(
            StreamReportRow.stream_id == StreamRow.id,
            StreamReportRow.status == "failed",
            StreamReportRow.started_at > now - retry_failed_after,
        )
        .exists()
    )
    return and_(
        StreamRow.enabled.is_(True),
        ~recently_failed,
        or_(
            StreamRow.last_run_at.is_(None),
            *(
                and_(
                    StreamRow.report_frequency == frequency.value,
                    StreamRow.last_run_at <= now - period,
                )
                for frequency, period in PERIODS.items()
            ),
        ),
    )


class _NotDueError(Exception):
    """The claimed stream is not due after all (inside ``begin``'s transaction)."""


@dataclass(frozen=True)
class RunStart:
    report_id: uuid.UUID
    stream: Stream
    since: dt.datetime
    """The earliest of the windows (what the report shows as its start)."""
    reported: frozenset[str]
    labelled: list[LabelledPaper]
    windows: dict[str, dt.datetime] = field(default_factory=dict)
    """Each enabled source's window start."""


_WROTE_A_REPORT = ("complete", "partial")


async def _is_first(session: AsyncSession, row: StreamReportRow) -> bool:
    """No run of the stream that started before ``row`` wrote a report."""
    earlier = await session.scalar(
        select(StreamReportRow.id)
        .where(
            StreamReportRow.stream_id == row.stream_id,
            StreamReportRow.status.in_(_WROTE_A_REPORT),
            StreamReportRow.started_at < row.started_at,
        )
        .limit(1)
    )
    return earlier is None


def to_stored(row: StreamReportRow, *, first: bool = False) -> StoredReport:
    return StoredReport(
        id=row.id,
        stream_id=row.stream_id,
        status=row.status,
        started_at=row.started_at,
        finished_at=row.finished_at,
        since=row.since,
        report=Report.model_validate(row.report) if row.report is not None else None,
        sources=[SourceOutcome.model_validate(s) for s in row.sources],
        error=row.error,
        notifications=[Delivery.model_validate(d) for d in row.notifications or []],
        first=first,
    )


def to_summary(row: StreamReportRow, *, first: bool = False) -> ReportSummary:
    stored = to_stored(row)
    return ReportSummary(
        id=stored.id,
        stream_id=stored.stream_id,
        status=stored.status,
        started_at=stored.started_at,
        finished_at=stored.finished_at,
        since=stored.since,
        counts=stored.report.counts if stored.report else None,
        failed_sources=[s.source for s in stored.sources if not s.ok],
        first=first,
    )


async def source_windows(
    session: AsyncSession, stream: Stream, started: dt.datetime
) -> dict[str, dt.datetime]:
    """Each enabled source of ``stream`` -> its window's start for a run starting at
    ``started``: the start of the last finished run in which it was searched
    successfully; for a source every search of which failed since, the window of the
    earliest of those searches (it does not move); for a source never searched, the
    first run's default window."""
    names = set(name for name, query in stream.retrieval.queries.items() if query.enabled)
    succeeded: dict[str, dt.datetime] = {}
    failed: dict[str, dt.datetime] = {}
    rows = await session.execute(
        select(StreamReportRow.started_at, StreamReportRow.since, StreamReportRow.sources)
        .where(
            StreamReportRow.stream_id == stream.id,
            StreamReportRow.status != "running",
            StreamReportRow.started_at < started,
        )
        .order_by(StreamReportRow.started_at.desc())
    )
    for run_started, run_since, outcomes in rows:  # newest first
        for outcome in _outcomes(outcomes):
            name = str(outcome.get("source"))
            if name not in names or name in succeeded:
                continue
            if outcome.get("ok") is True:
                succeeded[name] = run_started
            else:
                failed[name] = _window(outcome, run_since)  # ends at the earliest
        if len(succeeded) == len(names):
            break
    default = first_since(started)
    return {name: succeeded.get(name) or failed.get(name) or default for name in names}


def _outcomes(value: Any) -> list[dict[str, Any]]:
    return [item for item in value if isinstance(item, dict)] if isinstance(value, list) else []


def _window(outcome: dict[str, Any], run_since: dt.datetime) -> dt.datetime:
    """The window a source had in a run: its outcome's ``since``; the run's (the earliest
    of its windows) in a report written before windows were kept per source."""
    since = outcome.get("since")
    if not isinstance(since, str):
        return run_since
    try:
        window = dt.datetime.fromisoformat(since)
    except ValueError:
        return run_since
    return window if window.tzinfo is not None else window.replace(tzinfo=dt.UTC)


async def _run_start(scope: OwnerScope, row: StreamReportRow, stream: Stream) -> RunStart:
    """What the run of ``row`` needs: each source's window, every key the stream
    reported, the judged items."""
    keys = await scope.session.scalars(
        select(StreamReportedItemRow.key).where(StreamReportedItemRow.stream_id == row.stream_id)
    )
    labelled = await labelled_items(scope, row.stream_id)
    windows = await source_windows(scope.session, stream, row.started_at)
    return RunStart(row.id, stream, row.since, frozenset(keys), labelled, windows)


class ReportStore:
    def __init__(
        self, database: Database, *, retry_failed_after: dt.timedelta = dt.timedelta(hours=1)
    ) -> None:
        self.database = database
        self.retry_failed_after = retry_failed_after

    async def begin(
        self,
        owner_id: uuid.UUID,
        stream_id: uuid.UUID,
        *,
        now: dt.datetime | None = None,
        report_id: uuid.UUID | None = None,
        if_due: bool = False,
    ) -> RunStart:
        """Claims the stream for a run whose report is ``report_id`` (default: a new id).
        ``if_due``: only if the stream is due at ``now``, checked in the claim's own
        transaction, after any run finishing meanwhile has been committed (a check made
        before the claim could be overtaken by that run: the stream would run twice)."""
        started = now or utcnow()
        try:
            async with self.database.session(write=True) as session:
                scope = OwnerScope(session, owner_id)
                stream = to_stream(await scope.get(StreamRow, stream_id, what=STREAM))
                await session.execute(
                    update(StreamReportRow)
                    .where(
                        StreamReportRow.stream_id == stream_id,
                        StreamReportRow.status == "running",
                        StreamReportRow.started_at < started - STALE_AFTER,
                    )
                    .values(
                        status="failed",
                        finished_at=started,
                        error="The run stopped without finishing (the server was restarted?).",
                    )
                    .execution_options(synchronize_session=False)
                )
                windows = await source_windows(session, stream, started)
                since = min(windows.values(), default=first_since(started))
                row = StreamReportRow(
                    stream_id=stream_id,
                    status="running",
                    started_at=started,
                    since=since,
                    sources=[],
                )
                if report_id is not None:
                    row.id = report_id
                scope.add(row)
                await session.flush()
                if if_due and not await self._due_now(session, stream_id, started):
                    raise _NotDueError
                return await _run_start(scope, row, stream)
        except _NotDueError:
            raise ConflictError(
                f"Stream {stream_id} is not due: another run has just finished.",
                hint="Read that run's report (GET /api/v1/streams/{id}/reports).",
            ) from None
        except IntegrityError:
            raise ConflictError(
                f"Stream {stream_id} is already running.",
                hint="Wait for the run to finish, then read its report "
                "(GET /api/v1/streams/{id}/reports).",
            ) from None

    async def resume(self, owner_id: uuid.UUID, report_id: uuid.UUID) -> RunStart | None:
        """What the run of ``report_id`` needs, while it is ``running``; ``None`` once it
        has finished (or failed, or its stream was deleted)."""
        async with self.database.session() as session:
            scope = OwnerScope(session, owner_id)
            row = await session.scalar(
                scope.select(StreamReportRow).where(StreamReportRow.id == report_id)
            )
            if row is None or row.status != "running":
                return None
            stream = to_stream(await scope.get(StreamRow, row.stream_id, what=STREAM))
            return await _run_start(scope, row, stream)

    async def status(self, owner_id: uuid.UUID, report_id: uuid.UUID) -> str | None:
        """The status of the run of ``report_id``; ``None`` when there is no such run."""
        async with self.database.session() as session:
            return await session.scalar(
                select(StreamReportRow.status).where(
                    StreamReportRow.id == report_id, StreamReportRow.owner_id == owner_id
                )
            )

    async def running_between(
        self, after: dt.datetime, before: dt.datetime
    ) -> list[tuple[uuid.UUID, uuid.UUID]]:
        """(owner, report) of the runs of every owner still ``running`` that started
        between ``after`` and ``before``, oldest first."""
        async with self.database.session() as session:
            rows = await session.execute(
                select(StreamReportRow.owner_id, StreamReportRow.id)
                .where(
                    StreamReportRow.status == "running",
                    StreamReportRow.started_at > after,
                    StreamReportRow.started_at <= before,
                )
                .order_by(StreamReportRow.started_at, StreamReportRow.id)
            )
            return [(owner_id, report_id) for owner_id, report_id in rows]

    async def due_streams(self, now: dt.datetime) -> list[DueStream]:
        """The streams of every owner due at ``now``, longest waiting first."""
        async with self.database.session() as session:
            rows = await session.execute(
                select(StreamRow.owner_id, StreamRow.id)
                .where(_due(now, self.retry_failed_after))
                .order_by(StreamRow.last_run_at.is_not(None), StreamRow.last_run_at, StreamRow.id)
            )
            return [DueStream(owner_id, stream_id) for owner_id, stream_id in rows]

    async def is_due(self, stream_id: uuid.UUID, now: dt.datetime) -> bool:
        """Checked again just before a scheduled run: another process may have run it."""
        async with self.database.session() as session:
            return await self._due_now(session, stream_id, now)

    async def _due_now(self, session: AsyncSession, stream_id: uuid.UUID, now: dt.datetime) -> bool:
        found = await session.scalar(
            select(StreamRow.id).where(
                StreamRow.id == stream_id, _due(now, self.retry_failed_after)
            )
        )
        return found is not None

    async def finish(self, owner_id: uuid.UUID, start: RunStart, result: RunResult) -> StoredReport:
        async with self.database.session(write=True) as session:
            scope = OwnerScope(session, owner_id)
            row = await scope.get(StreamReportRow, start.report_id, what=REPORT)
            row.status = result.status
            row.finished_at = utcnow()
            row.report = result.report.model_dump(mode="json")
            row.sources = [s.model_dump(mode="json") for s in result.sources]
            if result.status != "failed":
                known = set(
                    await session.scalars(
                        select(StreamReportedItemRow.key).where(
                            StreamReportedItemRow.stream_id == row.stream_id
                        )
                    )
                )
                for keys in result.reported_keys.values():
                    for key in keys:
                        if key not in known:
                            known.add(key)
                            scope.add(
                                StreamReportedItemRow(
                                    stream_id=row.stream_id, key=key, report_id=row.id
                                )
                            )
                stream = await scope.get(StreamRow, row.stream_id, what=STREAM)
                # Items published while this run searched are looked for again next time.
                stream.last_run_at = row.started_at
            await session.flush()
            return to_stored(row, first=await _is_first(session, row))

    async def record_notifications(
        self, owner_id: uuid.UUID, stored: StoredReport, deliveries: list[Delivery]
    ) -> StoredReport:
        """Keeps how the run's announcement went with its report."""
        if not deliveries:
            return stored
        async with self.database.session(write=True) as session:
            row = await OwnerScope(session, owner_id).get(StreamReportRow, stored.id, what=REPORT)
            row.notifications = [d.model_dump(mode="json") for d in deliveries]
        return stored.model_copy(update={"notifications": deliveries})

    async def abort(self, owner_id: uuid.UUID, report_id: uuid.UUID, error: str) -> None:
        """Ends a run that broke (the caller re-raises the error)."""
        async with self.database.session(write=True) as session:
            row = await session.scalar(
                OwnerScope(session, owner_id)
                .select(StreamReportRow)
                .where(StreamReportRow.id == report_id)
            )
            if row is not None:  # the stream was deleted meanwhile
                row.status = "failed"
                row.finished_at = utcnow()
                row.error = error

    async def list(self, owner_id: uuid.UUID, stream_id: uuid.UUID) -> list[ReportSummary]:
        """The stream's reports, newest first."""
        async with self.database.session() as session:
            scope = OwnerScope(session, owner_id)
            await scope.get(StreamRow, stream_id, what=STREAM)
            rows = await session.scalars(
                scope.select(StreamReportRow)
                .where(StreamReportRow.stream_id == stream_id)
                .order_by(StreamReportRow.started_at.desc(), StreamReportRow.id)
            )
            summaries: list[ReportSummary] = []
            reported_before = False
            for row in reversed(list(rows)):  # oldest first
                summaries.append(to_summary(row, first=not reported_before))
                reported_before = reported_before or row.status in _WROTE_A_REPORT
            return summaries[::-1]

    async def latest(self, owner_id: uuid.UUID, stream_id: uuid.UUID) -> StoredReport | None:
        """The stream's newest report (None: it never ran), read alone: a page that shows
        each stream's last report need not read every report the stream wrote."""
        async with self.database.session() as session:
            row = await session.scalar(
                OwnerScope(session, owner_id)
                .select(StreamReportRow)
                .where(StreamReportRow.stream_id == stream_id)
                .order_by(StreamReportRow.started_at.desc(), StreamReportRow.id)
                .limit(1)
            )
            return None if row is None else to_stored(row, first=await _is_first(session, row))

    async def get(
        self, owner_id: uuid.UUID, stream_id: uuid.UUID, report_id: uuid.UUID
    ) -> StoredReport:
        async with self.database.session() as session:
            row = await session.scalar(
                OwnerScope(session, owner_id)
                .select(StreamReportRow)
                .where(StreamReportRow.id == report_id, StreamReportRow.stream_id == stream_id)
            )
            if row is None:
                raise NotFoundError(
                    f"{REPORT} {report_id} of stream {stream_id} was not found.",
                    hint="List the stream's reports (GET /api/v1/streams/{id}/reports).",
                )
            return to_stored(row, first=await _is_first(session, row))
