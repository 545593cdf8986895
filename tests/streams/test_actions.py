"""User actions and inline edits, processed before the guide is asked (seed 000, sections
2-4), and bad input: one clear error event, nothing already entered lost."""

from __future__ import annotations

from typing import Any

import pytest

from scholarstream.errors import InvalidInputError
from scholarstream.streams import (
    OptionSelected,
    OptionsSelected,
    SkipStep,
    TextInput,
    UserAction,
    WorkflowStep,
    prepare_turn,
    user_action_adapter,
)
from tests.streams.script import FULL_CONFIG, GuideScript, answer, at_step, run_turn

S = WorkflowStep


def test_the_actions_parse_from_the_seeds_json() -> None:
    assert user_action_adapter.validate_python(
        {"type": "option_selected", "target_field": "stream_type", "selected_value": "competitive"}
    ) == OptionSelected(target_field="stream_type", selected_value="competitive")
    assert user_action_adapter.validate_python(
        {
            "type": "options_selected",
            "target_field": "focus_areas",
            "selected_values": ["Oncology", "Cardiology"],
        }
    ) == OptionsSelected(target_field="focus_areas", selected_values=["Oncology", "Cardiology"])
    assert user_action_adapter.validate_python({"type": "text_input"}) == TextInput()
    assert user_action_adapter.validate_python(
        {"type": "skip_step", "target_field": "competitors"}
    ) == SkipStep(target_field="competitors")


def test_option_selected_for_the_current_step_fills_it_and_completes_the_step() -> None:
    request = prepare_turn(
        at_step("stream_type"),
        "competitive",
        OptionSelected(target_field="stream_type", selected_value="competitive"),
    )
    assert request.config.stream_type == "competitive"
    assert request.step_just_completed
    assert S.STREAM_TYPE not in request.valid_next_steps
    assert "The field 'stream_type' has been populated." in request.system_prompt
    assert "User action: Selected 'competitive' for stream_type." in request.user_prompt


def test_option_selected_for_another_field_edits_it_without_completing_the_step() -> None:
    session = at_step("keywords", purpose="Follow GLP-1 agonists")
    request = prepare_turn(
        session, "", OptionSelected(target_field="purpose", selected_value="Monitor regulation")
    )
    assert request.config.purpose == "Monitor regulation"
    assert not request.step_just_completed
    assert "IMPORTANT" not in request.system_prompt


def test_option_selected_in_exploration_completes_as_section_3_1_says() -> None:
    request = prepare_turn(
        at_step("exploration"),
        "",
        OptionSelected(target_field="report_frequency", selected_value="Monthly"),
    )
    assert request.config.report_frequency == "monthly"
    assert request.step_just_completed
    assert "The field 'report_frequency' has been populated." in request.system_prompt
    assert S.REPORT_FREQUENCY not in request.valid_next_steps


def test_options_selected_fills_a_list_field() -> None:
    request = prepare_turn(
        at_step("focus_areas"),
        "Continue with selected areas",
        OptionsSelected(target_field="focus_areas", selected_values=["Oncology", "Cardiology"]),
    )
    assert request.config.focus_areas == ["Oncology", "Cardiology"]
    assert request.step_just_completed


def test_options_selected_in_exploration_completes_as_section_3_1_says() -> None:
    """Seed 000, 3.1: options selected while in exploration populate the field and mark a
    step just completed; the field's step leaves the valid next steps."""
    session = at_step("exploration", purpose="Track GLP-1 agonists")
    request = prepare_turn(
        session,
        "Continue with selected areas",
        OptionsSelected(target_field="focus_areas", selected_values=["Obesity", "Cardiology"]),
    )
    assert request.config.focus_areas == ["Obesity", "Cardiology"]
    assert request.config.purpose == "Track GLP-1 agonists"
    assert request.step_just_completed
    assert request.current_step is S.EXPLORATION
    assert "The field 'focus_areas' has been populated." in request.system_prompt
    assert S.FOCUS_AREAS not in request.valid_next_steps
    assert S.PURPOSE not in request.valid_next_steps
    assert S.KEYWORDS in request.valid_next_steps
    assert "User action: Selected" in request.user_prompt and "Cardiology" in request.user_prompt


