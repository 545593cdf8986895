"""The catalogue of the fields the guide collects, and the one way a value for a field is
checked, whoever sends it (a clicked suggestion, an inline edit, the model).

Each field has a kind: ``text`` (one string), ``list`` (several strings) or ``choice`` (one
of a fixed set). Values are validated by ``PartialStreamConfig``'s own field types, so a
value accepted here is exactly a value the configuration accepts.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum

from pydantic import ValidationError

from scholarstream.errors import InvalidInputError
from scholarstream.streams.core._config import (
    COLLECTED_FIELDS,
    OPTIONAL_FIELDS,
    REPORT_FREQUENCY_LABELS,
    STREAM_TYPE_LABELS,
    PartialStreamConfig,
    ReportFrequency,
    StreamType,
)

FieldValue = str | list[str]
EDITABLE_FIELDS: tuple[str, ...] = (*COLLECTED_FIELDS, "chat_instructions")
"""What the preview panel may edit inline: the collected fields and the chat instructions."""

_LIST_SEPARATORS = re.compile(r"\s*[,;|\n]\s*")


class FieldKind(StrEnum):
    TEXT = "text"
    LIST = "list"
    CHOICE = "choice"


@dataclass(frozen=True)
class FieldSpec:
    name: str
    kind: FieldKind
    label: str
    question: str
    choices: tuple[str, ...] = ()
    choice_labels: Mapping[str, str] = field(default_factory=dict, hash=False, compare=False)
    """How each choice is shown to a user ("Every two weeks" for ``biweekly``)."""

    @property
    def optional(self) -> bool:
        return self.name in OPTIONAL_FIELDS

    def choice_label(self, value: str) -> str:
        """A choice as the user sees it; any other text as it is."""
        return self.choice_labels.get(value, value)

    def shown(self, value: FieldValue | None) -> str:
        """A value in the user's words: a list joined with commas, a choice by its label."""
        if value is None:
            return "(none)"
        if isinstance(value, list):
            return ", ".join(value)
        return self.choice_label(str(value))

    def describe(self) -> str:
        """As the system prompt lists it: ``stream_type (single-select: a, b)``, then how
        the user sees it (``shown as "stream type"; a as "A"``)."""
        kind = {
            FieldKind.TEXT: "text",
            FieldKind.LIST: "list",
            FieldKind.CHOICE: f"single-select: {', '.join(self.choices)}",
        }[self.kind]
        shown = f'shown as "{self.label}"'
        if self.choice_labels:
            shown += "; " + ", ".join(f'{c} as "{self.choice_label(c)}"' for c in self.choices)
        return f"{self.name} ({kind}{', optional' if self.optional else ''}; {shown})"


_SPECS: dict[str, FieldSpec] = {}


def register_field(spec: FieldSpec) -> None:
    if spec.name in _SPECS:
        raise ValueError(f"field {spec.name!r} is registered twice")
    if spec.name not in PartialStreamConfig.model_fields:
        raise ValueError(f"field {spec.name!r} is not a stream configuration field")
    _SPECS[spec.name] = spec


def field_spec(name: str) -> FieldSpec:
    """The spec of a collected field; ``InvalidInputError`` for a field that does not exist."""
    spec = _SPECS.get(name)
    if spec is None:
        raise InvalidInputError(
            f"There is no stream field {name!r}.",
            hint=f"Fields: {', '.join(_SPECS)}.",
        )
    return spec


def field_specs() -> list[FieldSpec]:
    return list(_SPECS.values())


def is_field(name: str) -> bool:
    return name in _SPECS


def parse_field_value(name: str, value: object, *, split_text: bool = False) -> FieldValue:
    """``value`` checked and cleaned for field ``name`` (choices are matched ignoring case).
    ``split_text``: a string given for a list field is split at commas, semicolons, pipes,
    and new lines (what a model or a typed answer writes); otherwise a list field
    takes a list. ``InvalidInputError`` says what is wrong."""
    if name == "chat_instructions":
        return _validated(name, value, "chat instructions")
    spec = field_spec(name)
    return _PREPARE[spec.kind](spec, value, split_text)


def empties_optional(name: str, value: object) -> bool:
    """Whether ``value`` empties the optional field ``name`` (the organisations): ``null``,
    ``[]`` or blank text, wherever it is sent (a stream's ``PATCH``, a creation turn's
    inline edits). A required field is not emptied this way."""
    if name not in OPTIONAL_FIELDS:
        return False
    return value is None or value == [] or (isinstance(value, str) and not value.strip())


def apply_values(config: PartialStreamConfig, values: Mapping[str, object]) -> PartialStreamConfig:
    """``config`` with already parsed values set (``None`` clears a field)."""
    return PartialStreamConfig.model_validate({**config.model_dump(), **values})


