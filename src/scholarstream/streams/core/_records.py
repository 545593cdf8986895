"""Research streams and creation sessions as they are stored and shown: a ``Stream`` is a
``StreamConfig`` with its id, state and timestamps; a ``CreationRecord`` is a stored
``CreationSession`` with its status; a ``CreationView`` is what the API shows of one."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Literal

from pydantic import BaseModel, Field

from scholarstream.errors import ConflictError
from scholarstream.streams.core._config import (
    REPORT_FREQUENCY_LABELS,
    STREAM_TYPE_LABELS,
    PartialStreamConfig,
    StreamConfig,
)
from scholarstream.streams.core._session import CreationSession, GuideMessage, GuideOffer
from scholarstream.streams.core._workflow import WorkflowStep, step_label

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

    @property
    def type_label(self) -> str:
        """The stream type as a user reads it ("Clinical research")."""
        return STREAM_TYPE_LABELS[self.stream_type]

    @property
    def frequency_label(self) -> str:
        """The report frequency as a user reads it ("Every two weeks")."""
        return REPORT_FREQUENCY_LABELS[self.report_frequency]


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
    offer: GuideOffer | None = Field(
        default=None, description="What the guide's last message offers (chips, options)."
    )
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
            offer=session.offer if record.status == "open" else None,
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
    step_label: str = Field(description='The step in words ("goals", "ready for review").')
    stream_name: str | None = Field(description="The stream name entered so far, if any.")
    title: str = Field(
        description="What to call the draft: its stream name, else the start of the first "
        'thing the user wrote, else "Untitled stream".'
    )
    turns: int = Field(description="Turns taken so far: 0 is a draft nothing was said in.")
    created_at: datetime
    updated_at: datetime

    @classmethod
    def of(cls, record: CreationRecord) -> CreationSummary:
        session = record.session
        said = next((m.content for m in session.history if m.role == "user" and m.content), "")
        return cls(
            id=record.id,
            status=record.status,
            step=session.current_step,
            step_label=step_label(session.current_step),
            stream_name=session.config.stream_name,
            title=session.config.stream_name or _cut(said) or "Untitled stream",
            turns=record.revision,
            created_at=record.created_at,
            updated_at=record.updated_at,
        )


def _cut(text: str, limit: int = 80) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "\u2026"


class CreationList(BaseModel):
    creations: list[CreationSummary] = Field(description="Most recently changed first.")
