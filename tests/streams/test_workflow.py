"""The workflow of seed 000, section 1: steps, classification and valid transitions."""

from __future__ import annotations

import pytest

from scholarstream.streams import (
    DATA_STEPS,
    NON_DATA_STEPS,
    OPTIONAL_FIELDS,
    STEP_TO_FIELD_MAPPING,
    PartialStreamConfig,
    WorkflowStep,
    completed_steps,
    get_available_next_steps,
    is_data_step,
    step_guidance,
)
from tests.streams.script import FULL_CONFIG

S = WorkflowStep
REQUIRED_DONE = [s for s in DATA_STEPS if s is not S.COMPETITORS]


def test_the_steps_are_the_seeds() -> None:
    assert [s.value for s in WorkflowStep] == [
        "exploration",
        "purpose",
        "business_goals",
        "expected_outcomes",
        "stream_name",
        "stream_type",
        "focus_areas",
        "keywords",
        "competitors",
        "report_frequency",
        "review",
        "complete",
    ]
    assert NON_DATA_STEPS == (S.EXPLORATION, S.REVIEW, S.COMPLETE)
    assert all(is_data_step(s) for s in DATA_STEPS)
    assert not any(is_data_step(s) for s in NON_DATA_STEPS)
    assert {s.value: f for s, f in STEP_TO_FIELD_MAPPING.items()} == {
        s.value: s.value for s in DATA_STEPS
    }
    assert sorted(OPTIONAL_FIELDS) == ["competitors"]


def test_exploration_leads_to_itself_and_every_uncompleted_data_step() -> None:
    assert get_available_next_steps(S.EXPLORATION, []) == [S.EXPLORATION, *DATA_STEPS]
    done = [S.PURPOSE, S.STREAM_TYPE]
    assert get_available_next_steps(S.EXPLORATION, done) == [
        S.EXPLORATION,
        *(s for s in DATA_STEPS if s not in done),
    ]


def test_review_is_offered_once_every_required_field_is_complete() -> None:
    almost = REQUIRED_DONE[:-1]
    assert S.REVIEW not in get_available_next_steps(S.EXPLORATION, almost)
    assert get_available_next_steps(S.EXPLORATION, REQUIRED_DONE) == [
        S.EXPLORATION,
        S.COMPETITORS,
        S.REVIEW,
    ]
    assert get_available_next_steps(S.KEYWORDS, REQUIRED_DONE) == [
        S.EXPLORATION,
        S.COMPETITORS,
        S.REVIEW,
    ]


def test_a_data_step_leads_to_exploration_other_uncompleted_steps_and_review() -> None:
    # Seed, scenario D: at purpose with nothing entered.
    assert get_available_next_steps(S.PURPOSE, []) == [
        S.EXPLORATION,
        *(s for s in DATA_STEPS if s is not S.PURPOSE),
    ]
    # Seed, scenario C: at keywords, everything before it entered.
    done = [S.PURPOSE, S.BUSINESS_GOALS, S.EXPECTED_OUTCOMES, S.STREAM_NAME, S.STREAM_TYPE]
    done.append(S.FOCUS_AREAS)
    assert get_available_next_steps(S.KEYWORDS, done) == [
        S.EXPLORATION,
        S.COMPETITORS,
        S.REPORT_FREQUENCY,
    ]


def test_review_leads_to_exploration_or_complete_and_complete_leads_nowhere() -> None:
    assert get_available_next_steps(S.REVIEW, REQUIRED_DONE) == [S.EXPLORATION, S.COMPLETE]
    assert get_available_next_steps(S.COMPLETE, REQUIRED_DONE) == []


@pytest.mark.parametrize("step", [s for s in WorkflowStep if s is not S.COMPLETE])
@pytest.mark.parametrize("done", [[], REQUIRED_DONE, list(DATA_STEPS)])
def test_exploration_is_always_available_except_from_complete(
    step: WorkflowStep, done: list[WorkflowStep]
) -> None:
    assert S.EXPLORATION in get_available_next_steps(step, done)


def test_completed_steps_come_from_the_config_and_skips() -> None:
    config = PartialStreamConfig.model_validate(
        {"purpose": "Follow GLP-1 agonists", "keywords": ["semaglutide"]}
    )
    assert completed_steps(config) == [S.PURPOSE, S.KEYWORDS]
    assert completed_steps(config, [S.COMPETITORS]) == [S.PURPOSE, S.KEYWORDS, S.COMPETITORS]
    full = PartialStreamConfig.model_validate({**FULL_CONFIG, "competitors": None})
    assert S.REVIEW in get_available_next_steps(S.EXPLORATION, completed_steps(full))


def test_step_guidance_describes_each_step() -> None:
    stream_type = step_guidance(S.STREAM_TYPE)
    assert stream_type.field == "stream_type"
    assert stream_type.choices == (
        "competitive",
        "regulatory",
        "clinical",
        "market",
        "scientific",
        "mixed",
    )
    assert step_guidance(S.COMPETITORS).optional
    assert step_guidance(S.REVIEW).field is None
