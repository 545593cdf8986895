"""Recording one model's call: the LLM result states and their moves, stale attempts,
repeats that change nothing."""

from __future__ import annotations

import itertools

import pytest

from scholarstream.errors import ConflictError, InvalidInputError
from scholarstream.research import (
    LLM_RESULT_TRANSITIONS,
    LLMResultStatus,
    Research,
    ResearchChange,
    ResearchLLMCompleted,
    ResearchLLMFailed,
    ResearchStatus,
    record_call_failed,
    record_call_started,
    record_call_succeeded,
)
from tests.research.builders import ANTHROPIC, LATER, OPENAI, T0, research, result

L = LLMResultStatus


def _record(subject: Research, target: LLMResultStatus) -> ResearchChange:
    if target == L.PROCESSING:
        return record_call_started(subject, OPENAI, 1, now=LATER)
    if target == L.COMPLETED:
        return record_call_succeeded(subject, OPENAI, 1, "new answer", now=LATER)
    return record_call_failed(subject, OPENAI, 1, "new error", now=LATER)


RECORDED = [
    pytest.param(L.PENDING, L.PROCESSING, id="pending->processing (call started)"),
    pytest.param(L.PENDING, L.COMPLETED, id="pending->completed"),
    pytest.param(L.PENDING, L.FAILED, id="pending->failed"),
    pytest.param(L.PROCESSING, L.COMPLETED, id="processing->completed"),
    pytest.param(L.PROCESSING, L.FAILED, id="processing->failed"),
]
_RECORDABLE = {(p.values[0], p.values[1]) for p in RECORDED}
REFUSED = [
    pytest.param(a, b, id=f"{a}->{b}")
    for a, b in itertools.product([L.COMPLETED, L.FAILED], [L.PROCESSING, L.COMPLETED, L.FAILED])
]


@pytest.mark.parametrize(("current", "target"), RECORDED)
def test_a_call_outcome_is_recorded(current: LLMResultStatus, target: LLMResultStatus) -> None:
    subject = research(
        "processing", llm_results=[result(OPENAI, current), result(ANTHROPIC, "pending")]
    )
    change = _record(subject, target)
    recorded = change.research.result_for(OPENAI)
    assert recorded is not None
    assert recorded.status == target
    assert change.research.result_for(ANTHROPIC) == subject.result_for(ANTHROPIC)


@pytest.mark.parametrize(("current", "target"), REFUSED)
def test_a_finished_result_is_not_recorded_again(
    current: LLMResultStatus, target: LLMResultStatus
) -> None:
    subject = research("processing", llm_results=[result(OPENAI, current)])
    with pytest.raises(ConflictError):
        _record(subject, target)


def test_the_table_has_the_result_states_moves_and_the_reset_for_retry() -> None:
    table = {(a, b) for a, targets in LLM_RESULT_TRANSITIONS.items() for b in targets}
    assert table == _RECORDABLE | {(L.FAILED, L.PENDING)}


def test_success_stores_content_and_timing_and_says_so() -> None:
    subject = research("processing", llm_results=[result(OPENAI, "processing")])
    change = record_call_succeeded(subject, OPENAI, 1, "GLP-1 agonists ...", now=LATER)
    recorded = change.research.llm_results[0]
    assert (recorded.content, recorded.started_at, recorded.completed_at) == (
        "GLP-1 agonists ...",
        T0,
        LATER,
    )
    assert change.events == [
        ResearchLLMCompleted(research_id=subject.id, occurred_at=LATER, model=OPENAI, attempt=1)
    ]


def test_failure_stores_the_error_and_its_code_and_says_so() -> None:
    subject = research("processing", llm_results=[result(OPENAI, "processing")])
    change = record_call_failed(
        subject, OPENAI, 1, "HTTP 401", error_code="api_key_invalid", now=LATER
    )
    recorded = change.research.llm_results[0]
    assert (recorded.status, recorded.error, recorded.error_code) == (
        L.FAILED,
        "HTTP 401",
        "api_key_invalid",
    )
    [event] = change.events
    assert isinstance(event, ResearchLLMFailed)
    assert event.error == "HTTP 401"


def test_recording_the_same_outcome_again_changes_nothing() -> None:
    subject = research("processing", llm_results=[result(OPENAI, "pending")])
    once = record_call_succeeded(subject, OPENAI, 1, "answer", now=LATER).research
    again = record_call_succeeded(once, OPENAI, 1, "answer", now=LATER)
    assert again.research == once
    assert again.events == []
    started = record_call_started(subject, OPENAI, 1, now=LATER).research
    assert record_call_started(started, OPENAI, 1, now=LATER).research == started


def test_an_answer_to_an_earlier_attempt_is_refused() -> None:
    subject = research("processing", llm_results=[result(OPENAI, "pending", attempt=2)])
    with pytest.raises(ConflictError) as caught:
        record_call_succeeded(subject, OPENAI, 1, "late answer", now=LATER)
    assert "attempt 1" in caught.value.message


def test_a_model_the_research_did_not_select_is_refused() -> None:
    subject = research("processing", llm_results=[result(OPENAI, "pending")])
    with pytest.raises(InvalidInputError):
        record_call_started(subject, ANTHROPIC, 1, now=LATER)


def test_a_record_while_retrying_moves_the_research_back_to_processing() -> None:
    subject = research("retrying", llm_results=[result(OPENAI, "pending", attempt=2)])
    change = record_call_failed(subject, OPENAI, 2, "timeout", now=LATER)
    assert change.research.status == ResearchStatus.PROCESSING
    assert [e.type for e in change.events] == ["research.llm_failed"]


@pytest.mark.parametrize(
    "status",
    [s for s in ResearchStatus if s not in (ResearchStatus.PROCESSING, ResearchStatus.RETRYING)],
    ids=str,
)
def test_calls_are_recorded_only_while_models_are_called(status: ResearchStatus) -> None:
    with pytest.raises(ConflictError):
        record_call_started(research(status, llm_results=[result(OPENAI, "pending")]), OPENAI, 1)
