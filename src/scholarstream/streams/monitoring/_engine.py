"""One monitoring run of a stream, without storage: search the stream's enabled queries,
each source for its own window (each source with its own query, the user's library as a
local source), merge duplicates within the run, leave out what the stream already
reported, score the rest against the stream and write the report.

A source's window starts where its last successful search started (``windows``; the
store keeps them, so a source that failed is searched again from the same date). Each
source is searched by the date it *added* a record when it can filter by it
(``SourceInfo.added_date``: PubMed's Entrez date, Crossref's created date,
ClinicalTrials.gov's first posted date, arXiv's submission date, the day a record was
imported into the library): a record indexed after a run with an earlier publication
date is still found by the next one. A source that can only filter by publication date
(OpenAlex without a paid plan, Semantic Scholar, Google Scholar) is searched from
``PUBLICATION_LOOKBACK`` before its window, and what that overlap finds again is left
out as already reported.

A source that fails is recorded in the outcomes and the run goes on (``partial``); only
when every source fails is the run ``failed``."""

from __future__ import annotations

import datetime as dt
from collections.abc import Collection, Mapping, Sequence

from scholarstream.errors import ScholarStreamError
from scholarstream.papers import Record, record_sources
from scholarstream.papers.dedup import RecordDeduplicator
from scholarstream.search.core import LabelledPaper
from scholarstream.sources import (
    LiteratureSource,
    MultiSearchResult,
    SearchQuery,
    SourceHub,
    SourceStatus,
)
from scholarstream.streams.core import Stream
from scholarstream.streams.monitoring._keys import already_reported, item_keys
from scholarstream.streams.monitoring._relevance import OFFLINE_JUDGE, Judged, StreamJudge, judge
from scholarstream.streams.monitoring._report import (
    Report,
    ReportCounts,
    ReportGroup,
    ReportItem,
    RunResult,
    RunStatus,
    SourceOutcome,
)
from scholarstream.streams.monitoring._timeline import published, timeline

DEFAULT_WINDOW = dt.timedelta(days=30)
PUBLICATION_LOOKBACK = dt.timedelta(days=90)
"""How far before its window a source filtered by publication date is searched: records
reach the indexes weeks to months after the date they were published."""


def first_since(now: dt.datetime, window: dt.timedelta = DEFAULT_WINDOW) -> dt.datetime:
    """Where a stream's first run starts looking."""
    return now - window


def searches(
    stream: Stream,
    since: dt.date,
    *,
    windows: Mapping[str, dt.datetime] | None = None,
    added_dates: Collection[str] = (),
) -> list[tuple[str, SearchQuery]]:
    """Each enabled source with its query for its window (``windows``, else ``since``):
    by the date the source added a record for the sources in ``added_dates``, else by
    publication date from ``PUBLICATION_LOOKBACK`` before the window."""
    strategy = stream.retrieval.strategy(date_from=since)
    found: list[tuple[str, SearchQuery]] = []
    for q in strategy.queries:
        window = (windows or {}).get(q.source)
        start = window.date() if window is not None else since
        added = q.source in added_dates
        query = SearchQuery(
            text=q.query,
            limit=q.limit,
            filters=q.filters,
            date_from=start if added else start - PUBLICATION_LOOKBACK,
            dates="added" if added else "published",
        )
        found.append((q.source, query))
    return found


def _adds_dates(hub: SourceHub, name: str, local: Mapping[str, LiteratureSource] | None) -> bool:
    try:
        return hub.resolve(name, local).info.added_date is not None
    except ScholarStreamError:
        return False  # an unknown source fails in the search itself, where it is reported


async def run_stream(
    stream: Stream,
    hub: SourceHub,
    *,
    since: dt.date,
    reported: Collection[str],
    windows: Mapping[str, dt.datetime] | None = None,
    local: Mapping[str, LiteratureSource] | None = None,
    by: StreamJudge = OFFLINE_JUDGE,
    labelled: Sequence[LabelledPaper] = (),
) -> RunResult:
    """Searches each source for its window (``windows``, else ``since``), merges, leaves
    out the ``reported`` keys, scores (``by``, learning from the ``labelled`` items) and
    reports."""
    names = [q.source for q in stream.retrieval.strategy().queries]
    added = {name for name in names if _adds_dates(hub, name, local)}
    plan = searches(stream, since, windows=windows, added_dates=added)
    result = await hub.search_each(plan, local=local)
    return await build_result(
        stream,
        result,
        since=min([since, *(window.date() for window in (windows or {}).values())]),
        reported=reported,
        by=by,
        labelled=labelled,
        searched={name: (query, (windows or {}).get(name)) for name, query in plan},
    )


async def build_result(
    stream: Stream,
    result: MultiSearchResult,
    *,
    since: dt.date,
    reported: Collection[str],
    by: StreamJudge = OFFLINE_JUDGE,
    labelled: Sequence[LabelledPaper] = (),
    searched: Mapping[str, tuple[SearchQuery, dt.datetime | None]] | None = None,
) -> RunResult:
    """The report of the records ``result`` found; ``searched`` is what each source was
    asked (its query and its window's start), kept in its outcome."""
    merged = await RecordDeduplicator().deduplicate(result.records)
    fresh: list[tuple[Record, list[str]]] = []
    for record in merged:
        if not already_reported(record, reported):
            fresh.append((record, item_keys(record)))
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
        fallbacks=by.fallbacks.items,
        items=items,
        groups=groups,
        ungrouped=ungrouped,
        counts=counts,
        timeline=timeline(item.record for item in items),
    )
    return RunResult(
        status=_status(result.statuses),
        report=report,
        sources=[
            _outcome(status, items, (searched or {}).get(status.source))
            for status in result.statuses
        ],
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


def _outcome(
    status: SourceStatus,
    items: Sequence[ReportItem],
    searched: tuple[SearchQuery, dt.datetime | None] | None,
) -> SourceOutcome:
    query, window = searched if searched is not None else (None, None)
    return SourceOutcome(
        since=window,
        date_from=query.date_from if query else None,
        dates=query.dates if query else None,
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
