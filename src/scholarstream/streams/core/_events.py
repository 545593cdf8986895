"""What one turn of the creation guide emits, in order: ``text_delta`` events as the
message is written (a ``retry`` in between means the text so far is void: the guide is
asked again), then exactly one ``turn_result`` or one ``error``. One typed model per
event, discriminated by ``type``, ready for an SSE encoder."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, Field, TypeAdapter

from scholarstream.search.core import ModelFallback
from scholarstream.streams.core._answer import GuideMode
from scholarstream.streams.core._config import PartialStreamConfig, StreamConfig
from scholarstream.streams.core._session import CreationSession
from scholarstream.streams.core._workflow import WorkflowStep


class GuideTextDelta(BaseModel):
    type: Literal["text_delta"] = "text_delta"
    text: str


class GuideRetry(BaseModel):
    """The answer being streamed could not be used; the guide was asked again. Clear the
    text shown so far."""

    type: Literal["retry"] = "retry"
    reason: str


class GuideTurnResult(BaseModel):
    """The seed's response (message, next_step, updated_config, target_field, suggestions,
    options, proposed_message), plus what the next request needs."""

    type: Literal["turn_result"] = "turn_result"
    mode: GuideMode
    message: str
    next_step: WorkflowStep
    updated_config: PartialStreamConfig
    target_field: str | None = None
    suggestions: list[str] = Field(default_factory=list)
    options: list[str] = Field(default_factory=list)
    proposed_message: str | None = None
    step_just_completed: bool = False
    completed_steps: list[WorkflowStep] = Field(default_factory=list)
    available_next_steps: list[WorkflowStep] = Field(
        default_factory=list, description="Where the workflow may go from next_step."
    )
    warnings: list[str] = Field(
        default_factory=list, description="Parts of the guide's answer that were not used."
    )
    fallback: ModelFallback | None = Field(
        default=None,
        description="Set when the offline guide answered this turn because the model's "
        "answer was unusable, late or failed (its message says so in plain words).",
    )
    stream: StreamConfig | None = Field(
        default=None, description="The finished configuration when next_step is complete."
    )
    session: CreationSession = Field(description="The session to send with the next turn.")


class GuideError(BaseModel):
    """The turn failed or was refused; the session is unchanged (send the same one again,
    corrected)."""

    type: Literal["error"] = "error"
    code: str
    message: str
    hint: str | None = None
    field: str | None = Field(
        default=None,
        description="What the refusal is about, where known: the stream field an edit or "
        "action named (even one that does not exist), or 'message' for the typed text.",
    )


GuideEvent = Annotated[
    GuideTextDelta | GuideRetry | GuideTurnResult | GuideError, Field(discriminator="type")
]
guide_event_adapter: TypeAdapter[GuideEvent] = TypeAdapter(GuideEvent)
