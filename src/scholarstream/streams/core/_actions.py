"""What the user did, and what it changes before the guide is asked (seed 000, sections 2-4).

``option_selected`` (a suggestion chip) and ``options_selected`` (checkboxes) fill their
target field directly; ``skip_step`` skips the current step when its field is optional;
``text_input`` changes nothing here (the guide reads the text). Field edits made inline in
the preview panel carry no action: they travel with the next message as ``edits`` and are
applied first. Anything wrong is an ``InvalidInputError`` and nothing is changed.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

from scholarstream.errors import InvalidInputError
from scholarstream.streams.core._config import PartialStreamConfig
from scholarstream.streams.core._fields import (
    EDITABLE_FIELDS,
    FieldKind,
    FieldSpec,
    FieldValue,
    apply_values,
    empties_optional,
    field_spec,
    parse_field_value,
)
from scholarstream.streams.core._session import CreationSession
from scholarstream.streams.core._workflow import (
    DATA_STEPS,
    OPTIONAL_FIELDS,
    STEP_TO_FIELD_MAPPING,
    WorkflowStep,
)


class _Action(BaseModel):
    model_config = ConfigDict(extra="forbid")


class OptionSelected(_Action):
    """The user clicked one suggestion chip (single select)."""

    type: Literal["option_selected"] = "option_selected"
    target_field: str
    selected_value: str


class OptionsSelected(_Action):
    """The user ticked options and clicked the continue button (multi select)."""

    type: Literal["options_selected"] = "options_selected"
    target_field: str
    selected_values: list[str]


class TextInput(_Action):
    """The user typed free text; the guide works out what it answers."""

    type: Literal["text_input"] = "text_input"
    target_field: str | None = Field(default=None, description="Ignored: the guide reads the text.")


class SkipStep(_Action):
    """The user clicked skip on the current step (optional fields only)."""

    type: Literal["skip_step"] = "skip_step"
    target_field: str | None = Field(
        default=None, description="The field skipped; when given it must be the current step's."
    )


UserAction = Annotated[
    OptionSelected | OptionsSelected | TextInput | SkipStep, Field(discriminator="type")
]
user_action_adapter: TypeAdapter[UserAction] = TypeAdapter(UserAction)


@dataclass(frozen=True)
class ActionOutcome:
    """The state the guide is asked in."""

    config: PartialStreamConfig
    skipped_steps: tuple[WorkflowStep, ...]
    step_just_completed: bool
    populated_field: str | None
    """The field the action filled or skipped, if any."""
    note: str
    """The action in the user's words, for the conversation ("" for typed text): field
    labels and choice labels, never field names or stored values."""
    prompt_note: str = ""
    """The same action for the model's prompt, naming the field and the value it stores."""


def apply_field_edits(
    config: PartialStreamConfig, edits: Mapping[str, object] | None
) -> PartialStreamConfig:
    """Inline edits from the preview panel: field -> new value (``None`` clears it; the
    optional organisations are also cleared with ``[]`` or ``""``, as a stream's ``PATCH``
    clears them). List fields take a list or comma-separated text."""
    if not edits:
        return config
    values: dict[str, FieldValue | None] = {}
    for name, value in edits.items():
        if name not in EDITABLE_FIELDS:
            raise InvalidInputError(
                f"There is no editable stream field {name!r}.",
                hint=f"Fields: {', '.join(EDITABLE_FIELDS)}.",
            )
        cleared = value is None or empties_optional(name, value)
        values[name] = None if cleared else parse_field_value(name, value, split_text=True)
    return apply_values(config, values)


def apply_user_action(session: CreationSession, action: UserAction) -> ActionOutcome:
    """What ``action`` changes, checked against the current step."""
    step = session.current_step
    if action.type not in _ALLOWED[step]:
        allowed = ", ".join(sorted(_ALLOWED[step])) or "none"
        raise InvalidInputError(
            f"A {action.type} action is not accepted at the {step.value} step.",
            hint=f"Actions accepted there: {allowed}.",
        )
    return _HANDLERS[action.type](session, action)


