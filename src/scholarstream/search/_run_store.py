"""Search runs in the database: created by the API, updated by the durable workflow."""

from __future__ import annotations

import uuid
from typing import Any

from sqlalchemy import update

from scholarstream.db import Database, OwnerScope
from scholarstream.db.tables import SearchRunRow
from scholarstream.errors import ConflictError, ScholarStreamError
from scholarstream.search._runs import (
    FINISHED,
    PendingCheckpoint,
    RunError,
    SearchRequest,
    SearchRun,
    SearchRunSummary,
    checkpoint_id,
)
from scholarstream.search.core import (
    Checkpoint,
    Decision,
    PaperCollection,
    ResultPayload,
    WorkflowState,
    validate_decision,
)


def workflow_id_for(run_id: uuid.UUID) -> str:
    return f"search-{run_id}"


def _summary(row: SearchRunRow) -> dict[str, Any]:
    return {
        "id": row.id,
        "question": row.question,
        "status": row.status,
        "stage": row.stage,
        "iteration": row.iteration,
        "created_at": row.created_at,
        "updated_at": row.updated_at,
    }


def to_view(row: SearchRunRow) -> SearchRun:
    state = WorkflowState.model_validate(row.state) if row.state else None
    return SearchRun.model_validate(
        {
            **_summary(row),
            "options": row.options,
            "pending": row.pending,
            "collection": row.collection,
            "iterations": state.iterations if state else [],
            "fallbacks": state.fallbacks if state else [],
            "error": row.error,
        }
    )


