"""A conversation's thread (follow-up continuity, seed 004): read its state, and edit its
master objective list."""

from __future__ import annotations

import uuid

from fastapi import APIRouter, Response

from scholarstream.api._deps import ReleasedUser
from scholarstream.api.routes.chat import AssistantDep
from scholarstream.chat.continuity import (
    Objective,
    ObjectiveChange,
    ObjectiveIn,
    ThreadState,
    add_objective,
    change_objective,
    remove_objective,
)

router = APIRouter(prefix="/chat/conversations/{conversation_id}", tags=["chat"])


@router.get("/thread")
async def get_thread(
    conversation_id: uuid.UUID, user: ReleasedUser, assistant: AssistantDep
) -> ThreadState:
    """The active topic and refined query, the scope, the last turns with the queries they
    sent, and the objectives."""
    return await assistant.store.thread(user.id, conversation_id)


@router.post("/objectives", status_code=201)
async def create_objective(
    conversation_id: uuid.UUID, body: ObjectiveIn, user: ReleasedUser, assistant: AssistantDep
) -> Objective:
    return await assistant.store.change_thread(
        user.id, conversation_id, lambda state: add_objective(state, body.text)
    )


@router.patch("/objectives/{objective_id}")
async def edit_objective(
    conversation_id: uuid.UUID,
    objective_id: int,
    body: ObjectiveChange,
    user: ReleasedUser,
    assistant: AssistantDep,
) -> Objective:
    return await assistant.store.change_thread(
        user.id, conversation_id, lambda state: change_objective(state, objective_id, body)
    )


@router.delete("/objectives/{objective_id}", status_code=204)
async def delete_objective(
    conversation_id: uuid.UUID, objective_id: int, user: ReleasedUser, assistant: AssistantDep
) -> Response:
    await assistant.store.change_thread(
        user.id, conversation_id, lambda state: remove_objective(state, objective_id)
    )
    return Response(status_code=204)
