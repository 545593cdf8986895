"""Paper-search runs (seed 003): start one, read its pending checkpoint, answer it,
read and export the results. A run is a durable workflow: it waits for each decision
across server restarts."""

from __future__ import annotations

import io
import uuid
from typing import Annotated

from fastapi import APIRouter, Query
from fastapi.responses import Response
from pydantic import BaseModel, Field

from scholarstream.api._deps import CurrentUser, RuntimeDep
from scholarstream.durable import require_engine
from scholarstream.errors import ConflictError, NotFoundError
from scholarstream.papers.formats import get_format
from scholarstream.search import (
    PendingCheckpoint,
    SearchRequest,
    SearchRun,
    SearchRunStore,
    SearchRunSummary,
    cancel_search_run,
    deliver_decision,
    start_search_run,
)
from scholarstream.search.core import Decision, ExportSelection, export_collection

router = APIRouter(prefix="/search", tags=["search"])


class DecisionIn(Decision):
    checkpoint_id: str = Field(description="The id of the pending checkpoint being answered.")


class RunList(BaseModel):
    runs: list[SearchRunSummary]


@router.post("/runs", response_model=SearchRun, status_code=202)
async def start_run(request: SearchRequest, runtime: RuntimeDep, user: CurrentUser) -> SearchRun:
    """Starts a run; it stops at its first checkpoint (GET .../checkpoint). 503
    ``engine_unavailable`` (here and for decisions and cancelling) when the durable engine
    does not run in this process."""
    require_engine()
    return await start_search_run(runtime.database, runtime.sources, user.id, request)


@router.get("/runs", response_model=RunList)
async def list_runs(
    runtime: RuntimeDep, user: CurrentUser, limit: Annotated[int, Query(ge=1, le=200)] = 50
) -> RunList:
    return RunList(runs=await SearchRunStore(runtime.database).list(user.id, limit=limit))


@router.get("/runs/{run_id}", response_model=SearchRun)
async def get_run(run_id: uuid.UUID, runtime: RuntimeDep, user: CurrentUser) -> SearchRun:
    return await SearchRunStore(runtime.database).get(user.id, run_id)


@router.get("/runs/{run_id}/checkpoint", response_model=PendingCheckpoint)
async def get_checkpoint(
    run_id: uuid.UUID, runtime: RuntimeDep, user: CurrentUser
) -> PendingCheckpoint:
    """The checkpoint awaiting a decision; 404 while the run is working or finished."""
    run = await SearchRunStore(runtime.database).get(user.id, run_id)
    if run.pending is None:
        raise NotFoundError(
            f"The search run is {run.status}"
            + (f" ({run.stage})" if run.stage and run.status == "running" else "")
            + " and waits for no decision now.",
            hint="Poll GET /api/v1/search/runs/{id} until its status is 'waiting'.",
        )
    return run.pending


@router.post("/runs/{run_id}/decisions", response_model=SearchRun, status_code=202)
async def decide(
    run_id: uuid.UUID, body: DecisionIn, runtime: RuntimeDep, user: CurrentUser
) -> SearchRun:
    """Answers the pending checkpoint: approve, edit (``revised_data``: a strategy at the
    strategy checkpoint, feedback at the result review) or reject (with a ``note``)."""
    require_engine()
    decision = Decision(action=body.action, revised_data=body.revised_data, note=body.note)
    return await deliver_decision(runtime.database, user.id, run_id, body.checkpoint_id, decision)


@router.post("/runs/{run_id}/cancel", response_model=SearchRun)
async def cancel(run_id: uuid.UUID, runtime: RuntimeDep, user: CurrentUser) -> SearchRun:
    require_engine()
    return await cancel_search_run(runtime.database, user.id, run_id)


@router.get(
    "/runs/{run_id}/export",
    response_class=Response,
    responses={200: {"description": "The run's papers as a file in the chosen format."}},
)
async def export_run(
    run_id: uuid.UUID,
    runtime: RuntimeDep,
    user: CurrentUser,
    format: Annotated[str, Query(description="ris, bibtex, csv or json")] = "ris",
    only: Annotated[
        ExportSelection, Query(description="all, or only the papers you marked relevant")
    ] = "all",
) -> Response:
    file_format = get_format(format, for_export=True)
    run = await SearchRunStore(runtime.database).get(user.id, run_id)
    if run.collection is None:
        raise ConflictError(
            "The search run has no results yet.",
            hint="Export after the first results are shown.",
        )
    out = io.StringIO()
    export_collection(run.collection, file_format.name, out, only=only)
    return Response(
        out.getvalue().encode(),
        media_type=f"{file_format.media_type}; charset=utf-8",
        headers={
            "Content-Disposition": (
                f'attachment; filename="search-{run_id}{file_format.export_extension}"'
            )
        },
    )
