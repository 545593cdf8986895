"""The publication timeline of a report: items per year and per month."""

from __future__ import annotations

import datetime as dt
from collections import Counter
from collections.abc import Iterable

from scholarstream.papers import Paper, Record
from scholarstream.streams.monitoring._report import Timeline, TimelineBucket


def published(record: Record) -> tuple[int | None, dt.date | None]:
    """(year, full date) of a paper's publication or a trial's first posting, when known."""
    if isinstance(record, Paper):
        date = record.published
        return (date.year if date else record.year), date
    date = record.first_posted or record.start_date
    return (date.year if date else None), date


def timeline(records: Iterable[Record]) -> Timeline:
    years: Counter[str] = Counter()
    months: Counter[str] = Counter()
    undated = 0
    for record in records:
        year, date = published(record)
        if year is None:
            undated += 1
            continue
        years[str(year)] += 1
        if date is not None:
            months[f"{date.year:04d}-{date.month:02d}"] += 1
    return Timeline(
        by_year=[TimelineBucket(period=p, count=n) for p, n in sorted(years.items())],
        by_month=[TimelineBucket(period=p, count=n) for p, n in sorted(months.items())],
        undated=undated,
    )