def test_options_selected_for_another_field_edits_it_without_completing_the_step() -> None:
    """Seed 000, 3.2: options for a field other than the current step's update that field
    and do not complete the current step, which stays a valid next step."""
    session = at_step("keywords", purpose="Track GLP-1 agonists", focus_areas=["Obesity"])
    request = prepare_turn(
        session,
        "",
        OptionsSelected(target_field="focus_areas", selected_values=["Oncology", "Cardiology"]),
    )
    assert request.config.focus_areas == ["Oncology", "Cardiology"]
    assert request.config.keywords is None
    assert not request.step_just_completed
    assert request.current_step is S.KEYWORDS
    assert "IMPORTANT" not in request.system_prompt
    assert "has been populated" not in request.system_prompt
    assert S.FOCUS_AREAS not in request.valid_next_steps  # filled now
    assert S.COMPETITORS in request.valid_next_steps
    # Also for a single-value field other than the current step's.
    other = prepare_turn(
        session, "", OptionsSelected(target_field="stream_type", selected_values=["regulatory"])
    )
    assert other.config.stream_type == "regulatory"
    assert not other.step_just_completed


def test_a_single_option_for_a_list_field_is_a_one_item_list() -> None:
    request = prepare_turn(
        at_step("keywords"), "", OptionSelected(target_field="keywords", selected_value="a, b")
    )
    assert request.config.keywords == ["a, b"]


def test_options_selected_for_a_single_value_field_takes_exactly_one() -> None:
    request = prepare_turn(
        at_step("stream_type"),
        "",
        OptionsSelected(target_field="stream_type", selected_values=["clinical"]),
    )
    assert request.config.stream_type == "clinical"
    with pytest.raises(InvalidInputError, match="takes one value; 2 were selected"):
        prepare_turn(
            at_step("stream_type"),
            "",
            OptionsSelected(target_field="stream_type", selected_values=["clinical", "market"]),
        )


def test_text_input_changes_nothing_before_the_guide() -> None:
    session = at_step("purpose", stream_type="clinical")
    request = prepare_turn(session, "Track trials in NASH", TextInput())
    assert request.config == session.config
    assert not request.step_just_completed
    assert prepare_turn(session, "Track trials in NASH", None).action == TextInput()


def test_skip_an_optional_field() -> None:
    session = at_step("competitors", **{k: v for k, v in FULL_CONFIG.items() if k != "competitors"})
    request = prepare_turn(session, "", SkipStep(target_field="competitors"))
    assert request.skipped_steps == (S.COMPETITORS,)
    assert request.step_just_completed
    assert request.valid_next_steps == (S.EXPLORATION, S.REVIEW)
    assert "The optional field 'competitors' was skipped." in request.system_prompt


@pytest.mark.parametrize("said", ["none", "None.", "no", "n/a", "Skip", "nobody", "no thanks!"])
def test_typing_none_at_an_optional_step_skips_it(said: str) -> None:
    """Never an organisation called "none": the step is skipped, as the button does."""
    session = at_step("competitors", **{k: v for k, v in FULL_CONFIG.items() if k != "competitors"})
    request = prepare_turn(session, said, TextInput())
    assert request.action == SkipStep(target_field="competitors")
    assert request.skipped_steps == (S.COMPETITORS,)
    assert request.config.competitors is None


def test_none_at_a_required_step_or_inside_a_list_is_text() -> None:
    purpose = at_step("purpose", stream_type="clinical")
    assert prepare_turn(purpose, "none", TextInput()).action == TextInput()
    organisations = at_step("competitors")
    said = "none of the big ones, only Novo Nordisk"
    assert prepare_turn(organisations, said, TextInput()).action == TextInput()


