"""Synthesis: each row of the seed's skip logic, as the decision and as applied, and the
recorded outcome of a synthesis call."""

from __future__ import annotations

import pytest

from scholarstream.errors import ConflictError
from scholarstream.research import (
    NO_SUCCESSFUL_RESULTS,
    SKIP_LOGIC,
    FailureReason,
    ResearchCompleted,
    ResearchFailed,
    ResearchStatus,
    SynthesisAction,
    begin_synthesis,
    decide_synthesis,
    record_synthesis_failed,
    record_synthesis_succeeded,
)
from tests.research.builders import LATER, research, results

SKIP_ROWS = [
    # successful LLMs | external reports | action
    pytest.param(0, 0, "error", id="0 successful, 0 reports -> error 'No successful LLM results'"),
    pytest.param(0, 1, "run", id="0 successful, >0 reports -> run synthesis (external only)"),
    pytest.param(1, 0, "skip", id="1 successful, 0 reports -> skip synthesis, mark completed"),
    pytest.param(1, 2, "run", id="1 successful, >0 reports -> run synthesis"),
    pytest.param(2, 0, "run", id=">1 successful, 0 reports (any) -> run synthesis"),
    pytest.param(3, 2, "run", id=">1 successful, >0 reports (any) -> run synthesis"),
]


@pytest.mark.parametrize(("successful", "external", "action"), SKIP_ROWS)
def test_the_skip_logic(successful: int, external: int, action: SynthesisAction) -> None:
    statuses = ["completed"] * successful + ["failed"]
    subject = research("synthesizing", llm_results=results(*statuses), external_reports=external)
    decision = decide_synthesis(subject)
    assert decision.action == action
    assert len(decision.successful_models) == successful
    assert decision.external_reports == external


def test_the_skip_logic_table_has_the_seeds_five_rows() -> None:
    assert [(r.successful_llms, r.external_reports, r.action) for r in SKIP_LOGIC] == [
        ("0", "0", "error"),
        ("0", ">0", "run"),
        ("1", "0", "skip"),
        ("1", ">0", "run"),
        (">1", "any", "run"),
    ]


def test_applied_error_row_fails_with_no_successful_results() -> None:
    subject = research("synthesizing", llm_results=results("failed"))
    decision, change = begin_synthesis(subject, now=LATER)
    assert decision.error == NO_SUCCESSFUL_RESULTS == "No successful LLM results"
    assert change.research.status == ResearchStatus.FAILED
    assert change.research.synthesis_error == "No successful LLM results"
    assert change.research.failure_reason == FailureReason.SYNTHESIS_FAILED
    assert [type(e) for e in change.events] == [ResearchFailed]


def test_applied_skip_row_completes_without_a_synthesized_result() -> None:
    subject = research("synthesizing", llm_results=results("completed"))
    _, change = begin_synthesis(subject, now=LATER)
    assert change.research.status == ResearchStatus.COMPLETED
    assert change.research.synthesized_result is None
    assert change.research.completed_at == LATER
    [event] = change.events
    assert isinstance(event, ResearchCompleted)
    assert not event.synthesized


@pytest.mark.parametrize(
    ("successful", "external"),
    [pytest.param(0, 1, id="external only"), pytest.param(2, 0, id="two models")],
)
def test_applied_run_row_leaves_the_call_to_the_caller(successful: int, external: int) -> None:
    statuses = ["completed"] * successful or ["failed"]
    subject = research("synthesizing", llm_results=results(*statuses), external_reports=external)
    decision, change = begin_synthesis(subject, now=LATER)
    assert decision.action == "run"
    assert change.research == subject
    assert change.events == []


def test_a_successful_synthesis_completes_with_the_result() -> None:
    subject = research("synthesizing", llm_results=results("completed", "completed"))
    change = record_synthesis_succeeded(subject, "# Synthesis", now=LATER)
    assert change.research.status == ResearchStatus.COMPLETED
    assert change.research.synthesized_result == "# Synthesis"
    [event] = change.events
    assert isinstance(event, ResearchCompleted)
    assert event.synthesized


def test_a_failed_synthesis_completes_the_research_without_it() -> None:
    """Issue 22 (the seed failed the research): every answer arrived, so the research
    completes with them; the synthesis error says why there is no synthesis."""
    subject = research("synthesizing", llm_results=results("completed", "completed"))
    change = record_synthesis_failed(subject, "google answered HTTP 503.", now=LATER)
    done = change.research
    assert done.status == ResearchStatus.COMPLETED
    assert done.completed_at == LATER
    assert done.synthesized_result is None
    assert done.synthesis_error == "google answered HTTP 503."
    assert (done.error, done.failure_reason) == (None, None)
    assert done.llm_results == subject.llm_results
    [event] = change.events
    assert isinstance(event, ResearchCompleted)
    assert not event.synthesized
    assert event.synthesis_error == "google answered HTTP 503."


def test_a_synthesis_refused_for_its_key_completes_and_keeps_the_code() -> None:
    subject = research("synthesizing", llm_results=results("completed", "completed"))
    change = record_synthesis_failed(
        subject, "No key for google.", error_code="missing_credentials", now=LATER
    )
    assert change.research.status == ResearchStatus.COMPLETED
    assert change.research.failure_reason is None
    assert change.research.synthesis_error_code == "missing_credentials"


def test_a_synthesis_cut_off_at_its_length_limit_is_kept_and_marked() -> None:
    subject = research("synthesizing", llm_results=results("completed", "completed"))
    done = record_synthesis_succeeded(subject, "# Synthesis, unfin", cut_off=True, now=LATER)
    assert done.research.status == ResearchStatus.COMPLETED
    assert done.research.synthesized_result == "# Synthesis, unfin"
    assert done.research.synthesis_cut_off


@pytest.mark.parametrize(
    "status", [s for s in ResearchStatus if s != ResearchStatus.SYNTHESIZING], ids=str
)
def test_synthesis_is_recorded_only_while_synthesizing(status: ResearchStatus) -> None:
    subject = research(status, llm_results=results("completed", "completed"))
    with pytest.raises(ConflictError):
        begin_synthesis(subject, now=LATER)
    with pytest.raises(ConflictError):
        record_synthesis_succeeded(subject, "text", now=LATER)
    with pytest.raises(ConflictError):
        record_synthesis_failed(subject, "boom", now=LATER)
