"""One monitoring run of a stream, without storage: search the stream's enabled queries
for items published since ``since`` (each source with its own query, the user's library
as a local source), merge duplicates within the run, leave out what the stream already
reported, score the rest against the stream and write the report.

A source that fails is recorded in the outcomes and the run goes on (``partial``); only
when every source fails is the run ``failed``."""

from __future__ import annotations

import datetime as dt
from collections.abc import Collection, Mapping, Sequence

from scholarstream.papers import Record
from scholarstream.search.dedup import RecordDeduplicator
from scholarstream.search.keys import record_sources
from scholarstream.search.models import LabelledPaper
from scholarstream.sources import MultiSearchResult, SearchQuery, SourceHub, SourceStatus
from scholarstream.sources.base import LiteratureSource
from scholarstream.streams.monitoring.keys import item_keys
from scholarstream.streams.monitoring.relevance import OFFLINE_JUDGE, Judged, StreamJudge, judge
from scholarstream.streams.monitoring.report import (
    Report,
    ReportCounts,
    ReportGroup,
    ReportItem,
    RunResult,
    RunStatus,
    SourceOutcome,
)
from scholarstream.streams.monitoring.timeline import published, timeline
from scholarstream.streams.records import Stream

DEFAULT_WINDOW = dt.timedelta(days=30)


def first_since(now: dt.datetime, window: dt.timedelta = DEFAULT_WINDOW) -> dt.datetime:
    """Where a stream's first run starts looking."""
    return now - window


def searches(stream: Stream, since: dt.date) -> list[tuple[str, SearchQuery]]:
    """Each enabled source with its query, limited to items published from ``since``."""
    strategy = stream.retrieval.strategy(date_from=since)
    return [
        (
            q.source,
            SearchQuery(text=q.query, limit=q.limit, filters=q.filters, date_from=since),
        )
        for q in strategy.queries
    ]


async def run_stream(
    stream: Stream,
    hub: SourceHub,
    *,
    since: dt.date,
    reported: Collection[str],
    local: Mapping[str, LiteratureSource] | None = None,
    by: StreamJudge = OFFLINE_JUDGE,
    labelled: Sequence[LabelledPaper] = (),
) -> RunResult:
    """Searches, merges, leaves out the ``reported`` keys, scores (``by``, learning from
    the ``labelled`` items) and reports."""
    result = await hub.search_each(searches(stream, since), local=local)
    return await build_result(
        stream, result, since=since, reported=reported, by=by, labelled=labelled
    )


async def build_result(
    stream: Stream,
    result: MultiSearchResult,
    *,
    since: dt.date,
    reported: Collection[str],
    by: StreamJudge = OFFLINE_JUDGE,
    labelled: Sequence[LabelledPaper] = (),
) -> RunResult:
    merged = await RecordDeduplicator().deduplicate(result.records)
    fresh: list[tuple[Record, list[str]]] = []
    for record in merged:
        keys = item_keys(record)
        if not any(key in reported for key in keys):
            fresh.append((record, keys))
    judged = await judge([record for record, _ in fresh], stream, by=by, labelled=labelled)
    items = sorted(
        (
            _item(record, keys[0], verdict)
            for (record, keys), verdict in zip(fresh, judged, strict=True)
        ),
        key=_rank_key,
    )
    counts = ReportCounts(
        found=len(result.records),
        distinct=len(merged),
        duplicates_dropped=len(result.records) - len(merged),
        already_reported=len(merged) - len(fresh),
        new=len(items),
        by_source={s.source: s.returned for s in result.statuses},
    )
    groups, ungrouped = _groups(stream, items)
    report = Report(
        stream_id=stream.id,
        stream_name=stream.stream_name,
        since=since,
        scorer=by.name,
        feedback_used=len(labelled) if any(v.feedback is not None for v in judged) else 0,
        items=items,
        groups=groups,
        ungrouped=ungrouped,
        counts=counts,
        timeline=timeline(item.record for item in items),
    )
    return RunResult(
        status=_status(result.statuses),
        report=report,
        sources=[_outcome(status, items) for status in result.statuses],
        reported_keys={keys[0]: keys for _, keys in fresh},
    )


def _item(record: Record, key: str, verdict: Judged) -> ReportItem:
    return ReportItem(
        key=key,
        record=record,
        score=verdict.score,
        reason=verdict.reason,
        sources=record_sources(record),
        focus_areas=verdict.match.focus_areas,
        competitors=verdict.match.competitors,
        keywords=verdict.match.keywords,
        feedback=verdict.feedback,
    )


def _rank_key(item: ReportItem) -> tuple[float, int, str]:
    """Best score first, then the most recent, then by key (a stable order)."""
    date = published(item.record)[1]
    return (-item.score, -(date.toordinal() if date else 0), item.key)


def _groups(stream: Stream, items: Sequence[ReportItem]) -> tuple[list[ReportGroup], list[str]]:
    groups = [
        ReportGroup(
            kind="focus_area",
            name=area,
            item_keys=[i.key for i in items if area in i.focus_areas],
        )
        for area in stream.focus_areas
    ]
    groups += [
        ReportGroup(
            kind="competitor",
            name=name,
            item_keys=[i.key for i in items if name in i.competitors],
        )
        for name in stream.competitors
    ]
    ungrouped = [i.key for i in items if not i.focus_areas and not i.competitors]
    return groups, ungrouped


def _status(statuses: Sequence[SourceStatus]) -> RunStatus:
    if all(status.ok for status in statuses):
        return "complete"
    if any(status.ok for status in statuses):
        return "partial"
    return "failed"


def _outcome(status: SourceStatus, items: Sequence[ReportItem]) -> SourceOutcome:
    return SourceOutcome(
        source=status.source,
        ok=status.ok,
        found=status.returned,
        new=sum(1 for item in items if status.source in item.sources),
        total=status.total,
        elapsed_ms=status.elapsed_ms,
        error_code=status.error_code,
        error=status.error,
        hint=status.hint,
    )
