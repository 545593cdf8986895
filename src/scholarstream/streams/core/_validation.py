"""Checking the guide's answer after the turn (seed 000, section 4, steps 5-6).

- ``extracted_data``: a field that does not exist is dropped, a value the field does not
  accept (a stream type outside the enum, an object for a list...) is dropped; either way
  with a warning, and what was already entered stays as it was. A value for the current
  step's field completes the step.
- **the user's edits win**: a field the user edited inline in this turn is theirs; what
  the guide extracts for it in the same turn is not used (a warning says so when it
  differs from what the user entered). The guide may fill every other field.
- ``next_step``: missing -> stay; not a step, or not a valid transition -> stay (warning).
  Valid means: in the list the guide was given, or ``review`` once the data it extracted
  completed every required field. ``complete`` finishes the configuration; if that is not
  possible (a required field was cleared) the turn stays where it is.
- ``target_field`` that does not exist: dropped with its suggestions and options. Without
  a target field, suggestions belong to the data step being gone to (or the current one).
  Suggestions a field would refuse (e.g. a stream type outside the enum) are dropped.
"""

from __future__ import annotations

import logging
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass

from pydantic import JsonValue

from scholarstream.errors import InvalidInputError
from scholarstream.streams.core._answer import GuideAnswer, GuideMode
from scholarstream.streams.core._config import PartialStreamConfig, StreamConfig, finish_config
from scholarstream.streams.core._fields import (
    FieldKind,
    FieldValue,
    apply_values,
    field_spec,
    is_field,
    parse_field_value,
)
from scholarstream.streams.core._guide import GuideRequest
from scholarstream.streams.core._workflow import (
    STEP_TO_FIELD_MAPPING,
    WorkflowStep,
    all_required_complete,
    completed_steps,
)

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class ValidatedTurn:
    mode: GuideMode
    message: str
    target_field: str | None
    suggestions: list[str]
    options: list[str]
    proposed_message: str | None
    next_step: WorkflowStep
    config: PartialStreamConfig
    step_just_completed: bool
    warnings: list[str]
    stream: StreamConfig | None


def validate_answer(answer: GuideAnswer, request: GuideRequest) -> ValidatedTurn:
    warnings: list[str] = []
    extracted = edits_win(
        _extracted(answer.extracted_data, warnings), request.config, request.edited_fields
    )
    for message in extracted.notes:
        _warn(warnings, message)
    config = apply_values(request.config, extracted.values)
    current_field = STEP_TO_FIELD_MAPPING.get(request.current_step)
    # The current step's field answered this turn: by the guide, or in the panel.
    answered = {*extracted.values, *(f for f in request.edited_fields if f in config.filled())}
    just_completed = request.step_just_completed or current_field in answered
    next_step = _next_step(answer.next_step, request, config, warnings)
    stream: StreamConfig | None = None
    if next_step is WorkflowStep.COMPLETE:
        try:
            stream = finish_config(config, unavailable=request.unavailable_sources)
        except InvalidInputError as exc:
            _warn(warnings, f"The stream was not created: {exc.message}")
            next_step = request.current_step
    target, suggestions, options = _chips(answer, next_step, request.current_step, warnings)
    mode = answer.mode
    if mode is GuideMode.SUGGESTION and not (suggestions or options):
        mode = GuideMode.QUESTION
    return ValidatedTurn(
        mode=mode,
        message=answer.message,
        target_field=target,
        suggestions=suggestions,
        options=options,
        proposed_message=answer.proposed_message if options else None,
        next_step=next_step,
        config=config,
        step_just_completed=just_completed,
        warnings=warnings,
        stream=stream,
    )


@dataclass(frozen=True)
class Extraction:
    """What the guide extracted that the turn uses, and why the rest was not used."""

    values: dict[str, FieldValue]
    notes: list[str]


def edits_win(
    extracted: Mapping[str, FieldValue],
    config: PartialStreamConfig,
    edited_fields: Collection[str],
) -> Extraction:
    """How a turn's inline edits and the guide's extraction merge: a field the user edited
    in the turn keeps the user's value (``config`` has the edits applied), whatever the
    guide extracted for it; the other fields take what the guide extracted. A note for each
    extracted value dropped that differs from the user's."""
    values: dict[str, FieldValue] = {}
    notes: list[str] = []
    for name, value in extracted.items():
        if name not in edited_fields:
            values[name] = value
            continue
        entered = getattr(config, name)
        if value != entered:
            notes.append(
                f"Ignored the value {value!r} for {name}: kept the value the user entered "
                "in this turn."
            )
    return Extraction(values, notes)


def _extracted(data: Mapping[str, JsonValue], warnings: list[str]) -> dict[str, FieldValue]:
    values: dict[str, FieldValue] = {}
    for name, value in data.items():
        if not is_field(name):
            _warn(warnings, f"Ignored a value for {name!r}: there is no such stream field.")
            continue
        try:
            values[name] = parse_field_value(name, value, split_text=True)
        except InvalidInputError as exc:
            _warn(warnings, f"Ignored the value {value!r} for {name}: {exc.message}")
    return values


def _next_step(
    proposed: str | None,
    request: GuideRequest,
    config: PartialStreamConfig,
    warnings: list[str],
) -> WorkflowStep:
    current = request.current_step
    if proposed is None or not proposed.strip():
        return current
    try:
        step = WorkflowStep(proposed.strip().lower())
    except ValueError:
        _warn(warnings, f"Stayed at {current.value}: {proposed!r} is not a workflow step.")
        return current
    allowed = set(request.valid_next_steps)
    if current is not WorkflowStep.REVIEW and all_required_complete(
        completed_steps(config, request.skipped_steps)
    ):
        allowed.add(WorkflowStep.REVIEW)
    if step not in allowed:
        _warn(
            warnings,
            f"Stayed at {current.value}: {step.value} is not a valid next step from there.",
        )
        return current
    return step


def _chips(
    answer: GuideAnswer, next_step: WorkflowStep, current: WorkflowStep, warnings: list[str]
) -> tuple[str | None, list[str], list[str]]:
    target = answer.target_field
    has_chips = bool(answer.suggestions or answer.options)
    if target is not None and not is_field(target):
        dropped = " and its suggestions" if has_chips else ""
        _warn(warnings, f"Dropped the target field {target!r}{dropped}: no such stream field.")
        return None, [], []
    if target is None and has_chips:
        target = STEP_TO_FIELD_MAPPING.get(next_step) or STEP_TO_FIELD_MAPPING.get(current)
        if target is None:
            _warn(warnings, "Dropped suggestions that named no field.")
            return None, [], []
    if target is None:
        return None, [], []
    return (
        target,
        _acceptable(target, answer.suggestions, warnings),
        _acceptable(target, answer.options, warnings),
    )


def _acceptable(name: str, values: Sequence[str], warnings: list[str]) -> list[str]:
    """The values ``name`` would accept when the user picks them, cleaned and unique."""
    is_list = field_spec(name).kind is FieldKind.LIST
    kept: list[str] = []
    for value in values:
        try:
            parsed = parse_field_value(name, [value] if is_list else value)
        except InvalidInputError as exc:
            _warn(warnings, f"Dropped the suggestion {value!r} for {name}: {exc.message}")
            continue
        text = parsed[0] if isinstance(parsed, list) else parsed
        if text.lower() not in {k.lower() for k in kept}:
            kept.append(text)
    return kept


def _warn(warnings: list[str], message: str) -> None:
    log.warning("stream guide: %s", message)
    warnings.append(message)
