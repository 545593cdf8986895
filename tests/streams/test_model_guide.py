"""The guide with a scripted model: the seed's scenarios A-D and exploration example, the
streamed message, and the validation after the call (invalid transitions, unknown fields,
malformed values, malformed JSON)."""

from __future__ import annotations

from collections.abc import AsyncIterator

from pydantic_ai.exceptions import ModelHTTPError
from pydantic_ai.messages import ModelMessage, ModelRequest, RetryPromptPart, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, DeltaToolCalls, FunctionModel
from pydantic_ai.usage import RunUsage

from scholarstream.llm import ResolvedModel
from scholarstream.streams import (
    CreationSession,
    GuideMessage,
    GuideMode,
    GuideTurnResult,
    ModelGuide,
    OptionSelected,
    SkipStep,
    StreamConfig,
    TextInput,
    WorkflowStep,
    advance,
    guide_event_adapter,
)
from tests.streams.script import FULL_CONFIG, GuideScript, Malformed, Plain, answer, run_turn

DATA_STEPS = (
    "purpose",
    "business_goals",
    "expected_outcomes",
    "stream_name",
    "stream_type",
    "focus_areas",
    "keywords",
    "competitors",
    "report_frequency",
)

S = WorkflowStep
PALATIN_HISTORY = [
    GuideMessage(role="assistant", content="What would you like to monitor?"),
    GuideMessage(role="user", content="I want to monitor Palatin Technologies"),
    GuideMessage(role="assistant", content="What aspects of Palatin Technologies?"),
]


def _valid_steps_line(prompt: str) -> str:
    return next(line for line in prompt.splitlines() if line.startswith("Valid next steps"))


async def test_scenario_a_option_selected_and_context_for_the_next_field() -> None:
    script = GuideScript(
        answer(
            "Perfect! Since you mentioned Palatin Technologies earlier, here are some stream "
            "name suggestions:",
            mode="SUGGESTION",
            target_field="stream_name",
            suggestions=[
                "Palatin Competitive Intelligence",
                "Palatin Research Monitor",
                "Palatin Pipeline Tracker",
            ],
            next_step="stream_name",
        )
    )
    session = CreationSession(current_step=S.STREAM_TYPE, history=PALATIN_HISTORY)
    turn = await run_turn(
        session,
        "competitive",
        OptionSelected(target_field="stream_type", selected_value="competitive"),
        script.guide(),
    )
    result = turn.result
    assert result.next_step is S.STREAM_NAME
    assert result.updated_config.stream_type == "competitive"
    assert result.step_just_completed
    assert result.mode is GuideMode.SUGGESTION
    assert result.target_field == "stream_name"
    assert result.suggestions[2] == "Palatin Pipeline Tracker"
    assert result.warnings == []
    prompt = script.system_prompt
    assert "Current Step: stream_type" in prompt
    assert "The field 'stream_type' has been populated." in prompt
    assert "You are collecting the field: stream_type" in prompt
    assert _valid_steps_line(prompt) == (
        "Valid next steps you can transition to: exploration, purpose, business_goals, "
        "expected_outcomes, stream_name, focus_areas, keywords, competitors, report_frequency"
    )
    # The conversation before the turn went to the model (from the user's first message).
    sent = script.seen[0]
    assert "Palatin Technologies" in str(sent[0])
    assert len(sent) == 3


async def test_scenario_b_option_selected_but_the_model_needs_more_context() -> None:
    script = GuideScript(
        answer(
            "Great choice! Before we set up the rest of the stream, what business decisions "
            "will this competitive intelligence support?",
            next_step="exploration",
        )
    )
    turn = await run_turn(
        CreationSession(current_step=S.STREAM_TYPE),
        "competitive",
        OptionSelected(target_field="stream_type", selected_value="competitive"),
        script.guide(),
    )
    assert turn.result.next_step is S.EXPLORATION
    assert turn.result.mode is GuideMode.QUESTION
    assert turn.session.config.stream_type == "competitive"
    assert turn.session.current_step is S.EXPLORATION


