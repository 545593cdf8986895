"""A stream's run on demand, for the API and the schedule: claim the stream,
run it with the runtime's sources and the owner's library, store the report."""

from __future__ import annotations

import datetime as dt
import uuid

from scholarstream.runtime import Runtime
from scholarstream.sources.library import LibrarySource
from scholarstream.streams.monitoring.engine import run_stream
from scholarstream.streams.monitoring.report import StoredReport
from scholarstream.streams.monitoring.store import ReportStore

LIBRARY = "library"


async def run_stream_now(
    runtime: Runtime,
    owner_id: uuid.UUID,
    stream_id: uuid.UUID,
    *,
    now: dt.datetime | None = None,
) -> StoredReport:
    """Runs the stream and returns its stored report (``failed`` when every source failed;
    the run is then searched again from the same date next time). ``ConflictError`` when
    the stream is already running, ``NotFoundError`` for another user's stream."""
    store = ReportStore(runtime.database)
    start = await store.begin(owner_id, stream_id, now=now)
    try:
        result = await run_stream(
            start.stream,
            runtime.sources,
            since=start.since.date(),
            reported=start.reported,
            local={LIBRARY: LibrarySource(runtime.library, owner_id)},
        )
    except BaseException as exc:
        # Frees the stream for the next run; the error itself goes on to the caller.
        await store.abort(owner_id, start.report_id, str(exc) or type(exc).__name__)
        raise
    return await store.finish(owner_id, start, result)
