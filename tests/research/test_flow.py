"""Whole lifecycles through the public API, as the orchestrator will drive them."""

from __future__ import annotations

from scholarstream.research import (
    ConfirmAction,
    DraftRequest,
    ResearchStatus,
    apply_completion,
    begin_synthesis,
    build_synthesis_prompt,
    confirm,
    create_draft,
    record_call_failed,
    record_call_started,
    record_call_succeeded,
    record_synthesis_failed,
    record_synthesis_succeeded,
    retry_research,
    start_research,
)
from tests.research.builders import ANTHROPIC, GOOGLE, LATER, OPENAI, T0

AVAILABLE = [OPENAI, ANTHROPIC, GOOGLE]


def test_partial_failure_retried_then_synthesised() -> None:
    draft = create_draft(
        DraftRequest(prompt="Tirzepatide safety"), available_models=AVAILABLE, now=T0
    )
    change = start_research(draft, has_credentials=lambda model: True, now=T0)
    research = change.research
    for call in change.llm_calls:
        research = record_call_started(research, call.model, call.attempt, now=T0).research
    research = record_call_succeeded(research, OPENAI, 1, "A", now=T0).research
    research = record_call_succeeded(research, GOOGLE, 1, "G", now=T0).research
    assert apply_completion(research, now=T0).events == []  # anthropic still running
    research = record_call_failed(research, ANTHROPIC, 1, "HTTP 529", now=T0).research
    research = apply_completion(research, now=T0).research
    assert research.status == ResearchStatus.AWAITING_CONFIRMATION

    retried = confirm(research, ConfirmAction.RETRY, now=LATER)
    assert retried.models_to_call == [ANTHROPIC]
    research = record_call_succeeded(retried.research, ANTHROPIC, 2, "C", now=LATER).research
    research = apply_completion(research, now=LATER).research
    assert research.status == ResearchStatus.SYNTHESIZING

    decision, change = begin_synthesis(research, now=LATER)
    assert decision.action == "run"
    prompt = build_synthesis_prompt(change.research)
    assert [s.name for s in prompt.sources] == [OPENAI, ANTHROPIC, GOOGLE]
    done = record_synthesis_succeeded(change.research, "# Synthesis [M1][M2]", now=LATER).research
    assert done.status == ResearchStatus.COMPLETED
    assert done.retry_count == 1


def test_a_failed_synthesis_completes_without_it_and_is_retried() -> None:
    draft = create_draft(
        DraftRequest(prompt="Statins", selected_llms=[OPENAI, GOOGLE]),
        available_models=AVAILABLE,
        now=T0,
    )
    research = start_research(draft, has_credentials=lambda model: True, now=T0).research
    research = record_call_succeeded(research, OPENAI, 1, "A", now=T0).research
    research = record_call_succeeded(research, GOOGLE, 1, "G", now=T0).research
    research = apply_completion(research, now=T0).research
    research = record_synthesis_failed(research, "timeout", now=T0).research
    # Issue 22: the answers are all there, so the research completes without a synthesis.
    assert (research.status, research.synthesis_error) == (ResearchStatus.COMPLETED, "timeout")

    outcome = retry_research(research, now=LATER)
    assert outcome.action == "rerun_synthesis"
    done = record_synthesis_succeeded(outcome.research, "S", now=LATER).research
    assert (done.status, done.synthesized_result, done.error, done.synthesis_error) == (
        ResearchStatus.COMPLETED,
        "S",
        None,
        None,
    )


def test_one_model_completes_without_synthesis() -> None:
    draft = create_draft(
        DraftRequest(prompt="Statins", selected_llms=[OPENAI]), available_models=AVAILABLE, now=T0
    )
    research = start_research(draft, has_credentials=lambda model: True, now=T0).research
    research = record_call_succeeded(research, OPENAI, 1, "A", now=T0).research
    research = apply_completion(research, now=T0).research
    decision, change = begin_synthesis(research, now=T0)
    assert decision.action == "skip"
    assert change.research.status == ResearchStatus.COMPLETED
    assert [e.type for e in change.events] == ["research.completed"]
