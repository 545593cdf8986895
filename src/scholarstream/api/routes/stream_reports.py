"""Monitoring runs of a research stream: start a run now (a durable workflow; read its
report until it is no longer ``running``), list and read its reports, export a report's
items (RIS, BibTeX, CSV), mark its items relevant or not (later runs learn from it)."""

from __future__ import annotations

import io
import uuid
from typing import Annotated

from fastapi import APIRouter, Query, Request, Response

from scholarstream.api._deps import ReleasedUser, RuntimeDep
from scholarstream.errors import ConflictError
from scholarstream.papers.formats import get_format
from scholarstream.streams.monitoring import (
    FeedbackStore,
    ItemJudgement,
    ReportFeedback,
    ReportList,
    ReportStore,
    StoredReport,
    export_report,
    start_stream_run,
)

router = APIRouter(prefix="/streams", tags=["streams"])


@router.post("/{stream_id}/runs", response_model=StoredReport, status_code=202)
async def run_stream(
    stream_id: uuid.UUID,
    user: ReleasedUser,
    runtime: RuntimeDep,
    request: Request,
    response: Response,
) -> StoredReport:
    """Starts a run of the stream and answers at once with its report, ``running``; the
    durable engine runs it (a crash resumes it). Read the report (its ``Location``) until
    its status is ``complete``, ``partial`` (a source failed; the report has what the
    others found) or ``failed`` (every source failed, or the run broke: see ``error``).
    409 while another run of the stream is in progress; 503 ``engine_unavailable`` when
    the durable engine does not run in this process."""
    started = await start_stream_run(runtime.database, user.id, stream_id)
    location = request.url_for("get_report", stream_id=str(stream_id), report_id=str(started.id))
    response.headers["Location"] = location.path
    return started


@router.get("/{stream_id}/reports", response_model=ReportList)
async def list_reports(stream_id: uuid.UUID, user: ReleasedUser, runtime: RuntimeDep) -> ReportList:
    """The stream's reports, newest first, with their counts."""
    return ReportList(reports=await ReportStore(runtime.database).list(user.id, stream_id))


@router.get("/{stream_id}/reports/{report_id}", response_model=StoredReport)
async def get_report(
    stream_id: uuid.UUID, report_id: uuid.UUID, user: ReleasedUser, runtime: RuntimeDep
) -> StoredReport:
    return await ReportStore(runtime.database).get(user.id, stream_id, report_id)


@router.get(
    "/{stream_id}/reports/{report_id}/export",
    response_class=Response,
    responses={200: {"description": "The report's items, best first, as a file."}},
)
async def export_stream_report(
    stream_id: uuid.UUID,
    report_id: uuid.UUID,
    user: ReleasedUser,
    runtime: RuntimeDep,
    format: Annotated[str, Query(description="ris, bibtex or csv")] = "ris",
) -> Response:
    file_format = get_format(format, for_export=True)
    stored = await ReportStore(runtime.database).get(user.id, stream_id, report_id)
    if stored.report is None:
        raise ConflictError(
            "This run has no report (it is still running, or it broke).",
            hint="Export a report whose status is complete or partial.",
        )
    out = io.StringIO()
    export_report(stored.report, file_format.name, out)
    return Response(
        out.getvalue().encode(),
        media_type=f"{file_format.media_type}; charset=utf-8",
        headers={
            "Content-Disposition": (
                f'attachment; filename="stream-report-{report_id}{file_format.export_extension}"'
            )
        },
    )


@router.get("/{stream_id}/reports/{report_id}/feedback", response_model=ReportFeedback)
async def get_report_feedback(
    stream_id: uuid.UUID, report_id: uuid.UUID, user: ReleasedUser, runtime: RuntimeDep
) -> ReportFeedback:
    """Your judgements of the report's items."""
    return await FeedbackStore(runtime.database).of_report(user.id, stream_id, report_id)


@router.put("/{stream_id}/reports/{report_id}/feedback", response_model=ReportFeedback)
async def judge_report_item(
    stream_id: uuid.UUID,
    report_id: uuid.UUID,
    body: ItemJudgement,
    user: ReleasedUser,
    runtime: RuntimeDep,
) -> ReportFeedback:
    """Marks one of the report's items relevant (true) or not (false), or takes the
    judgement back (null). The stream's next runs rank their new items with what the
    judgements teach (once there is at least one of each kind)."""
    return await FeedbackStore(runtime.database).mark(user.id, stream_id, report_id, body)
