"""The guide's answer to one turn, in the seed's fields (section 5's return format): what
the model produces as structured output, and what the rule-based guide produces too.

Only ``mode`` and ``message`` are required, and they come first, so the message can be
streamed as soon as the model starts writing it. Everything else is checked after the
turn (``validation``): an answer that names unknown fields or steps is not rejected here,
its bad parts are dropped there with a warning.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated

from pydantic import BaseModel, Field, JsonValue, WithJsonSchema, field_validator

# The schema the model is shown (text, or a list of texts); any JSON is accepted, so one
# malformed value is dropped after the turn instead of costing the whole answer.
ExtractedData = Annotated[
    dict[str, JsonValue],
    WithJsonSchema(
        {
            "type": "object",
            "additionalProperties": {
                "anyOf": [{"type": "string"}, {"type": "array", "items": {"type": "string"}}]
            },
        }
    ),
]


class GuideMode(StrEnum):
    QUESTION = "question"
    """Ask clarifying questions, gather context; no suggestions."""
    SUGGESTION = "suggestion"
    """Offer suggestions (single select) or options (multi select) for ``target_field``."""


class GuideAnswer(BaseModel):
    mode: GuideMode = Field(
        description="'question' to ask for context, 'suggestion' to offer values for a field."
    )
    message: str = Field(min_length=1, description="Your conversational message to the user.")
    target_field: str | None = Field(
        default=None, description="The field the suggestions or options are for."
    )
    extracted_data: ExtractedData = Field(
        default_factory=dict,
        description="Field name -> value you extracted from the user's message "
        "(a string, or a list of strings for list fields).",
    )
    suggestions: list[str] = Field(
        default_factory=list, description="Single-select values for target_field."
    )
    options: list[str] = Field(
        default_factory=list, description="Multi-select values (checkboxes) for target_field."
    )
    proposed_message: str | None = Field(
        default=None, description="Text of the continue button shown with options."
    )
    next_step: str | None = Field(
        default=None, description="The step to go to, from the valid next steps."
    )

    @field_validator("mode", mode="before")
    @classmethod
    def _any_case(cls, value: object) -> object:
        return value.strip().lower() if isinstance(value, str) else value