def _prepare_text(spec: FieldSpec, value: object, split_text: bool) -> FieldValue:
    return _validated(spec.name, value, spec.label)


def _prepare_list(spec: FieldSpec, value: object, split_text: bool) -> FieldValue:
    if isinstance(value, str) and split_text:
        value = [part for part in _LIST_SEPARATORS.split(value) if part]
    if not isinstance(value, list):
        raise InvalidInputError(
            f"The {spec.label} must be a list of values, not {_kind_of(value)}.",
            hint=f"Send {spec.name} as a list of strings.",
        )
    return _validated(spec.name, value, spec.label)


def _prepare_choice(spec: FieldSpec, value: object, split_text: bool) -> FieldValue:
    if isinstance(value, str):
        wanted = value.strip().lower()
        value = next(
            (c for c in spec.choices if wanted in (c, spec.choice_label(c).lower())), value
        )
        if value not in spec.choices:
            raise InvalidInputError(
                f"{value!r} is not a {spec.label}.",
                hint=f"Choose one of: {', '.join(spec.choices)}.",
            )
    return _validated(spec.name, value, spec.label)


_PREPARE = {
    FieldKind.TEXT: _prepare_text,
    FieldKind.LIST: _prepare_list,
    FieldKind.CHOICE: _prepare_choice,
}


def _validated(name: str, value: object, label: str) -> FieldValue:
    if value is None:
        raise InvalidInputError(f"The {label} needs a value.")
    try:
        parsed = getattr(PartialStreamConfig.model_validate({name: value}), name)
    except ValidationError as exc:
        problems = "; ".join(dict.fromkeys(_message(error) for error in exc.errors()))
        raise InvalidInputError(
            f"Invalid {label}: {problems}.",
            hint=f"Correct the {label} and try again.",
        ) from exc
    if isinstance(parsed, StrEnum):
        return parsed.value
    assert isinstance(parsed, str | list)
    return parsed


_PLAIN: dict[str, Callable[[Mapping[str, object]], str]] = {
    # pydantic's wording ("String should have at most 120 characters") is not ours.
    "string_too_long": lambda ctx: f"it is longer than {ctx.get('max_length')} characters",
    "string_too_short": lambda ctx: (
        "it is empty"
        if ctx.get("min_length") == 1
        else f"it is shorter than {ctx.get('min_length')} characters"
    ),
    "too_long": lambda ctx: f"it has more than {ctx.get('max_length')} entries",
    "too_short": lambda ctx: f"it needs at least {ctx.get('min_length')} entries",
    "string_type": lambda ctx: "it must be text",
    "list_type": lambda ctx: "it must be a list",
}


def _message(error: object) -> str:
    """One validation error in the product's words: our own validators' messages as they
    are, pydantic's constraints rephrased, anything else as not valid."""
    assert isinstance(error, dict)
    kind = str(error.get("type", ""))
    if kind == "value_error":
        return str(error.get("msg", "")).removeprefix("Value error, ")
    context = error.get("ctx")
    plain = _PLAIN.get(kind)
    if plain is None:
        return "it is not a valid value"
    return plain(context if isinstance(context, Mapping) else {})


def _kind_of(value: object) -> str:
    names = {str: "text", int: "a number", float: "a number", bool: "true/false", dict: "an object"}
    return names.get(type(value), type(value).__name__)


for _spec in (
    FieldSpec("purpose", FieldKind.TEXT, "purpose", "What is this stream for?"),
    FieldSpec(
        "business_goals",
        FieldKind.LIST,
        "goals",
        "What should this stream help you do?",
    ),
    FieldSpec(
        "expected_outcomes",
        FieldKind.TEXT,
        "expected outcomes",
        "What will you do with each report?",
    ),
    FieldSpec("stream_name", FieldKind.TEXT, "stream name", "What should the stream be called?"),
    FieldSpec(
        "stream_type",
        FieldKind.CHOICE,
        "stream type",
        "What kind of stream is it?",
        choices=tuple(t.value for t in StreamType),
        choice_labels=STREAM_TYPE_LABELS,
    ),
    FieldSpec(
        "focus_areas",
        FieldKind.LIST,
        "focus areas",
        "Which research areas or topics should it focus on?",
    ),
    FieldSpec("keywords", FieldKind.LIST, "keywords", "Which search terms should it look for?"),
    FieldSpec(
        "competitors",
        FieldKind.LIST,
        "organisations",
        "Which organisations should it follow: companies, universities, labs or research "
        "groups? (optional: you can skip this)",
    ),
    FieldSpec(
        "report_frequency",
        FieldKind.CHOICE,
        "report frequency",
        "How often should it report?",
        choices=tuple(f.value for f in ReportFrequency),
        choice_labels=REPORT_FREQUENCY_LABELS,
    ),
):
    register_field(_spec)
