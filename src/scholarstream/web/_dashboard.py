"""The home page's dashboard: the user's own work, collected through each feature's public
services (never their tables): recent searches, streams with their last report, research,
and the library's size. A fresh install has none of it; the page then shows where to start.

``chat_view`` is the same dashboard as the page's chat tray sends it (static/home/home.js):
what each panel shows, in the page's words, with each time as ISO 8601 for the browser to
write in the reader's own format before it sends it."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime

from pydantic import JsonValue

from scholarstream.research import ResearchStore
from scholarstream.runtime import Runtime
from scholarstream.search import SearchRunStore
from scholarstream.sources.library import LibraryQuery
from scholarstream.streams import Stream, StreamStore
from scholarstream.streams.monitoring import ReportStore, StoredReport

RECENT = 5
"""How many searches, streams and research runs the dashboard lists (newest first)."""
HEADLINES = 3
"""How many of a report's best new items a stream's line names."""

SEARCH_STATUS_LABELS = {
    "running": "Running",
    "waiting": "Waiting for you",
    "completed": "Completed",
    "failed": "Failed",
    "cancelled": "Cancelled",
}
REPORT_STATUS_LABELS = {
    "running": "Running",
    "complete": "Complete",
    "partial": "Partial",
    "failed": "Failed",
}
TONES = {
    # search runs
    "running": "busy",
    "waiting": "busy",
    "completed": "good",
    "cancelled": "bad",
    # stream reports
    "complete": "good",
    "partial": "busy",
    # research
    "draft": "plain",
    "processing": "busy",
    "synthesizing": "busy",
    "retrying": "busy",
    "awaiting_confirmation": "busy",
    # every feature
    "failed": "bad",
}
"""A status's colour on the dashboard: good, busy (running or waiting for you), bad, plain."""


def tone(status: str) -> str:
    return TONES.get(status, "plain")


@dataclass(frozen=True)
class SearchLine:
    id: uuid.UUID
    question: str
    status: str
    status_label: str
    updated_at: datetime


@dataclass(frozen=True)
class ReportLine:
    id: uuid.UUID
    status: str
    status_label: str
    when: datetime
    first: bool
    new: int | None
    """Items the report lists (None while it runs, or when it failed with no report)."""
    failed_sources: int
    headlines: list[str] = field(default_factory=list)
    """The titles of its best items, best first."""


@dataclass(frozen=True)
class StreamLine:
    id: uuid.UUID
    name: str
    enabled: bool
    frequency: str
    report: ReportLine | None
    """Its latest report; None: it has never run."""

    @property
    def schedule(self) -> str:
        """How it reports, as its line says it."""
        return (
            f"Reports {self.frequency.lower()}" if self.enabled else "Paused: no scheduled reports"
        )


@dataclass(frozen=True)
class ResearchLine:
    id: uuid.UUID
    title: str
    status: str
    created_at: datetime


@dataclass(frozen=True)
class LibraryLine:
    records: int
    last_added: datetime | None
    last_file: str | None


@dataclass(frozen=True)
class Dashboard:
    searches: list[SearchLine]
    streams: list[StreamLine]
    stream_count: int
    research: list[ResearchLine]
    library: LibraryLine

    @property
    def first_run(self) -> bool:
        """Nothing of the user's own yet: the page leads with where to start."""
        return not (self.searches or self.streams or self.research or self.library.records)


async def collect_dashboard(runtime: Runtime, owner_id: uuid.UUID) -> Dashboard:
    """What the home page shows ``owner_id``, each part from its feature's service."""
    searches, (streams, count), research, library = await asyncio.gather(
        _searches(runtime, owner_id),
        _streams(runtime, owner_id),
        _research(runtime, owner_id),
        _library(runtime, owner_id),
    )
    return Dashboard(
        searches=searches,
        streams=streams,
        stream_count=count,
        research=research,
        library=library,
    )