async def test_scenario_c_text_updates_a_different_field() -> None:
    entered = {k: FULL_CONFIG[k] for k in list(FULL_CONFIG)[:6]}  # purpose ... focus_areas
    script = GuideScript(
        answer(
            'Got it, I\'ve updated the purpose to "Monitor regulatory changes". Now, back to '
            "keywords - based on regulatory focus, I recommend: FDA approval, clinical trial, "
            "regulatory pathway, compliance",
            extracted_data={"purpose": "Monitor regulatory changes"},
            next_step="exploration",
        )
    )
    session = CreationSession.model_validate({"current_step": "keywords", "config": entered})
    turn = await run_turn(
        session,
        "Actually, change the purpose to 'Monitor regulatory changes'",
        TextInput(),
        script.guide(),
    )
    result = turn.result
    assert result.updated_config.purpose == "Monitor regulatory changes"
    assert result.updated_config.focus_areas == entered["focus_areas"]
    assert not result.step_just_completed  # the purpose is not the keywords step's field
    assert result.next_step is S.EXPLORATION
    assert _valid_steps_line(script.system_prompt).endswith(
        "exploration, competitors, report_frequency"
    )


async def test_scenario_d_text_answers_the_current_field() -> None:
    goals = [
        "Inform study design decisions",
        "Track competitive landscape",
        "Identify new therapeutic indications",
        "Support partnership discussions",
    ]
    script = GuideScript(
        answer(
            "Excellent! Now let's define what business goals this will support:",
            mode="SUGGESTION",
            target_field="business_goals",
            options=goals,
            proposed_message="Continue with selected goals",
            extracted_data={"purpose": "Track competitive landscape for strategic planning"},
            next_step="business_goals",
        )
    )
    turn = await run_turn(
        CreationSession(current_step=S.PURPOSE),
        "I want to track competitive landscape for strategic planning",
        TextInput(),
        script.guide(),
    )
    result = turn.result
    assert result.updated_config.purpose == "Track competitive landscape for strategic planning"
    assert result.step_just_completed
    assert result.next_step is S.BUSINESS_GOALS
    assert result.options == goals
    assert result.proposed_message == "Continue with selected goals"
    assert S.PURPOSE in result.completed_steps


async def test_exploration_asks_a_question_when_it_needs_context() -> None:
    script = GuideScript(
        answer(
            "What aspects of Palatin Technologies are you interested in monitoring?",
            mode="QUESTION",
            next_step="exploration",
        )
    )
    turn = await run_turn(
        CreationSession(), "I want to monitor Palatin Technologies", None, script.guide()
    )
    assert turn.result.next_step is S.EXPLORATION
    assert "You are in EXPLORATION mode" in script.system_prompt
    assert "IMPORTANT" not in script.system_prompt
    assert [m.role for m in turn.session.history] == ["user", "assistant"]


async def test_the_message_streams_token_by_token_before_the_result() -> None:
    message = "What aspects of Palatin Technologies are you interested in monitoring?"
    script = GuideScript(answer(message, next_step="exploration"))
    turn = await run_turn(CreationSession(), "Palatin", None, script.guide())
    assert len(turn.deltas) > 5
    assert "".join(turn.deltas) == message
    assert isinstance(turn.events[-1], GuideTurnResult)
    for event in turn.events:  # every event is ready for an SSE encoder
        assert guide_event_adapter.validate_json(event.model_dump_json()) == event


async def test_the_model_moves_between_data_steps_and_exploration() -> None:
    """Exploration -> data step, data step -> data step, data step -> exploration."""
    script = GuideScript(
        answer(
            "Which areas?",
            mode="suggestion",
            target_field="focus_areas",
            options=["Obesity", "Sexual dysfunction"],
            next_step="focus_areas",
        ),
        answer(
            "Which keywords?",
            mode="suggestion",
            options=["bremelanotide", "setmelanotide"],
            next_step="keywords",
        ),
        answer("Tell me more about what you need.", next_step="exploration"),
    )
    guide = script.guide()
    first = await run_turn(CreationSession(), "Melanocortin drugs for obesity", None, guide)
    assert first.session.current_step is S.FOCUS_AREAS
    second = await run_turn(
        first.session,
        "",
        OptionSelected(target_field="focus_areas", selected_value="Obesity"),
        guide,
    )
    assert second.session.current_step is S.KEYWORDS
    assert second.result.target_field == "keywords"  # inferred from the step gone to
    third = await run_turn(second.session, "hmm, not sure", None, guide)
    assert third.session.current_step is S.EXPLORATION
    assert third.session.config.focus_areas == ["Obesity"]