async def test_a_skipped_step_stays_skipped_in_the_next_session() -> None:
    script = GuideScript(answer("How often should it report?", next_step="report_frequency"))
    turn = await run_turn(at_step("competitors"), "", SkipStep(), script.guide())
    assert turn.session.skipped_steps == [S.COMPETITORS]
    assert turn.session.current_step is S.REPORT_FREQUENCY
    assert S.COMPETITORS in turn.result.completed_steps
    # The conversation says what the user did in their words, never the field's name.
    assert turn.session.history[-2].action == "Skipped organisations."
    assert "User action: Skipped competitors." in script.user_prompt


BAD_INPUT: list[tuple[str, UserAction, str, str]] = [
    ("purpose", SkipStep(), "invalid_input", "This field is required: the purpose cannot be"),
    ("keywords", SkipStep(target_field="competitors"), "invalid_input", "Only the current step"),
    ("exploration", SkipStep(), "invalid_input", "not accepted at the exploration step"),
    (
        "stream_type",
        OptionSelected(target_field="colour", selected_value="blue"),
        "invalid_input",
        "There is no stream field 'colour'",
    ),
    (
        "stream_type",
        OptionSelected(target_field="stream_type", selected_value="banana"),
        "invalid_input",
        "'banana' is not a stream type",
    ),
    (
        "focus_areas",
        OptionsSelected(target_field="focus_areas", selected_values=[]),
        "invalid_input",
        "Invalid focus areas: must have at least one item",
    ),
    (
        "review",
        OptionSelected(target_field="stream_type", selected_value="clinical"),
        "invalid_input",
        "not accepted at the review step",
    ),
    ("purpose", TextInput(), "invalid_input", "The message is empty"),
    ("complete", TextInput(), "conflict", "already been created"),
]


@pytest.mark.parametrize(("step", "action", "code", "message"), BAD_INPUT)
async def test_bad_input_is_one_error_event_and_loses_nothing(
    step: str, action: UserAction, code: str, message: str
) -> None:
    session = at_step(step, stream_type="market", keywords=["semaglutide"])
    before = session.model_dump()
    script = GuideScript()  # never asked
    text = "" if isinstance(action, TextInput) and code == "invalid_input" else "hello"
    turn = await run_turn(session, text, action, script.guide())
    assert len(turn.events) == 1
    assert turn.error.code == code
    assert message in turn.error.message
    assert turn.error.hint
    assert session.model_dump() == before
    assert script.instructions == []


async def test_inline_edits_travel_with_the_next_message() -> None:
    """Seed: an inline edit makes no request; the edited config comes with the next one."""
    script = GuideScript(
        answer("Noted the new name. Which keywords?", next_step="keywords"),
    )
    session = at_step("stream_type", purpose="Follow GLP-1 agonists", stream_name="Old")
    turn = await run_turn(
        session,
        "competitive",
        OptionSelected(target_field="stream_type", selected_value="competitive"),
        script.guide(),
        edits={"stream_name": "GLP-1 Watch", "focus_areas": "Obesity, Diabetes", "purpose": None},
    )
    config = turn.session.config
    assert config.stream_name == "GLP-1 Watch"
    assert config.focus_areas == ["Obesity", "Diabetes"]
    assert config.purpose is None
    assert config.stream_type == "competitive"
    sent = script.seen[-1][-1].parts[-1]
    assert '"stream_name": "GLP-1 Watch"' in str(getattr(sent, "content", ""))
    # The edit completed focus_areas, so it is no longer a valid next step.
    assert "focus_areas" not in script.system_prompt.split("Valid next steps")[1].split("\n")[0]


@pytest.mark.parametrize(
    ("edits", "message"),
    [
        ({"stream_type": "banana"}, "'banana' is not a stream type"),
        ({"colour": "blue"}, "There is no editable stream field 'colour'"),
        ({"keywords": []}, "Invalid keywords"),
    ],
)
async def test_a_bad_inline_edit_is_refused_and_nothing_changes(
    edits: dict[str, Any], message: str
) -> None:
    session = at_step("purpose", stream_type="market")
    before = session.model_dump()
    turn = await run_turn(session, "hello", None, GuideScript().guide(), edits=edits)
    assert message in turn.error.message
    assert session.model_dump() == before