def _option_selected(session: CreationSession, action: UserAction) -> ActionOutcome:
    assert isinstance(action, OptionSelected)
    spec = field_spec(action.target_field)
    raw: object = [action.selected_value] if spec.kind is FieldKind.LIST else action.selected_value
    value = parse_field_value(spec.name, raw)
    return _filled(session, spec, value)


def _options_selected(session: CreationSession, action: UserAction) -> ActionOutcome:
    assert isinstance(action, OptionsSelected)
    spec = field_spec(action.target_field)
    raw: object = action.selected_values
    if spec.kind is not FieldKind.LIST:
        if len(action.selected_values) != 1:
            raise InvalidInputError(
                f"The {spec.label} takes one value; {len(action.selected_values)} were selected.",
                hint="Select exactly one option, or send an option_selected action.",
            )
        raw = action.selected_values[0]
    value = parse_field_value(spec.name, raw)
    return _filled(session, spec, value)


def _filled(session: CreationSession, spec: FieldSpec, value: FieldValue) -> ActionOutcome:
    """Seed 3.1: an option chosen in exploration completes the step; 3.2: in a data step,
    only an option for that step's own field does (another field is an edit)."""
    step = session.current_step
    name = spec.name
    completes = step is WorkflowStep.EXPLORATION or STEP_TO_FIELD_MAPPING.get(step) == name
    return ActionOutcome(
        config=apply_values(session.config, {name: value}),
        skipped_steps=tuple(session.skipped_steps),
        step_just_completed=completes,
        populated_field=name,
        note=f"Selected {_quoted(spec, value)} for {spec.label}.",
        prompt_note=f"Selected {_shown(value)} for {name}.",
    )


def _skip_step(session: CreationSession, action: UserAction) -> ActionOutcome:
    assert isinstance(action, SkipStep)
    name = STEP_TO_FIELD_MAPPING[session.current_step]
    if action.target_field is not None and action.target_field != name:
        field_spec(action.target_field)  # raises for a field that does not exist
        raise InvalidInputError(
            f"Only the current step can be skipped: that is {name}, not {action.target_field}.",
            hint="Skip a field when the guide asks for it.",
        )
    if name not in OPTIONAL_FIELDS:
        raise InvalidInputError(
            f"This field is required: the {field_spec(name).label} cannot be skipped.",
            hint="Answer it, or pick one of the suggestions.",
        )
    return ActionOutcome(
        config=session.config,
        skipped_steps=tuple(dict.fromkeys([*session.skipped_steps, session.current_step])),
        step_just_completed=True,
        populated_field=name,
        note=f"Skipped {field_spec(name).label}.",
        prompt_note=f"Skipped {name}.",
    )


def _text_input(session: CreationSession, action: UserAction) -> ActionOutcome:
    return ActionOutcome(
        config=session.config,
        skipped_steps=tuple(session.skipped_steps),
        step_just_completed=False,
        populated_field=None,
        note="",
    )


def _shown(value: FieldValue) -> str:
    return ", ".join(map(repr, value)) if isinstance(value, list) else repr(value)


def _quoted(spec: FieldSpec, value: FieldValue) -> str:
    """ "A", "B" as the user reads them: a choice by its label."""
    values = value if isinstance(value, list) else [spec.choice_label(value)]
    return ", ".join(f"\u201c{v}\u201d" for v in values)


_HANDLERS: dict[str, Callable[[CreationSession, UserAction], ActionOutcome]] = {
    "option_selected": _option_selected,
    "options_selected": _options_selected,
    "skip_step": _skip_step,
    "text_input": _text_input,
}

_IN_EXPLORATION = frozenset({"text_input", "option_selected", "options_selected"})
_IN_DATA_STEP = frozenset(_HANDLERS)
_ALLOWED: dict[WorkflowStep, frozenset[str]] = {
    WorkflowStep.EXPLORATION: _IN_EXPLORATION,
    **dict.fromkeys(DATA_STEPS, _IN_DATA_STEP),
    WorkflowStep.REVIEW: frozenset({"text_input"}),
    WorkflowStep.COMPLETE: frozenset(),
}
