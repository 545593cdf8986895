"""What changed between two reports of a stream, as text for the chat (``compare_reports``):
counts side by side, each source's outcome, items in one report and not the other, group
counts and the publication timeline. ``load_pair`` reads both through the owner's scope."""

from __future__ import annotations

import uuid

from scholarstream.errors import InvalidInputError, NotFoundError
from scholarstream.streams.monitoring._report import SourceOutcome, StoredReport, TimelineBucket
from scholarstream.streams.monitoring._store import ReportStore
from scholarstream.streams.monitoring._timeline import published

MAX_LISTED = 15
_COUNTS = ("found", "distinct", "duplicates_dropped", "already_reported", "new")
_SAME_STREAM = (
    "Compare two reports of the stream on this page; leave other_report_id out to "
    "compare with the stream's previous report."
)


def parse_id(value: str, what: str) -> uuid.UUID:
    try:
        return uuid.UUID(value)
    except ValueError:
        raise InvalidInputError(
            f"{what} {value!r} is not a report id.", hint=_SAME_STREAM
        ) from None


async def _get(
    store: ReportStore, owner_id: uuid.UUID, stream_id: uuid.UUID, report_id: uuid.UUID
) -> StoredReport:
    try:
        return await store.get(owner_id, stream_id, report_id)
    except NotFoundError:
        raise NotFoundError(
            f"Report {report_id} was not found among the reports of stream {stream_id}.",
            hint=_SAME_STREAM,
        ) from None


async def load_pair(
    store: ReportStore,
    owner_id: uuid.UUID,
    stream_id: uuid.UUID,
    report_id: uuid.UUID,
    other_id: uuid.UUID | None,
) -> tuple[StoredReport, StoredReport]:
    """The report and the one to compare it with (by default the stream's previous report
    that has content). Both must be the owner's and of ``stream_id``."""
    this = await _get(store, owner_id, stream_id, report_id)
    if other_id is None:
        summaries = await store.list(owner_id, stream_id)  # newest first
        position = next(i for i, s in enumerate(summaries) if s.id == report_id)
        previous = next((s for s in summaries[position + 1 :] if s.counts is not None), None)
        if previous is None:
            raise InvalidInputError(
                f"Report {report_id} is the first report of stream {stream_id}: there is "
                "no previous report to compare it with.",
                hint="Name other_report_id (a later report of the same stream), or wait "
                "for the next run.",
            )
        other_id = previous.id
    if other_id == report_id:
        raise InvalidInputError("A report cannot be compared with itself.", hint=_SAME_STREAM)
    other = await _get(store, owner_id, stream_id, other_id)
    for stored in (this, other):
        if stored.report is None:
            raise InvalidInputError(
                f"Report {stored.id} has no content ({stored.status}).",
                hint="Compare reports of finished runs.",
            )
    return this, other


def _change(a: int, b: int) -> str:
    return f"{a} | {b} ({a - b:+d})"


def _outcome(outcome: SourceOutcome | None) -> str:
    if outcome is None:
        return "not searched"
    if outcome.ok:
        return f"ok, {outcome.found} found, {outcome.new} new"
    return f"FAILED ({outcome.error_code or 'error'}: {outcome.error or 'no message'})"


def _label(stored: StoredReport) -> str:
    return f"report {stored.id} (run {stored.started_at:%Y-%m-%d %H:%M}, {stored.status})"


def _buckets(a: list[TimelineBucket], b: list[TimelineBucket]) -> list[str]:
    left = {x.period: x.count for x in a}
    right = {x.period: x.count for x in b}
    return [
        f"{period}: {_change(left.get(period, 0), right.get(period, 0))}"
        for period in sorted(left.keys() | right.keys())
        if left.get(period, 0) != right.get(period, 0)
    ]


def compare_text(this: StoredReport, other: StoredReport) -> str:
    """Both reports must have content (``load_pair`` checks)."""
    a, b = this.report, other.report
    assert a is not None
    assert b is not None
    lines = [
        f"Comparing {_label(this)} with {_label(other)} of stream {a.stream_name!r}. "
        "Values are shown as this | other (change).",
        "",
        "Counts:",
        *(f"- {n}: {_change(getattr(a.counts, n), getattr(b.counts, n))}" for n in _COUNTS),
    ]
    for source in sorted(a.counts.by_source.keys() | b.counts.by_source.keys()):
        found = _change(a.counts.by_source.get(source, 0), b.counts.by_source.get(source, 0))
        lines.append(f"- found by {source}: {found}")

    lines += ["", "Sources (this | other):"]
    mine = {o.source: o for o in this.sources}
    theirs = {o.source: o for o in other.sources}
    for source in sorted(mine.keys() | theirs.keys()):
        x, y = mine.get(source), theirs.get(source)
        changed = (x is None) != (y is None) or (x is not None and y is not None and x.ok != y.ok)
        mark = " [OUTCOME CHANGED]" if changed else ""
        lines.append(f"- {source}: {_outcome(x)} | {_outcome(y)}{mark}")

    other_keys = {item.key for item in b.items}
    this_keys = {item.key for item in a.items}
    new = [item for item in a.items if item.key not in other_keys]
    gone = [item for item in b.items if item.key not in this_keys]
    for title, items in (
        ("Items in this report, not in the other", new),
        ("Items in the other report, not in this one", gone),
    ):
        lines += ["", f"{title}: {len(items)}"]
        for item in items[:MAX_LISTED]:
            year, _ = published(item.record)
            lines.append(
                f"- {item.record.title} ({year or 'n.d.'}; score {item.score:.2f}; "
                f"{', '.join(item.sources)}; key {item.key})"
            )
        if len(items) > MAX_LISTED:
            lines.append(f"- … and {len(items) - MAX_LISTED} more")

    lines += ["", "Groups (items this | other):"]
    left = {(g.kind, g.name): len(g.item_keys) for g in a.groups}
    right = {(g.kind, g.name): len(g.item_keys) for g in b.groups}
    for kind, name in sorted(left.keys() | right.keys()):
        label = "focus area" if kind == "focus_area" else "organisation"
        count = _change(left.get((kind, name), 0), right.get((kind, name), 0))
        lines.append(f"- {label} {name!r}: {count}")
    lines.append(f"- ungrouped: {_change(len(a.ungrouped), len(b.ungrouped))}")

    years = _buckets(a.timeline.by_year, b.timeline.by_year)
    lines += ["", "Publication timeline, years that differ (this | other):"]
    lines += [f"- {line}" for line in years] or ["- no difference by year"]
    if a.timeline.undated != b.timeline.undated:
        lines.append(f"- undated: {_change(a.timeline.undated, b.timeline.undated)}")
    return "\n".join(lines)