async def _searches(runtime: Runtime, owner_id: uuid.UUID) -> list[SearchLine]:
    runs = await SearchRunStore(runtime.database).list(owner_id, limit=RECENT)
    return [
        SearchLine(
            id=run.id,
            question=run.question,
            status=run.status,
            status_label=SEARCH_STATUS_LABELS.get(run.status, run.status.capitalize()),
            updated_at=run.updated_at,
        )
        for run in runs
    ]


async def _streams(runtime: Runtime, owner_id: uuid.UUID) -> tuple[list[StreamLine], int]:
    """The streams that ran most recently first (then the newest), with their last report."""
    streams = await StreamStore(runtime.database).list(owner_id)
    streams.sort(key=lambda s: s.last_run_at or s.created_at, reverse=True)
    shown = streams[:RECENT]
    reports = ReportStore(runtime.database)
    lines = [await _stream_line(reports, owner_id, stream) for stream in shown]
    return lines, len(streams)


async def _stream_line(reports: ReportStore, owner_id: uuid.UUID, stream: Stream) -> StreamLine:
    latest = await reports.latest(owner_id, stream.id)
    return StreamLine(
        id=stream.id,
        name=stream.stream_name or "Untitled stream",
        enabled=stream.enabled,
        frequency=stream.frequency_label,
        report=None if latest is None else _report_line(latest),
    )


def _report_line(stored: StoredReport) -> ReportLine:
    report = stored.report
    headlines = (
        [item.record.title for item in report.items[:HEADLINES] if item.record.title]
        if report is not None and report.counts.new
        else []
    )
    return ReportLine(
        id=stored.id,
        status=stored.status,
        status_label=REPORT_STATUS_LABELS.get(stored.status, stored.status.capitalize()),
        when=stored.finished_at or stored.started_at,
        first=stored.first,
        new=None if report is None else report.counts.new,
        failed_sources=sum(1 for source in stored.sources if not source.ok),
        headlines=headlines,
    )


async def _research(runtime: Runtime, owner_id: uuid.UUID) -> list[ResearchLine]:
    runs = await ResearchStore(runtime.database).list(owner_id, limit=RECENT)
    return [
        ResearchLine(id=run.id, title=run.title, status=run.status.value, created_at=run.created_at)
        for run in runs
    ]


async def _library(runtime: Runtime, owner_id: uuid.UUID) -> LibraryLine:
    """The number of records, and the newest one's arrival (listing is newest first)."""
    page = await runtime.library.search(owner_id, LibraryQuery(limit=1))
    newest = page.items[0] if page.items else None
    return LibraryLine(
        records=page.total,
        last_added=newest.added_at if newest else None,
        last_file=newest.source_file if newest else None,
    )


START_ACTIONS = ("Import a file", "Search papers", "Create a stream", "Start research")
"""The page's "Start here" actions (home.html), in its order."""


def _when(moment: datetime | None) -> str | None:
    return moment.isoformat() if moment is not None else None


def _report_view(report: ReportLine) -> dict[str, JsonValue]:
    return {
        "status": report.status_label,
        "running": report.status == "running",
        "when": _when(report.when),
        "first": report.first,
        "new": report.new,
        "failed_sources": report.failed_sources,
        "best": list(report.headlines),
    }


def chat_view(dashboard: Dashboard, research_labels: Mapping[str, str]) -> dict[str, JsonValue]:
    """What the dashboard shows, for the chat: each panel's lines with the labels the page
    gives them (statuses, schedules), the names and titles, and no ids."""
    library = dashboard.library
    return {
        "first_run": dashboard.first_run,
        "start_actions": list(START_ACTIONS),
        "streams": [
            {
                "name": line.name,
                "schedule": line.schedule,
                "last_report": None if line.report is None else _report_view(line.report),
            }
            for line in dashboard.streams
        ],
        "stream_count": dashboard.stream_count,
        "searches": [
            {"question": run.question, "status": run.status_label, "when": _when(run.updated_at)}
            for run in dashboard.searches
        ],
        "research": [
            {
                "title": run.title,
                "status": research_labels.get(run.status, run.status),
                "when": _when(run.created_at),
            }
            for run in dashboard.research
        ],
        "library": {
            "records": library.records,
            "when": _when(library.last_added),
            "file": library.last_file,
        },
    }
