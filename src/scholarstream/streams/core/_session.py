"""A stream creation in progress: where the workflow is, what has been entered, what was
skipped, and what was said. A plain pydantic model, so it is stored as JSON between turns;
a turn never changes it in place (``advance`` hands back the next one)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from scholarstream.search.core import ModelFallback
from scholarstream.streams.core._config import PartialStreamConfig, StreamConfig
from scholarstream.streams.core._workflow import (
    OPTIONAL_FIELDS,
    STEP_TO_FIELD_MAPPING,
    WorkflowStep,
    completed_steps,
    get_available_next_steps,
)

OPENING_MESSAGE = (
    "Let's set up a research stream. What would you like to follow? A research topic, a "
    "method, the work of a lab or a company, a disease, a policy area... tell me in your "
    "own words."
)


class GuideMessage(BaseModel):
    model_config = ConfigDict(extra="forbid")

    role: Literal["user", "assistant"]
    content: str = Field(description="What was typed or said (may be empty for an action).")
    action: str = Field(default="", description="The user's action in words, if any.")
    fallback: ModelFallback | None = Field(
        default=None,
        description="On an assistant message: the offline guide wrote it, because the "
        "model's answer was unusable, late or failed.",
    )
    step: WorkflowStep | None = Field(
        default=None,
        description="On a user message: the step the workflow was at when it was said.",
    )

    def as_text(self) -> str:
        return " ".join(part for part in (self.action, self.content) if part)


class GuideOffer(BaseModel):
    """What the guide offered with its last message: chips, options and their button."""

    model_config = ConfigDict(extra="forbid")

    target_field: str
    suggestions: list[str] = Field(default_factory=list)
    options: list[str] = Field(default_factory=list)
    proposed_message: str | None = None


class CreationSession(BaseModel):
    model_config = ConfigDict(extra="forbid")

    current_step: WorkflowStep = WorkflowStep.EXPLORATION
    config: PartialStreamConfig = Field(default_factory=PartialStreamConfig)
    skipped_steps: list[WorkflowStep] = Field(default_factory=list)
    history: list[GuideMessage] = Field(default_factory=list)
    stream: StreamConfig | None = Field(
        default=None, description="The finished configuration, once the workflow is complete."
    )
    offer: GuideOffer | None = Field(
        default=None,
        description="The chips and options of the guide's last message, kept with the draft "
        "so a reloaded page offers them again.",
    )

    @field_validator("skipped_steps", mode="after")
    @classmethod
    def _only_optional(cls, value: list[WorkflowStep]) -> list[WorkflowStep]:
        for step in value:
            if STEP_TO_FIELD_MAPPING.get(step) not in OPTIONAL_FIELDS:
                raise ValueError(f"{step.value} is not an optional step and cannot be skipped")
        return list(dict.fromkeys(value))

    @property
    def completed_steps(self) -> list[WorkflowStep]:
        return completed_steps(self.config, self.skipped_steps)

    def available_next_steps(self) -> list[WorkflowStep]:
        return get_available_next_steps(self.current_step, self.completed_steps)


def new_session() -> CreationSession:
    """A session at ``exploration``, opened with the guide's first question."""
    return CreationSession(history=[GuideMessage(role="assistant", content=OPENING_MESSAGE)])