async def test_invalid_transitions_keep_the_current_step() -> None:
    script = GuideScript(
        answer("Let's review.", next_step="review"),  # required fields missing
        answer("Done!", next_step="complete"),  # not from a data step
        answer("Onwards.", next_step="purpose"),  # the current step itself
        answer("Onwards.", next_step="budget"),  # not a step
        answer("Staying.", next_step=None),
    )
    guide = script.guide()
    session = CreationSession(current_step=S.PURPOSE)
    for _ in range(5):
        turn = await run_turn(session, "some text", None, guide)
        assert turn.result.next_step is S.PURPOSE
        assert turn.session.current_step is S.PURPOSE
    invalid = await run_turn(
        session, "x", None, GuideScript(answer("Review!", next_step="review")).guide()
    )
    assert invalid.result.warnings == [
        "Stayed at purpose: review is not a valid next step from there."
    ]


async def test_an_invalid_next_step_from_exploration_stays_in_exploration() -> None:
    """Seed 000, 3.1 (exploration): a next step outside the valid list, or none, stays in
    exploration; what was entered is kept and nothing is created."""
    entered = {k: FULL_CONFIG[k] for k in ("purpose", "stream_type")}
    proposals: list[tuple[str | None, str | None]] = [
        ("review", "Stayed at exploration: review is not a valid next step from there."),
        ("complete", "Stayed at exploration: complete is not a valid next step from there."),
        ("stream_type", "Stayed at exploration: stream_type is not a valid next step from there."),
        ("budget", "Stayed at exploration: 'budget' is not a workflow step."),
        (None, None),
    ]
    for proposed, warning in proposals:
        script = GuideScript(answer("Tell me more.", next_step=proposed))
        session = CreationSession.model_validate({"current_step": "exploration", "config": entered})
        turn = await run_turn(session, "hmm", None, script.guide())
        assert turn.result.next_step is S.EXPLORATION, proposed
        assert turn.session.current_step is S.EXPLORATION, proposed
        assert turn.result.warnings == ([warning] if warning else []), proposed
        assert turn.result.updated_config.model_dump(exclude_none=True) == entered
        assert turn.result.stream is None
        valid = _valid_steps_line(script.system_prompt)
        assert valid.endswith(
            "exploration, "
            + ", ".join(
                step.value for step in S if step.value in DATA_STEPS and step.value not in entered
            )
        ), valid
    # A valid one is taken.
    script = GuideScript(answer("Which areas?", next_step="focus_areas"))
    session = CreationSession.model_validate({"current_step": "exploration", "config": entered})
    assert (await run_turn(session, "x", None, script.guide())).result.next_step is S.FOCUS_AREAS


async def test_an_invalid_next_step_from_review_stays_in_review() -> None:
    """Seed 000, 3.1 (review): valid next steps are exploration and complete; anything
    else (a data step, review itself, no step, not a step) stays in review, creating
    nothing."""
    proposals: list[tuple[str | None, str | None]] = [
        ("purpose", "Stayed at review: purpose is not a valid next step from there."),
        ("keywords", "Stayed at review: keywords is not a valid next step from there."),
        ("review", "Stayed at review: review is not a valid next step from there."),
        ("launch", "Stayed at review: 'launch' is not a workflow step."),
        (None, None),
    ]
    for proposed, warning in proposals:
        script = GuideScript(answer("Anything else to change?", next_step=proposed))
        session = CreationSession.model_validate({"current_step": "review", "config": FULL_CONFIG})
        turn = await run_turn(session, "looks fine I guess", None, script.guide())
        assert turn.result.next_step is S.REVIEW, proposed
        assert turn.session.current_step is S.REVIEW, proposed
        assert turn.result.warnings == ([warning] if warning else []), proposed
        assert turn.result.stream is None, proposed
        assert _valid_steps_line(script.system_prompt).endswith("exploration, complete")
    for valid in (S.EXPLORATION, S.COMPLETE):
        script = GuideScript(answer("OK.", next_step=valid.value))
        session = CreationSession.model_validate({"current_step": "review", "config": FULL_CONFIG})
        turn = await run_turn(session, "ok", None, script.guide())
        assert turn.result.next_step is valid
        assert (turn.result.stream is not None) is (valid is S.COMPLETE)


