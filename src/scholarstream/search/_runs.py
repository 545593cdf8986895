"""What the API and the web page show of a search run, and what starts one."""

from __future__ import annotations

import datetime as dt
import uuid
from typing import Literal

from pydantic import BaseModel, Field, field_validator

from scholarstream.search._assembly import SearchOptions
from scholarstream.search.core import Checkpoint, IterationRecord, ModelFallback, PaperCollection

RunStatus = Literal["running", "waiting", "completed", "failed", "cancelled"]
FINISHED: frozenset[str] = frozenset({"completed", "failed", "cancelled"})


class SearchRequest(SearchOptions):
    """Starts a run."""

    question: str = Field(description="What you are looking for, in your own words.")
    max_iterations: int | None = Field(default=None, ge=1, le=20)

    @field_validator("question", mode="after")
    @classmethod
    def _question(cls, value: str) -> str:
        value = " ".join(value.split())
        if not value:
            raise ValueError("the question is empty; describe what you are looking for")
        return value


class PendingCheckpoint(BaseModel):
    """A checkpoint awaiting a decision; ``id`` is what a decision names."""

    id: str
    checkpoint: Checkpoint


class RunError(BaseModel):
    code: str
    message: str
    hint: str | None = None


class SearchRunSummary(BaseModel):
    id: uuid.UUID
    question: str
    status: RunStatus
    stage: str | None
    iteration: int
    created_at: dt.datetime
    updated_at: dt.datetime


class SearchRun(SearchRunSummary):
    options: SearchRequest
    pending: PendingCheckpoint | None = Field(
        description="The checkpoint awaiting your decision, when status is 'waiting'."
    )
    collection: PaperCollection | None = Field(
        description="The final collection when completed, else the latest results."
    )
    iterations: list[IterationRecord] = Field(default_factory=list)
    fallbacks: list[ModelFallback] = Field(
        default_factory=list,
        description="The AI steps that used their offline counterpart in this run, one per "
        "step, with what happened in plain words (shown once on the run's page).",
    )
    error: RunError | None = None


def checkpoint_id(checkpoint: Checkpoint) -> str:
    """Unique within a run: each iteration has at most one checkpoint of each kind."""
    return f"{checkpoint.iteration}-{checkpoint.kind.value}"
