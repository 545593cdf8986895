"""Chat: send a message and stream the answer (SSE), resume a dropped stream, stop an
answer, the conversations, server actions, and what a page's chat offers."""

from __future__ import annotations

import uuid
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Header, Query, Request, Response
from pydantic import BaseModel, Field, JsonValue

from scholarstream.api._deps import ReleasedUser, RuntimeDep
from scholarstream.api.routes._sse import event_stream_response
from scholarstream.chat import (
    ActionResult,
    Assistant,
    ChatMessageIn,
    ConversationRename,
    ConversationSummary,
    ConversationView,
    Turn,
    available_commands,
    get_server_action,
    stored_outcome,
)
from scholarstream.chat.core import ChatContext, ChatEvent, resume_after
from scholarstream.chat.pages import resolve
from scholarstream.chat.tools import ToolContext
from scholarstream.errors import NotFoundError
from scholarstream.sse import EventStreamResponse, ready

router = APIRouter(prefix="/chat", tags=["chat"])

_NAME_CHARS = 80  # ChatContext's limit for page, tab and subtab names
_SSE_DOC: dict[int | str, dict[str, Any]] = {
    200: event_stream_response(
        "Server-sent events: status, text_delta, tool_start, tool_progress, "
        "tool_complete, then complete or error. Each event's id is '<turn_id>:<n>'.",
        ChatEvent,
    )
}


async def get_assistant(request: Request) -> Assistant:
    assistant: Assistant = request.app.state.assistant
    return assistant


AssistantDep = Annotated[Assistant, Depends(get_assistant)]


def _stream(assistant: Assistant, turn: Turn, after: int) -> EventStreamResponse:
    stream = assistant.hub.stream(turn, after)
    return EventStreamResponse(stream.rest, head=stream.head)


@router.post("/messages", response_class=EventStreamResponse, responses=_SSE_DOC)
async def send_message(
    body: ChatMessageIn, user: ReleasedUser, assistant: AssistantDep
) -> EventStreamResponse:
    """Stores the message and streams the answer. The first event (``status``) carries the
    conversation id and the turn id."""
    turn = await assistant.start(user.id, body)
    return _stream(assistant, turn, 0)


@router.get("/turns/{turn_id}/events", response_class=EventStreamResponse, responses=_SSE_DOC)
async def turn_events(
    turn_id: str,
    user: ReleasedUser,
    assistant: AssistantDep,
    last_event_id: Annotated[str | None, Header(description="'<turn_id>:<n>'")] = None,
) -> EventStreamResponse:
    """The rest of a turn's events after ``Last-Event-ID``; for a finished turn no longer
    in memory, its stored outcome."""
    turn = assistant.hub.get(turn_id, user.id)
    if turn is not None:
        return _stream(assistant, turn, resume_after(turn_id, last_event_id))
    answer = await assistant.store.answer_of_turn(user.id, turn_id)
    if answer is None:
        raise NotFoundError(
            "That answer was not found: its conversation was deleted, or it is not yours.",
            hint="Reload the conversation.",
        )
    return EventStreamResponse(ready([stored_outcome(turn_id, answer)]))


@router.post("/turns/{turn_id}/cancel", status_code=204)
async def cancel_turn(turn_id: str, user: ReleasedUser, assistant: AssistantDep) -> Response:
    """Stops an answer; what it said so far is kept. Stopping a finished answer does nothing."""
    turn = assistant.hub.get(turn_id, user.id)
    if turn is not None:
        await assistant.hub.cancel(turn)
    elif await assistant.store.answer_of_turn(user.id, turn_id) is None:
        raise NotFoundError(
            "That answer was not found: its conversation was deleted, or it is not yours.",
            hint="Reload the conversation.",
        )
    return Response(status_code=204)


@router.get("/conversations")
async def list_conversations(
    user: ReleasedUser, assistant: AssistantDep
) -> list[ConversationSummary]:
    return await assistant.store.list(user.id)


@router.get("/conversations/{conversation_id}")
async def get_conversation(
    conversation_id: uuid.UUID, user: ReleasedUser, assistant: AssistantDep
) -> ConversationView:
    return await assistant.store.get(user.id, conversation_id)


@router.patch("/conversations/{conversation_id}")
async def rename_conversation(
    conversation_id: uuid.UUID,
    body: ConversationRename,
    user: ReleasedUser,
    assistant: AssistantDep,
) -> ConversationView:
    return await assistant.store.rename(user.id, conversation_id, body.title)


@router.delete("/conversations/{conversation_id}", status_code=204)
async def delete_conversation(
    conversation_id: uuid.UUID, user: ReleasedUser, assistant: AssistantDep
) -> Response:
    await assistant.store.delete(user.id, conversation_id)
    return Response(status_code=204)


class ActionIn(BaseModel):
    params: dict[str, JsonValue] = Field(default_factory=dict)
    context: ChatContext


@router.post("/actions/{action}")
async def run_action(
    action: str, body: ActionIn, user: ReleasedUser, assistant: AssistantDep
) -> ActionResult:
    """Runs a suggested action whose handler is ``server``."""
    handler = get_server_action(action).handler
    return await handler(dict(body.params), ToolContext(assistant.tools, user.id, body.context))


class ToolInfo(BaseModel):
    name: str
    description: str
    command: str | None


class PayloadInfo(BaseModel):
    name: str
    description: str
    source: str
    accept_behaviour: str | None


class CommandInfo(BaseModel):
    command: str
    usage: str
    tool: str
    description: str


class ChatConfig(BaseModel):
    page: str
    offline: bool
    tools: list[ToolInfo]
    payloads: list[PayloadInfo]
    commands: list[CommandInfo]


@router.get("/config")
async def chat_config(
    user: ReleasedUser,
    runtime: RuntimeDep,
    page: Annotated[str, Query(min_length=1, max_length=_NAME_CHARS, description="The page.")],
    tab: Annotated[str | None, Query(max_length=_NAME_CHARS)] = None,
    subtab: Annotated[str | None, Query(max_length=_NAME_CHARS)] = None,
) -> ChatConfig:
    """What the chat offers on a page (tab, subtab): tools, payloads, commands."""
    resolution = resolve(ChatContext(current_page=page, active_tab=tab, active_subtab=subtab))
    return ChatConfig(
        page=page,
        offline=await runtime.models.offline_for_owner(runtime.database, user.id),
        tools=[
            ToolInfo(name=t.name, description=t.description, command=t.command)
            for t in resolution.tools
        ],
        payloads=[
            PayloadInfo(
                name=p.name,
                description=p.description,
                source=p.source,
                accept_behaviour=p.accept_behaviour,
            )
            for p in resolution.payloads
        ],
        commands=[
            CommandInfo(command=c.name, usage=c.usage, tool=c.tool.name, description=c.summary)
            for c in available_commands(resolution)
        ],
    )
