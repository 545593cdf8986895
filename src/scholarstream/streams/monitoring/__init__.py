"""Monitoring runs of research streams (issue 7, on demand and on schedule): search the
stream's enabled queries for items since its last run, merge duplicates, leave out what it already
reported, score the rest offline against the stream, and store a report (ranked items
with a reason, groups by focus area and competitor, counts, a publication timeline).

``run_stream_now(runtime, owner_id, stream_id)`` does it all; ``run_stream`` is the run
without storage; ``ReportStore`` keeps the reports and the reported keys; ``schedule``
runs the due streams; ``FeedbackStore`` keeps the user's judgements of reported items,
which later runs learn from; ``stream_judge`` picks the model or the offline scorer."""

from scholarstream.streams.monitoring.engine import (
    DEFAULT_WINDOW,
    PUBLICATION_LOOKBACK,
    build_result,
    first_since,
    run_stream,
    searches,
)
from scholarstream.streams.monitoring.export import export_report, report_collection
from scholarstream.streams.monitoring.feedback import (
    FeedbackStore,
    ItemJudgement,
    ReportFeedback,
    labelled_items,
)
from scholarstream.streams.monitoring.keys import already_reported, item_keys, lookup_keys
from scholarstream.streams.monitoring.relevance import (
    OFFLINE_JUDGE,
    Match,
    StreamJudge,
    judge,
    match,
    stream_intent,
)
from scholarstream.streams.monitoring.report import (
    Report,
    ReportCounts,
    ReportGroup,
    ReportItem,
    ReportList,
    ReportSummary,
    RunResult,
    RunStatus,
    SourceOutcome,
    StoredReport,
    Timeline,
    TimelineBucket,
)
from scholarstream.streams.monitoring.service import run_stream_now, stream_judge
from scholarstream.streams.monitoring.store import ReportStore, RunStart
from scholarstream.streams.monitoring.timeline import timeline

__all__ = [
    "DEFAULT_WINDOW",
    "OFFLINE_JUDGE",
    "PUBLICATION_LOOKBACK",
    "FeedbackStore",
    "ItemJudgement",
    "Match",
    "Report",
    "ReportCounts",
    "ReportFeedback",
    "ReportGroup",
    "ReportItem",
    "ReportList",
    "ReportStore",
    "ReportSummary",
    "RunResult",
    "RunStart",
    "RunStatus",
    "SourceOutcome",
    "StoredReport",
    "StreamJudge",
    "Timeline",
    "TimelineBucket",
    "already_reported",
    "build_result",
    "export_report",
    "first_since",
    "item_keys",
    "judge",
    "labelled_items",
    "lookup_keys",
    "match",
    "report_collection",
    "run_stream",
    "run_stream_now",
    "searches",
    "stream_intent",
    "stream_judge",
    "timeline",
]
