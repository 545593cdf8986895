"""The per-step system prompt of seed 000, section 5, and the user prompt."""

from __future__ import annotations

from scholarstream.streams import (
    PartialStreamConfig,
    WorkflowStep,
    build_system_prompt,
    build_user_prompt,
    step_guidance,
)

S = WorkflowStep


def _prompt(step: WorkflowStep, *, completed: bool = False, field: str | None = None) -> str:
    return build_system_prompt(
        current_step=step,
        step_guidance=step_guidance(step),
        valid_next_steps=[S.EXPLORATION, S.KEYWORDS],
        step_just_completed=completed,
        field_name=field,
    )


def test_every_prompt_has_the_step_the_valid_steps_the_rules_and_the_fields() -> None:
    prompt = _prompt(S.PURPOSE)
    assert prompt.startswith("You are an AI assistant helping users create research streams.")
    assert "Current Step: purpose\n" in prompt
    assert "Valid next steps you can transition to: exploration, keywords\n" in prompt
    assert '1. You can ONLY transition to steps in the "Valid next steps" list above' in prompt
    assert "**MODE: SUGGESTION** (use in data steps when you can provide options)" in prompt
    assert "- next_step: the step name (choose from the valid next steps list" in prompt
    assert '- competitors (list, optional; shown as "organisations")\n' in prompt
    assert prompt.rstrip().endswith(
        '- report_frequency (single-select: daily, weekly, biweekly, monthly; shown as "report '
        'frequency"; daily as "Daily", weekly as "Weekly", biweekly as "Every two weeks", '
        'monthly as "Monthly")'
    )


def test_the_prompt_asks_for_what_was_said_not_again_and_for_words_the_user_reads() -> None:
    prompt = _prompt(S.EXPLORATION)
    # What the user's words already answer is extracted, not asked for again.
    assert "5. Never ask for what the user already said" in prompt
    assert "organisations they want to follow -> competitors" in prompt
    # Academic and industry users alike; no field names or stored values in messages.
    assert "academic researchers and industry analysts alike" in prompt
    assert 'write "goals", not "business_goals"' in prompt
    assert "not the user's own sentence repeated" in prompt
    assert "never the user's role or affiliation" in prompt
    assert "therapeutic areas" not in prompt


def test_each_kind_of_step_has_its_own_context() -> None:
    exploration = _prompt(S.EXPLORATION)
    assert "You are in EXPLORATION mode" in exploration
    assert (
        "- When you have enough context to suggest options for a specific field → "
        "transition to that data step\n"
    ) in exploration
    assert "You are in REVIEW mode" in _prompt(S.REVIEW)
    data = _prompt(S.FOCUS_AREAS)
    assert "You are collecting the field: focus_areas" in data
    assert "EXPLORATION mode" not in data


def test_the_completion_context_appears_only_when_a_step_was_just_completed() -> None:
    assert "IMPORTANT" not in _prompt(S.STREAM_TYPE)
    prompt = _prompt(S.STREAM_TYPE, completed=True, field="stream_type")
    assert (
        "IMPORTANT: The user just completed the previous step by selecting an option.\n"
        "The field 'stream_type' has been populated.\n"
    ) in prompt


def test_the_user_prompt_carries_message_action_config_and_guidance() -> None:
    prompt = build_user_prompt(
        message="competitive",
        action_note="Selected 'competitive' for stream_type.",
        config=PartialStreamConfig.model_validate(
            {"stream_type": "competitive", "keywords": ["bremelanotide"]}
        ),
        skipped_steps=[S.COMPETITORS],
        step_guidance=step_guidance(S.STREAM_TYPE),
    )
    assert prompt.splitlines() == [
        "User message: competitive",
        "User action: Selected 'competitive' for stream_type.",
        'Current configuration: {"stream_type": "competitive", "keywords": ["bremelanotide"]}',
        "Skipped steps: competitors",
        "Current step: stream_type: What kind of stream is it? (one of: competitive, "
        "regulatory, clinical, market, scientific, mixed)",
    ]
