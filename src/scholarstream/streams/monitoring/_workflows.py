"""A stream's run as a durable workflow on the ``stream-runs`` queue: on demand (the API's
**Run now**, ``scholarstream streams run``) and on schedule (``schedule``), the same workflow.

``start_stream_run`` claims the stream at once (the report row, ``running``; a
``ConflictError`` while another run of the stream is in progress, ``NotFoundError`` for
another user's stream) and enqueues the run; whichever process works the queue runs it
(``scholarstream worker``, ``serve``), never the request that asked for it. The workflow's
id is derived from the report's (``run_workflow_id``), so enqueueing the same run twice
runs it once.

The workflow is one step, ``resume_run``: a process killed in the middle of a run is
recovered by DBOS, which runs the step again; it finds its report still ``running`` and
runs it again under that report, so the report is stored once. A run that breaks ends its
report ``failed`` with the error (the workflow answers ``error``)."""

from __future__ import annotations

import logging
import uuid

from dbos import DBOS, SetWorkflowID, WorkflowHandleAsync

from scholarstream.db import Database
from scholarstream.durable import current_runtime, require_engine
from scholarstream.errors import EngineError
from scholarstream.streams.monitoring._report import StoredReport
from scholarstream.streams.monitoring._service import resume_run, stream_runner
from scholarstream.streams.monitoring._store import ReportStore

log = logging.getLogger(__name__)

STREAM_RUN_QUEUE = "stream-runs"
ERROR = "error"
"""What the workflow answers for a run that raised (its report says ``failed``)."""


def run_workflow_id(report_id: uuid.UUID) -> str:
    return f"stream-run-{report_id}"


@DBOS.step(name="streams.run")
async def _run_step(owner_id: str, report_id: str) -> str:
    """Runs (or, after a crash, runs again) the claimed run; its status, or ``error``."""
    runtime = current_runtime()
    owner, report = uuid.UUID(owner_id), uuid.UUID(report_id)
    try:
        stored = await resume_run(stream_runner(runtime), owner, report)
    except Exception:
        log.exception("the run of report %s failed", report_id)
        return ERROR
    if stored is None:  # finished before the process running it died
        return await ReportStore(runtime.database).status(owner, report) or ERROR
    if stored.status == "failed":
        log.warning("the run of report %s failed: every source failed", report_id)
    return stored.status


@DBOS.workflow(name="stream_run")
async def stream_run_workflow(owner_id: str, report_id: str) -> str:
    """The run of the claimed report ``report_id``: its final status, or ``error``."""
    return await _run_step(owner_id, report_id)


async def enqueue_run(owner_id: uuid.UUID, report_id: uuid.UUID) -> str:
    """Puts the run of the claimed report on the ``stream-runs`` queue (once: a run already
    enqueued is kept); its workflow id."""
    queue = await DBOS.retrieve_queue_async(STREAM_RUN_QUEUE)
    if queue is None:
        raise EngineError(
            f"The durable engine has no {STREAM_RUN_QUEUE!r} queue.",
            hint="Start ScholarStream with 'scholarstream serve' or 'scholarstream worker'.",
        )
    workflow_id = run_workflow_id(report_id)
    with SetWorkflowID(workflow_id):
        await queue.enqueue_async(stream_run_workflow, str(owner_id), str(report_id))
    return workflow_id


async def start_stream_run(
    database: Database, owner_id: uuid.UUID, stream_id: uuid.UUID
) -> StoredReport:
    """Claims the stream and enqueues its run; the report, ``running``. ``EngineError``
    without the durable engine (nothing is claimed), ``ConflictError`` while the stream
    runs, ``NotFoundError`` for another user's stream."""
    require_engine()  # else nothing here would take the run off the queue
    store = ReportStore(database)
    start = await store.begin(owner_id, stream_id)
    try:
        await enqueue_run(owner_id, start.report_id)
    except BaseException as exc:
        # Frees the stream: nothing will run this claim.
        await store.abort(owner_id, start.report_id, str(exc) or type(exc).__name__)
        raise
    return await store.get(owner_id, stream_id, start.report_id)


async def wait_for_run(
    database: Database, owner_id: uuid.UUID, started: StoredReport
) -> StoredReport:
    """Waits for the run of ``started`` (whichever process runs it) and returns its report."""
    handle: WorkflowHandleAsync[str] = await DBOS.retrieve_workflow_async(
        run_workflow_id(started.id)
    )
    await handle.get_result()
    return await ReportStore(database).get(owner_id, started.stream_id, started.id)


__all__ = [
    "ERROR",
    "STREAM_RUN_QUEUE",
    "enqueue_run",
    "run_workflow_id",
    "start_stream_run",
    "stream_run_workflow",
    "wait_for_run",
]
