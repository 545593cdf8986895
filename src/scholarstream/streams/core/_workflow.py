"""The creation workflow's steps and the transitions between them (seed 000, section 1).

``exploration`` is the conversational hub, one data step collects each field, ``review``
confirms, ``complete`` ends. A data step is *completed* when its field has a value or the
user skipped it (optional fields only).

Valid transitions:

=============  ===========================================================================
from           to
=============  ===========================================================================
exploration    exploration, any uncompleted data step, review (all required fields done)
a data step    exploration, any *other* uncompleted data step, review (required done)
review         exploration, complete
complete       nothing (the workflow ended)
=============  ===========================================================================
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass
from enum import StrEnum

from scholarstream.streams.core._config import (
    COLLECTED_FIELDS,
    OPTIONAL_FIELDS,
    PartialStreamConfig,
)
from scholarstream.streams.core._fields import FieldKind, field_spec

__all__ = [
    "DATA_STEPS",
    "NON_DATA_STEPS",
    "OPTIONAL_FIELDS",
    "STEP_TO_FIELD_MAPPING",
    "StepGuidance",
    "WorkflowStep",
    "all_required_complete",
    "completed_steps",
    "get_available_next_steps",
    "is_data_step",
    "step_for_field",
    "step_guidance",
    "step_label",
]


class WorkflowStep(StrEnum):
    EXPLORATION = "exploration"
    PURPOSE = "purpose"
    BUSINESS_GOALS = "business_goals"
    EXPECTED_OUTCOMES = "expected_outcomes"
    STREAM_NAME = "stream_name"
    STREAM_TYPE = "stream_type"
    FOCUS_AREAS = "focus_areas"
    KEYWORDS = "keywords"
    COMPETITORS = "competitors"
    REPORT_FREQUENCY = "report_frequency"
    REVIEW = "review"
    COMPLETE = "complete"


STEP_TO_FIELD_MAPPING: dict[WorkflowStep, str] = {
    WorkflowStep(name): name for name in COLLECTED_FIELDS
}
DATA_STEPS: tuple[WorkflowStep, ...] = tuple(STEP_TO_FIELD_MAPPING)
NON_DATA_STEPS: tuple[WorkflowStep, ...] = (
    WorkflowStep.EXPLORATION,
    WorkflowStep.REVIEW,
    WorkflowStep.COMPLETE,
)
_FIELD_TO_STEP = {name: step for step, name in STEP_TO_FIELD_MAPPING.items()}
_REQUIRED_STEPS = tuple(s for s in DATA_STEPS if STEP_TO_FIELD_MAPPING[s] not in OPTIONAL_FIELDS)


def is_data_step(step: WorkflowStep) -> bool:
    return step in STEP_TO_FIELD_MAPPING


def step_for_field(name: str) -> WorkflowStep | None:
    return _FIELD_TO_STEP.get(name)


def completed_steps(
    config: PartialStreamConfig, skipped: Iterable[WorkflowStep] = ()
) -> list[WorkflowStep]:
    """Data steps whose field has a value, or that were skipped; in workflow order."""
    done = {_FIELD_TO_STEP[name] for name in config.filled() if name in _FIELD_TO_STEP}
    done.update(s for s in skipped if is_data_step(s))
    return [s for s in DATA_STEPS if s in done]


def all_required_complete(completed: Collection[WorkflowStep]) -> bool:
    return all(step in completed for step in _REQUIRED_STEPS)


def _from_exploration(completed: Collection[WorkflowStep]) -> list[WorkflowStep]:
    return [WorkflowStep.EXPLORATION, *_open_data_steps(completed), *_review(completed)]


def _from_data_step(
    current: WorkflowStep, completed: Collection[WorkflowStep]
) -> list[WorkflowStep]:
    others = [s for s in _open_data_steps(completed) if s != current]
    return [WorkflowStep.EXPLORATION, *others, *_review(completed)]


def _open_data_steps(completed: Collection[WorkflowStep]) -> list[WorkflowStep]:
    return [s for s in DATA_STEPS if s not in completed]


def _review(completed: Collection[WorkflowStep]) -> list[WorkflowStep]:
    return [WorkflowStep.REVIEW] if all_required_complete(completed) else []


def get_available_next_steps(
    current: WorkflowStep, completed: Collection[WorkflowStep]
) -> list[WorkflowStep]:
    """The steps the workflow may go to from ``current``, given the completed data steps."""
    if is_data_step(current):
        return _from_data_step(current, completed)
    return _NON_DATA_TRANSITIONS[current](completed)


def _from_review(completed: Collection[WorkflowStep]) -> list[WorkflowStep]:
    return [WorkflowStep.EXPLORATION, WorkflowStep.COMPLETE]


def _from_complete(completed: Collection[WorkflowStep]) -> list[WorkflowStep]:
    return []


_NON_DATA_TRANSITIONS: dict[
    WorkflowStep, Callable[[Collection[WorkflowStep]], list[WorkflowStep]]
] = {
    WorkflowStep.EXPLORATION: _from_exploration,
    WorkflowStep.REVIEW: _from_review,
    WorkflowStep.COMPLETE: _from_complete,
}


@dataclass(frozen=True)
class StepGuidance:
    """What a step is for, as the prompts and the rule-based guide describe it."""

    step: WorkflowStep
    description: str
    field: str | None = None
    kind: FieldKind | None = None
    choices: tuple[str, ...] = ()
    optional: bool = False


_NON_DATA_GUIDANCE = {
    WorkflowStep.EXPLORATION: "Conversational hub: gather context and ask questions.",
    WorkflowStep.REVIEW: "The user confirms the configuration before the stream is created.",
    WorkflowStep.COMPLETE: "The workflow is finished: the stream has been created.",
}


_STEP_LABELS = {
    WorkflowStep.EXPLORATION: "getting started",
    WorkflowStep.REVIEW: "ready for review",
    WorkflowStep.COMPLETE: "done",
}


def step_label(step: WorkflowStep) -> str:
    """A step as the user reads it: its field's label ("goals"), or what it is for."""
    name = STEP_TO_FIELD_MAPPING.get(step)
    return field_spec(name).label if name else _STEP_LABELS[step]


def step_guidance(step: WorkflowStep) -> StepGuidance:
    name = STEP_TO_FIELD_MAPPING.get(step)
    if name is None:
        return StepGuidance(step, _NON_DATA_GUIDANCE[step])
    spec = field_spec(name)
    return StepGuidance(
        step,
        spec.question,
        field=name,
        kind=spec.kind,
        choices=spec.choices,
        optional=spec.optional,
    )
