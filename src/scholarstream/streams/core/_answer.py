"""The guide's answer to one turn, in the seed's fields (section 5's return format): what
the model produces as structured output, and what the rule-based guide produces too.

Only ``mode`` and ``message`` are required, and they come first, so the message can be
streamed as soon as the model starts writing it. Everything else is checked after the
turn (``validation``): an answer that names unknown fields or steps is not rejected here,
its bad parts are dropped there with a warning.
"""

from __future__ import annotations

from collections.abc import Sequence
from enum import StrEnum
from typing import Annotated, Any

from pydantic import BaseModel, Field, JsonValue, WithJsonSchema, field_validator

from scholarstream.streams.core._config import MAX_NAME_CHARS, MAX_TERM_CHARS
from scholarstream.streams.core._fields import FieldKind, FieldSpec, field_specs
from scholarstream.streams.core._workflow import WorkflowStep

# Bounds for the schema only (the configuration's own limits are larger): a good answer
# stays under them, and a rambling one stops there inside the ``stream_guide`` budget.
_LIST_ITEMS = 12
_TEXT_CHARS = 500
_CHIPS = 8


def _value_schema(spec: FieldSpec) -> dict[str, Any]:
    if spec.kind is FieldKind.CHOICE:
        return {"type": "string", "enum": list(spec.choices)}
    most = MAX_NAME_CHARS if spec.name == "stream_name" else _TEXT_CHARS
    text = {"type": "string", "minLength": 1, "maxLength": most}
    if spec.kind is FieldKind.LIST:
        item = {"type": "string", "minLength": 1, "maxLength": MAX_TERM_CHARS}
        # A list field also takes one text (split at commas after the turn).
        return {"anyOf": [{"type": "array", "items": item, "maxItems": _LIST_ITEMS}, text]}
    return text


def _nullable_enum(values: Sequence[str]) -> dict[str, Any]:
    return {"anyOf": [{"type": "string", "enum": list(values)}, {"type": "null"}], "default": None}


# The schema the model is shown names the fields and steps that exist (a local server's
# grammar follows it, so a small model cannot invent "data_step" or a field), with each
# field's kind. Validation stays loose: any JSON is accepted, so one malformed value is
# dropped after the turn (``validation``) instead of costing the whole answer.
ExtractedData = Annotated[
    dict[str, JsonValue],
    WithJsonSchema(
        {
            "type": "object",
            "properties": {spec.name: _value_schema(spec) for spec in field_specs()},
            "additionalProperties": False,
        }
    ),
]
FieldName = Annotated[str | None, WithJsonSchema(_nullable_enum([s.name for s in field_specs()]))]
StepName = Annotated[str | None, WithJsonSchema(_nullable_enum([s.value for s in WorkflowStep]))]
Chips = Annotated[
    list[str],
    WithJsonSchema({"type": "array", "items": {"type": "string"}, "maxItems": _CHIPS}),
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
    target_field: FieldName = Field(
        default=None, description="The field the suggestions or options are for."
    )
    extracted_data: ExtractedData = Field(
        default_factory=dict,
        description="Field name -> value you extracted from the user's message "
        "(a string, or a list of strings for list fields).",
    )
    suggestions: Chips = Field(
        default_factory=list, description="Single-select values for target_field."
    )
    options: Chips = Field(
        default_factory=list, description="Multi-select values (checkboxes) for target_field."
    )
    proposed_message: str | None = Field(
        default=None, description="Text of the continue button shown with options."
    )
    next_step: StepName = Field(
        default=None, description="The step to go to, from the valid next steps."
    )

    @field_validator("mode", mode="before")
    @classmethod
    def _any_case(cls, value: object) -> object:
        return value.strip().lower() if isinstance(value, str) else value
