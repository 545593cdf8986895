"""The SSE protocol of seed 002: one typed model per event, discriminated by ``type``, and
the ids a reconnecting client resumes from. ``scholarstream.sse`` is the one encoder;
routes never build SSE strings."""

from __future__ import annotations

import uuid
from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field, TypeAdapter

from scholarstream.chat.core._payloads import CustomPayload
from scholarstream.chat.core._response import ChatResponsePayload


class StatusEvent(BaseModel):
    type: Literal["status"] = "status"
    message: str
    conversation_id: uuid.UUID | None = None
    turn_id: str | None = None


class TextDeltaEvent(BaseModel):
    type: Literal["text_delta"] = "text_delta"
    text: str


class ToolStartEvent(BaseModel):
    type: Literal["tool_start"] = "tool_start"
    tool: str
    input: dict[str, Any]
    index: int
    label: str | None = Field(
        default=None, description="The tool's name as people read it ('Search PubMed')."
    )


class ToolProgressEvent(BaseModel):
    type: Literal["tool_progress"] = "tool_progress"
    tool: str
    index: int
    stage: str
    message: str = ""
    progress: float | None = None


class ToolCompleteEvent(BaseModel):
    type: Literal["tool_complete"] = "tool_complete"
    tool: str
    index: int
    ok: bool = True
    message: str | None = Field(
        default=None,
        description="What a person reads of the run ('Found 12 papers in PubMed.', or why it "
        "failed and what to do); never the text the model reads. None when the answer "
        "itself says it (a command, an answer without a model).",
    )
    error: str | None = Field(
        default=None, description="The failure as a person reads it (message, when failed)."
    )
    payload: CustomPayload | None = None


class CompleteEvent(BaseModel):
    type: Literal["complete"] = "complete"
    payload: ChatResponsePayload


class ErrorEvent(BaseModel):
    type: Literal["error"] = "error"
    message: str
    code: str = "internal_error"
    hint: str | None = None
    conversation_id: uuid.UUID | None = None


ChatEvent = Annotated[
    StatusEvent
    | TextDeltaEvent
    | ToolStartEvent
    | ToolProgressEvent
    | ToolCompleteEvent
    | CompleteEvent
    | ErrorEvent,
    Field(discriminator="type"),
]

chat_event_adapter: TypeAdapter[ChatEvent] = TypeAdapter(ChatEvent)

TERMINAL_TYPES = frozenset({"complete", "error"})


def event_id(turn_id: str, sequence: int) -> str:
    """``<turn>:<n>``: a reconnecting client's ``Last-Event-ID`` names the turn and where it was."""
    return f"{turn_id}:{sequence}"


def parse_event_id(value: str) -> tuple[str, int] | None:
    turn_id, _, sequence = value.rpartition(":")
    if not turn_id or not sequence.isdigit():
        return None
    return turn_id, int(sequence)


def resume_after(turn_id: str, last_event_id: str | None) -> int:
    """The sequence number a stream of ``turn_id`` resumes after: the one a
    ``Last-Event-ID`` of that turn names, else 0 (from the start)."""
    parsed = parse_event_id(last_event_id) if last_event_id else None
    return parsed[1] if parsed is not None and parsed[0] == turn_id else 0
