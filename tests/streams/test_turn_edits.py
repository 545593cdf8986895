"""A turn's inline edits (the preview panel's) are the user's: whatever the guide extracts
in that same turn, a model or the rules, never replaces a field the user edited in it; the
guide may fill the other fields. And a turn's edits clear the optional organisations with
``null``, ``[]`` or ``""``, as ``PATCH /streams/{id}`` does."""

from __future__ import annotations

import re
from typing import Any

import pytest

from scholarstream.streams import (
    CreationSession,
    GuideTurnResult,
    RuleGuide,
    TextInput,
    WorkflowStep,
    new_session,
)
from tests.streams.script import FULL_CONFIG, GuideScript, answer, at_step, run_turn

S = WorkflowStep
EDITS: dict[str, Any] = {
    "stream_name": "Canine otitis",
    "keywords": ["otitis", "ear disease", "spaniel"],
    "report_frequency": "weekly",
}
PLACEHOLDERS: dict[str, Any] = {
    "stream_name": "example stream name",
    "keywords": ["example keywords"],
    "report_frequency": "daily",
}
INTERNALS = re.compile(r"pydantic|Traceback|ValidationError|\{'|\bNone\b|extracted_data")


def _kept_the_edits(result: GuideTurnResult) -> None:
    config = result.updated_config
    assert config.stream_name == "Canine otitis"
    assert config.keywords == ["otitis", "ear disease", "spaniel"]
    assert config.report_frequency == "weekly"
    assert result.session.config == config


async def test_the_models_extraction_never_replaces_what_the_user_edited_in_the_turn() -> None:
    script = GuideScript(
        answer(
            "I filled in the stream for you.",
            extracted_data={**PLACEHOLDERS, "purpose": "Follow canine otitis research"},
            next_step="exploration",
        )
    )
    turn = await run_turn(
        new_session(), "Please use these values", TextInput(), script.guide(), edits=EDITS
    )
    result = turn.result
    _kept_the_edits(result)
    # The model may fill the fields the user did not edit.
    assert result.updated_config.purpose == "Follow canine otitis research"
    # What was not used is said (for the API and the log), in plain words.
    assert len(result.warnings) == 3, result.warnings
    for warning in result.warnings:
        assert "kept the value the user entered" in warning, warning
        assert INTERNALS.search(warning) is None, warning
    # The model is told which fields the user edited, with the configuration.
    assert "User edited: stream_name, keywords, report_frequency" in script.user_prompt


async def test_a_model_echoing_the_edited_values_is_no_warning() -> None:
    script = GuideScript(answer("Thanks.", extracted_data=dict(EDITS), next_step="exploration"))
    turn = await run_turn(
        new_session(), "Please use these values", TextInput(), script.guide(), edits=EDITS
    )
    _kept_the_edits(turn.result)
    assert turn.result.warnings == []


async def test_a_field_the_user_cleared_stays_cleared_whatever_the_model_extracts() -> None:
    script = GuideScript(
        answer(
            "Noted.",
            extracted_data={"purpose": "Something else", "expected_outcomes": "A digest"},
            next_step="exploration",
        )
    )
    session = at_step("exploration", purpose="Follow canine otitis research")
    turn = await run_turn(session, "hmm", TextInput(), script.guide(), edits={"purpose": None})
    config = turn.result.updated_config
    assert config.purpose is None
    assert config.expected_outcomes == "A digest"


async def test_a_later_turn_without_edits_lets_the_model_change_the_field() -> None:
    """The rule is about one turn: a field edited earlier can be changed by words later."""
    script = GuideScript(
        answer("Renamed.", extracted_data={"stream_name": "Ear Disease Watch"}),
    )
    session = at_step("exploration", stream_name="Canine otitis")
    turn = await run_turn(session, "Call it Ear Disease Watch", TextInput(), script.guide())
    assert turn.result.updated_config.stream_name == "Ear Disease Watch"
    assert turn.result.warnings == []


async def test_the_rule_guide_does_not_read_the_typed_text_into_an_edited_field() -> None:
    session = at_step(
        "keywords", **{k: v for k, v in FULL_CONFIG.items() if k not in ("keywords",)}
    )
    turn = await run_turn(session, "Please use these values", None, RuleGuide(), edits=EDITS)
    result = turn.result
    _kept_the_edits(result)
    assert "Please use these values" not in result.message
    assert result.warnings == []
    assert result.step_just_completed  # the keywords step, answered in the panel
    # Every required field has a value: the rule guide goes on to the review.
    assert result.next_step is S.REVIEW


async def test_the_rule_guides_field_command_loses_to_an_edit_of_the_same_field() -> None:
    session = at_step("exploration", purpose="Follow canine otitis research")
    turn = await run_turn(session, "stream name: Something Else", None, RuleGuide(), edits=EDITS)
    _kept_the_edits(turn.result)
    assert "Something Else" not in turn.result.message


async def test_the_rule_guide_fills_what_the_user_did_not_edit() -> None:
    turn = await run_turn(
        new_session(),
        "I want to follow research on otitis and ear disease in dogs",
        None,
        RuleGuide(),
        edits={"stream_name": "Canine otitis"},
    )
    config = turn.result.updated_config
    assert config.stream_name == "Canine otitis"
    assert config.purpose == "I want to follow research on otitis and ear disease in dogs"
    assert config.focus_areas


@pytest.mark.parametrize("cleared", [None, [], ""])
async def test_a_turns_edit_clears_the_organisations_as_patch_does(cleared: Any) -> None:
    session = at_step("keywords", **{k: v for k, v in FULL_CONFIG.items() if k != "keywords"})
    turn = await run_turn(
        session,
        "Please use these values",
        None,
        RuleGuide(),
        edits={"keywords": ["otitis"], "competitors": cleared},
    )
    result = turn.result
    assert result.updated_config.competitors is None
    assert result.updated_config.keywords == ["otitis"]
    # Cleared, the organisations are asked again (and may be skipped): review is open.
    assert result.next_step is S.COMPETITORS
    assert S.REVIEW in result.available_next_steps


async def test_a_required_list_is_still_not_cleared_by_an_empty_list() -> None:
    session = CreationSession.model_validate({"current_step": "purpose", "config": {}})
    turn = await run_turn(session, "hello", None, RuleGuide(), edits={"keywords": []})
    assert "keywords" in turn.error.message.lower()
    assert turn.error.hint