async def test_extracted_data_that_completes_the_required_fields_may_go_to_review() -> None:
    """Valid next steps are computed before the call; review is also accepted when the
    data the model extracted completed every required field."""
    entered = {k: v for k, v in FULL_CONFIG.items() if k not in ("report_frequency",)}
    script = GuideScript(
        answer(
            "Weekly it is. Let's review.",
            extracted_data={"report_frequency": "weekly"},
            next_step="review",
        )
    )
    session = CreationSession.model_validate(
        {"current_step": "report_frequency", "config": entered}
    )
    turn = await run_turn(session, "weekly please", None, script.guide())
    assert "review" not in _valid_steps_line(script.system_prompt)
    assert turn.result.next_step is S.REVIEW
    assert turn.result.warnings == []


async def test_unknown_fields_are_dropped_with_a_warning() -> None:
    script = GuideScript(
        answer(
            "Here are some budgets.",
            mode="suggestion",
            target_field="budget",
            suggestions=["$1M", "$5M"],
            extracted_data={"budget": "$1M", "keywords": ["semaglutide", "tirzepatide"]},
            next_step="exploration",
        )
    )
    turn = await run_turn(CreationSession(current_step=S.KEYWORDS), "x", None, script.guide())
    result = turn.result
    assert result.updated_config.keywords == ["semaglutide", "tirzepatide"]
    assert result.step_just_completed
    assert result.target_field is None
    assert result.suggestions == []
    assert result.mode is GuideMode.QUESTION
    assert result.warnings == [
        "Ignored a value for 'budget': there is no such stream field.",
        "Dropped the target field 'budget' and its suggestions: no such stream field.",
    ]


async def test_malformed_values_are_dropped_and_never_corrupt_what_is_entered() -> None:
    script = GuideScript(
        answer(
            "Updated.",
            mode="suggestion",
            target_field="stream_type",
            suggestions=["Clinical", "pipeline", "market"],
            extracted_data={
                "stream_type": "banana",
                "keywords": 5,
                "focus_areas": "Obesity, Diabetes",
                "report_frequency": "Weekly",
                "purpose": "   ",
                "competitors": {"name": "Lilly"},
            },
            next_step="exploration",
        )
    )
    session = CreationSession.model_validate(
        {
            "current_step": "exploration",
            "config": {"stream_type": "market", "keywords": ["semaglutide"], "purpose": "P"},
        }
    )
    turn = await run_turn(session, "x", None, script.guide())
    config = turn.result.updated_config
    assert config.stream_type == "market"
    assert config.keywords == ["semaglutide"]
    assert config.purpose == "P"
    assert config.competitors is None
    assert config.focus_areas == ["Obesity", "Diabetes"]
    assert config.report_frequency == "weekly"
    assert turn.result.suggestions == ["clinical", "market"]
    warnings = turn.result.warnings
    assert len(warnings) == 5
    assert (
        warnings[0] == "Ignored the value 'banana' for stream_type: 'banana' is not a stream type."
    )
    assert "Dropped the suggestion 'pipeline' for stream_type" in warnings[-1]


async def test_malformed_json_is_retried_once_and_recovers() -> None:
    script = GuideScript(
        Malformed('{"mode": "question", "message": "Hello th'),
        answer("Hello there, what should we monitor?", next_step="exploration"),
    )
    turn = await run_turn(CreationSession(), "hi", None, script.guide())
    assert turn.result.message == "Hello there, what should we monitor?"
    assert len(turn.retries) == 1
    retry_at = turn.events.index(turn.retries[0])
    before = [e.text for e in turn.events[:retry_at] if e.type == "text_delta"]
    assert "".join(before) == "Hello th"  # streamed, then voided by the retry event
    after = [e.text for e in turn.events[retry_at:] if e.type == "text_delta"]
    assert "".join(after) == turn.result.message
    retry = script.seen[1][-1]
    assert isinstance(retry, ModelRequest)
    assert isinstance(retry.parts[0], ToolReturnPart | RetryPromptPart)


async def test_malformed_json_twice_is_an_error_and_the_session_is_unchanged() -> None:
    script = GuideScript(
        Malformed('{"mode": "question", "message": "Hello'),
        Malformed('{"mode": "question", "message": '),
    )
    session = CreationSession(current_step=S.PURPOSE, history=PALATIN_HISTORY)
    before = session.model_dump()
    turn = await run_turn(session, "Track Palatin", None, script.guide())
    assert turn.error.code == "llm_error"
    assert "test:guide-script gave an answer that could not be used" in turn.error.message
    assert turn.error.hint
    assert session.model_dump() == before
    assert not any(isinstance(e, GuideTurnResult) for e in turn.events)


