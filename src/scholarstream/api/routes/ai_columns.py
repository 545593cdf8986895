"""AI columns of the current user's results tables: list, create, edit and delete them, and
get their values for the rows a table shows (cached per row, computed by the model)."""

from __future__ import annotations

import uuid
from typing import Annotated

from fastapi import APIRouter, Query

from scholarstream.ai_columns import (
    AIColumn,
    AIColumnCreate,
    AIColumnList,
    AIColumnStore,
    AIColumnUpdate,
    ColumnEvaluator,
    ColumnValues,
    ColumnValuesRequest,
    TableKey,
    column_values,
)
from scholarstream.api._deps import ReleasedUser, RuntimeDep, ScopeDep

router = APIRouter(prefix="/ai-columns", tags=["ai-columns"])

OFFLINE_PROBLEM = (
    "No language model is configured (offline mode): AI column values cannot be computed. "
    "Configure a model under Settings or in the server configuration."
)


@router.get("", response_model=AIColumnList)
async def list_columns(
    table: Annotated[TableKey, Query()],
    scope: ScopeDep,
    runtime: RuntimeDep,
) -> AIColumnList:
    offline = await runtime.models.offline_for(scope)
    return AIColumnList(
        columns=await AIColumnStore(scope).list(table),
        can_evaluate=not offline,
        problem=OFFLINE_PROBLEM if offline else None,
    )


@router.post("", response_model=AIColumn, status_code=201)
async def create_column(body: AIColumnCreate, scope: ScopeDep) -> AIColumn:
    """409 when the table already has a column of that name."""
    return await AIColumnStore(scope).create(body.table, body)


@router.get("/{column_id}", response_model=AIColumn)
async def get_column(column_id: uuid.UUID, scope: ScopeDep) -> AIColumn:
    return await AIColumnStore(scope).get(column_id)


@router.patch("/{column_id}", response_model=AIColumn)
async def update_column(column_id: uuid.UUID, body: AIColumnUpdate, scope: ScopeDep) -> AIColumn:
    """Edits the fields sent; edited criteria, type or categories make values be computed
    again on the next request."""
    return await AIColumnStore(scope).update(column_id, body)


@router.delete("/{column_id}", status_code=204)
async def delete_column(column_id: uuid.UUID, scope: ScopeDep) -> None:
    await AIColumnStore(scope).delete(column_id)


@router.post("/{column_id}/values", response_model=ColumnValues)
async def get_values(
    column_id: uuid.UUID, body: ColumnValuesRequest, user: ReleasedUser, runtime: RuntimeDep
) -> ColumnValues:
    """The column's value for every item (at most 100 per request), in the order sent:
    ``cached`` ones from earlier requests, the others computed now. An item the model fails
    on gets ``value: null``, ``failed: true`` and the error as its reason. 503 in offline
    mode when any item needs computing."""
    # Short transactions of its own, none held while the model works (see column_values).
    evaluator = ColumnEvaluator(
        runtime.llm,
        runtime.database,
        concurrency=runtime.settings.chat.ai_column_concurrency,
    )
    return await column_values(runtime.database, evaluator, user.id, column_id, body.items)
