"""Monitoring runs of research streams (issue 7, on demand and on schedule): search the
stream's enabled queries for items since its last run, merge duplicates, leave out what it already
reported, score the rest offline against the stream, and store a report (ranked items
with a reason, groups by focus area and competitor, counts, a publication timeline).

``start_stream_run(database, owner_id, stream_id)`` claims the stream and enqueues its run
as a durable workflow (``stream_run_workflow``, the ``stream-runs`` queue; ``wait_for_run``
waits for it); ``run_stream_now`` does the whole run in the caller, with what a
``StreamRunner`` gives it (database, sources, library, model gateway, notifier,
settings); ``run_stream`` is the run without storage; ``ReportStore`` keeps the reports
and the reported keys; ``schedule`` runs the due streams; ``FeedbackStore`` keeps the
user's judgements of reported items, which later runs learn from; ``stream_judge`` picks
the model or the offline scorer."""

from scholarstream.streams.monitoring._announce import report_notification
from scholarstream.streams.monitoring._compare import compare_text, load_pair, parse_id
from scholarstream.streams.monitoring._engine import (
    DEFAULT_WINDOW,
    PUBLICATION_LOOKBACK,
    build_result,
    first_since,
    run_stream,
    searches,
)
from scholarstream.streams.monitoring._export import export_report, report_collection
from scholarstream.streams.monitoring._feedback import (
    FeedbackStore,
    ItemJudgement,
    ReportFeedback,
    labelled_items,
)
from scholarstream.streams.monitoring._keys import already_reported, item_keys, lookup_keys
from scholarstream.streams.monitoring._relevance import (
    OFFLINE_JUDGE,
    Match,
    StreamJudge,
    judge,
    match,
    stream_intent,
)
from scholarstream.streams.monitoring._report import (
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
from scholarstream.streams.monitoring._schedule import (
    CRON,
    PERIODS,
    UNQUEUED_AFTER,
    DueStream,
    run_due_streams,
    run_due_streams_workflow,
    slot_time,
)
from scholarstream.streams.monitoring._service import (
    StreamRunner,
    run_stream_now,
    stream_judge,
    stream_runner,
)
from scholarstream.streams.monitoring._store import ReportStore, RunStart
from scholarstream.streams.monitoring._timeline import timeline
from scholarstream.streams.monitoring._workflows import (
    STREAM_RUN_QUEUE,
    enqueue_run,
    run_workflow_id,
    start_stream_run,
    stream_run_workflow,
    wait_for_run,
)

__all__ = [
    "CRON",
    "DEFAULT_WINDOW",
    "OFFLINE_JUDGE",
    "PERIODS",
    "PUBLICATION_LOOKBACK",
    "STREAM_RUN_QUEUE",
    "UNQUEUED_AFTER",
    "DueStream",
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
    "StreamRunner",
    "Timeline",
    "TimelineBucket",
    "already_reported",
    "build_result",
    "compare_text",
    "enqueue_run",
    "export_report",
    "first_since",
    "item_keys",
    "judge",
    "labelled_items",
    "load_pair",
    "lookup_keys",
    "match",
    "parse_id",
    "report_collection",
    "report_notification",
    "run_due_streams",
    "run_due_streams_workflow",
    "run_stream",
    "run_stream_now",
    "run_workflow_id",
    "searches",
    "slot_time",
    "start_stream_run",
    "stream_intent",
    "stream_judge",
    "stream_run_workflow",
    "stream_runner",
    "timeline",
    "wait_for_run",
]