class SearchRunStore:
    def __init__(self, database: Database) -> None:
        self.database = database

    # --- the user's side (scoped) -------------------------------------------------------

    async def create(self, owner_id: uuid.UUID, request: SearchRequest) -> SearchRun:
        async with self.database.session() as session:
            run_id = uuid.uuid4()
            row = OwnerScope(session, owner_id).add(
                SearchRunRow(
                    id=run_id,
                    question=request.question,
                    status="running",
                    stage="queued",
                    iteration=0,
                    workflow_id=workflow_id_for(run_id),
                    options=request.model_dump(mode="json"),
                )
            )
            await session.flush()
            await session.refresh(row)
            return to_view(row)

    async def record(
        self,
        owner_id: uuid.UUID,
        request: SearchRequest,
        collection: PaperCollection,
        state: WorkflowState,
    ) -> SearchRun:
        """Keeps a run that ran to its end in another process (the command line runs the
        workflow itself) as a completed run: listed, shown and exported like the others."""
        async with self.database.session() as session:
            run_id = uuid.uuid4()
            row = OwnerScope(session, owner_id).add(
                SearchRunRow(
                    id=run_id,
                    question=request.question,
                    status="completed",
                    stage=None,
                    iteration=state.current_iteration,
                    workflow_id=workflow_id_for(run_id),
                    options=request.model_dump(mode="json"),
                    collection=collection.model_dump(mode="json"),
                    state=state.model_dump(mode="json"),
                )
            )
            await session.flush()
            await session.refresh(row)
            return to_view(row)

    async def get(self, owner_id: uuid.UUID, run_id: uuid.UUID) -> SearchRun:
        async with self.database.session() as session:
            row = await OwnerScope(session, owner_id).get(SearchRunRow, run_id, what="Search run")
            return to_view(row)

    async def list(self, owner_id: uuid.UUID, *, limit: int = 50) -> list[SearchRunSummary]:
        async with self.database.session() as session:
            rows = await session.scalars(
                OwnerScope(session, owner_id)
                .select(SearchRunRow)
                .order_by(SearchRunRow.created_at.desc())
                .limit(limit)
            )
            return [SearchRunSummary.model_validate(_summary(row)) for row in rows]

    async def accept_decision(
        self, owner_id: uuid.UUID, run_id: uuid.UUID, pending_id: str, decision: Decision
    ) -> tuple[str, PendingCheckpoint]:
        """Checks the decision against the pending checkpoint and takes the checkpoint off
        the run (so a second decision for it is refused). Returns the workflow id and the
        checkpoint for the caller to deliver the decision to; nothing changes on error."""
        async with self.database.session() as session:
            scope = OwnerScope(session, owner_id)
            row = await scope.get(SearchRunRow, run_id, what="Search run")
            if row.status in FINISHED:
                raise ConflictError(
                    f"The search run is {row.status}; it takes no more decisions.",
                    hint="Start a new search to search again.",
                )
            pending = PendingCheckpoint.model_validate(row.pending) if row.pending else None
            if pending is None or pending.id != pending_id:
                waiting = (
                    f"It waits at checkpoint {pending.id!r}."
                    if pending
                    else ("It is not waiting for a decision now.")
                )
                raise ConflictError(
                    f"Checkpoint {pending_id!r} is not awaiting a decision in this run. {waiting}",
                    hint="GET the run's checkpoint and answer the one it shows.",
                )
            validate_decision(pending.checkpoint, decision)
            row.pending = None
            row.status = "running"
            row.stage = "decided"
            return row.workflow_id, pending

    async def restore_pending(self, run_id: uuid.UUID, pending: PendingCheckpoint) -> None:
        """Puts a checkpoint back when its decision could not be delivered."""
        await self._update(run_id, status="waiting", stage="waiting", pending=_dump(pending))

    # --- the workflow's side ------------------------------------------------------------

    async def set_stage(self, run_id: uuid.UUID, iteration: int, stage: str) -> None:
        # A run waiting at a checkpoint keeps saying so: a workflow resumed after a crash
        # replays its earlier stages (their results come from the engine) before it is
        # back at the checkpoint, and those replays must not read as work in progress.
        await self._update(
            run_id,
            status="running",
            stage=stage,
            iteration=iteration,
            unless_status="waiting",
        )

    async def set_pending(self, run_id: uuid.UUID, checkpoint: Checkpoint) -> str:
        pending = PendingCheckpoint(id=checkpoint_id(checkpoint), checkpoint=checkpoint)
        if await self._pending_id(run_id) == pending.id:
            # Published already: a workflow killed before the engine recorded this step
            # publishes it again on recovery, and the user keeps the checkpoint they saw.
            return pending.id
        values: dict[str, Any] = {
            "status": "waiting",
            "stage": "waiting",
            "iteration": checkpoint.iteration,
            "pending": _dump(pending),
        }
        if isinstance(checkpoint.payload, ResultPayload):
            values["collection"] = checkpoint.payload.collection.model_dump(mode="json")
        await self._update(run_id, **values)
        return pending.id

    async def complete(
        self, run_id: uuid.UUID, collection: PaperCollection, state: WorkflowState
    ) -> None:
        await self._update(
            run_id,
            status="completed",
            stage=None,
            pending=None,
            collection=collection.model_dump(mode="json"),
            state=state.model_dump(mode="json"),
        )

    async def save_state(self, run_id: uuid.UUID, state: WorkflowState) -> None:
        await self._update(run_id, state=state.model_dump(mode="json"))

    async def fail(
        self, run_id: uuid.UUID, error: ScholarStreamError, state: WorkflowState | None = None
    ) -> None:
        """``state``: what the run had done (its iterations, which skills fell back)."""
        values: dict[str, Any] = {}
        if state is not None:
            values["state"] = state.model_dump(mode="json")
        await self._update(
            run_id,
            status="failed",
            stage=None,
            pending=None,
            error=RunError(code=error.code, message=error.message, hint=error.hint).model_dump(),
            **values,
        )

    async def cancel(self, owner_id: uuid.UUID, run_id: uuid.UUID) -> tuple[str, str | None]:
        """Marks the run cancelled; returns its workflow id and the checkpoint it waited at."""
        async with self.database.session() as session:
            row = await OwnerScope(session, owner_id).get(SearchRunRow, run_id, what="Search run")
            if row.status in FINISHED:
                raise ConflictError(
                    f"The search run is already {row.status}.", hint="Nothing to cancel."
                )
            pending = PendingCheckpoint.model_validate(row.pending) if row.pending else None
            row.status, row.stage, row.pending = "cancelled", None, None
            return row.workflow_id, pending.id if pending else None

    async def _pending_id(self, run_id: uuid.UUID) -> str | None:
        async with self.database.session() as session:
            row = await session.get(SearchRunRow, run_id)
            if row is None or not row.pending:
                return None
            return PendingCheckpoint.model_validate(row.pending).id

    async def _update(
        self, run_id: uuid.UUID, *, unless_status: str | None = None, **values: Any
    ) -> None:
        # A cancelled run stays cancelled whatever its workflow was still doing.
        skipped = ["cancelled", *([unless_status] if unless_status else [])]
        async with self.database.session() as session:
            await session.execute(
                update(SearchRunRow)
                .where(SearchRunRow.id == run_id, SearchRunRow.status.not_in(skipped))
                .values(**values)
            )


def _dump(pending: PendingCheckpoint) -> dict[str, Any]:
    return pending.model_dump(mode="json")