async def test_an_answer_without_structured_output_is_retried_then_refused() -> None:
    script = GuideScript(Plain("Sure! Let's go."), Plain("Really, let's go."))
    turn = await run_turn(CreationSession(), "hi", None, script.guide())
    assert turn.error.code == "llm_error"
    assert len(script.instructions) == 2


async def test_a_provider_failure_is_an_error_event_with_a_hint() -> None:
    async def rate_limited(
        messages: list[ModelMessage], info: AgentInfo
    ) -> AsyncIterator[str | DeltaToolCalls]:
        for _ in ():  # a generator that fails before its first chunk
            yield ""
        raise ModelHTTPError(status_code=429, model_name="busy")

    resolved = ResolvedModel(
        "default", "test:busy", "test", FunctionModel(stream_function=rate_limited), "none"
    )
    turn = await run_turn(CreationSession(), "hi", None, ModelGuide(resolved))
    assert turn.error.code == "llm_error"
    assert "HTTP 429" in turn.error.message
    assert turn.error.hint is not None
    assert "rate-limiting" in turn.error.hint


async def test_review_to_complete_yields_the_finished_stream() -> None:
    script = GuideScript(
        answer("Creating your stream now.", next_step="complete"),
    )
    session = CreationSession.model_validate({"current_step": "review", "config": FULL_CONFIG})
    turn = await run_turn(session, "Looks good, create it", None, script.guide())
    result = turn.result
    assert result.next_step is S.COMPLETE
    assert isinstance(result.stream, StreamConfig)
    assert result.stream.stream_name == "Palatin Pipeline Tracker"
    assert result.stream.retrieval.queries["pubmed"].query
    assert turn.session.stream == result.stream
    assert result.available_next_steps == []
    assert "You are in REVIEW mode" in script.system_prompt
    assert _valid_steps_line(script.system_prompt).endswith("exploration, complete")
    after = await run_turn(turn.session, "one more thing", None, GuideScript().guide())
    assert after.error.code == "conflict"


async def test_review_to_exploration_when_the_user_wants_changes() -> None:
    script = GuideScript(answer("What would you like to change?", next_step="exploration"))
    session = CreationSession.model_validate({"current_step": "review", "config": FULL_CONFIG})
    turn = await run_turn(session, "Change the keywords", None, script.guide())
    assert turn.result.next_step is S.EXPLORATION
    assert turn.result.stream is None


async def test_complete_is_refused_while_a_required_field_is_missing() -> None:
    script = GuideScript(answer("Creating it.", next_step="complete"))
    session = CreationSession.model_validate({"current_step": "review", "config": FULL_CONFIG})
    turn = await run_turn(session, "create", None, script.guide(), edits={"keywords": None})
    assert turn.result.next_step is S.REVIEW
    assert turn.result.stream is None
    assert "keywords is still missing" in turn.result.warnings[0]


async def test_skip_then_the_model_reasons_about_the_next_step() -> None:
    entered = {k: v for k, v in FULL_CONFIG.items() if k != "competitors"}
    script = GuideScript(answer("Everything is set; let's review.", next_step="review"))
    session = CreationSession.model_validate({"current_step": "competitors", "config": entered})
    turn = await run_turn(session, "", SkipStep(), script.guide())
    assert turn.result.next_step is S.REVIEW
    assert "The optional field 'competitors' was skipped." in script.system_prompt


async def test_usage_is_reported_after_a_successful_turn() -> None:
    seen: list[RunUsage] = []

    async def record(usage: RunUsage) -> None:
        seen.append(usage)

    script = GuideScript(answer("Hello.", next_step="exploration"))
    await run_turn(CreationSession(), "hi", None, script.guide(on_usage=record))
    assert len(seen) == 1
    assert seen[0].requests == 1


async def test_a_client_that_leaves_mid_message_stops_the_turn() -> None:
    script = GuideScript(answer("A long answer " * 20, next_step="exploration"))
    events = advance(CreationSession(), "hi", None, script.guide())
    first = await anext(events)
    assert first.type == "text_delta"
    await events.aclose()  # what the SSE response does when the browser goes away
    assert len(script.instructions) == 1
