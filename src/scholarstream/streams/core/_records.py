"""Research streams and creation sessions as they are stored and shown: a ``Stream`` is a
``StreamConfig`` with its id, state and timestamps; a ``CreationRecord`` is a stored
``CreationSession`` with its status; a ``CreationView`` is what the API shows of one."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Literal

from pydantic import BaseModel, Field

from scholarstream.errors import ConflictError
from scholarstream.streams.core._config import PartialStreamConfig, StreamConfig
from scholarstream.streams.core._session import CreationSession, GuideMessage
from scholarstream.streams.core._workflow import WorkflowStep

CreationStatus = Literal["open", "completed", "abandoned"]
GuideKind = Literal["model", "rules"]
"""Who guides a creation: the configured model, or the rule-based guide (offline mode)."""


class Stream(StreamConfig):
    """A research stream: its configuration, whether monitoring runs it, and when it last ran."""

    id: uuid.UUID
    enabled: bool = Field(description="Monitoring runs only enabled streams.")
    last_run_at: datetime | None = Field(description="The last monitoring run (None: never).")
    created_at: datetime
    updated_at: datetime

    def config(self) -> StreamConfig:
        return StreamConfig.model_validate(
            self.model_dump(include=set(StreamConfig.model_fields), mode="json")
        )


class StreamList(BaseModel):
    streams: list[Stream]


class CreationRecord(BaseModel):
    """A stored creation session. ``revision`` counts its saved turns."""

    id: uuid.UUID
    status: CreationStatus
    revision: int
    session: CreationSession
    stream_id: uuid.UUID | None
    created_at: datetime
    updated_at: datetime

    def closed_error(self) -> ConflictError:
        """Why no turn can be taken in a creation that is not open."""
        if self.status == "completed":
            return ConflictError(
                "This stream has already been created; the creation workflow is finished.",
                hint="Open the stream to change it, or start a new creation.",
            )
        return ConflictError(
            "This stream creation was abandoned.",
            hint="Start a new creation (POST /api/v1/streams/creation).",
        )


class CreationView(BaseModel):
    """A creation session as the API shows it: where it is, what was entered, where it may
    go next, the conversation, and the stream it created once completed."""

    id: uuid.UUID
    status: CreationStatus
    guide: GuideKind
    step: WorkflowStep
    config: PartialStreamConfig
    completed_steps: list[WorkflowStep]
    skipped_steps: list[WorkflowStep]
    available_next_steps: list[WorkflowStep]
    messages: list[GuideMessage]
    revision: int = Field(description="The number of turns saved so far.")
    stream_id: uuid.UUID | None
    stream_url: str | None
    created_at: datetime
    updated_at: datetime

    @classmethod
    def of(
        cls, record: CreationRecord, *, guide: GuideKind, stream_url: str | None
    ) -> CreationView:
        session = record.session
        return cls(
            id=record.id,
            status=record.status,
            guide=guide,
            step=session.current_step,
            config=session.config,
            completed_steps=session.completed_steps,
            skipped_steps=session.skipped_steps,
            available_next_steps=session.available_next_steps() if record.status == "open" else [],
            messages=session.history,
            revision=record.revision,
            stream_id=record.stream_id,
            stream_url=stream_url,
            created_at=record.created_at,
            updated_at=record.updated_at,
        )


class CreationSummary(BaseModel):
    """A creation as a list of drafts shows it: enough to find it and reopen it."""

    id: uuid.UUID
    status: CreationStatus
    step: WorkflowStep = Field(description="The step the creation is at.")
    stream_name: str | None = Field(description="The stream name entered so far, if any.")
    created_at: datetime
    updated_at: datetime

    @classmethod
    def of(cls, record: CreationRecord) -> CreationSummary:
        return cls(
            id=record.id,
            status=record.status,
            step=record.session.current_step,
            stream_name=record.session.config.stream_name,
            created_at=record.created_at,
            updated_at=record.updated_at,
        )


class CreationList(BaseModel):
    creations: list[CreationSummary] = Field(description="Most recently changed first.")
