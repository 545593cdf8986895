"""Completion detection: each row of the seed's decision matrix, as the pure decision and
as applied to a processing research."""

from __future__ import annotations

import pytest

from scholarstream.errors import ConflictError
from scholarstream.research import (
    ALL_LLMS_FAILED,
    DECISION_MATRIX,
    CompletionKind,
    FailureReason,
    ResearchAwaitingConfirmation,
    ResearchFailed,
    ResearchStatus,
    ResearchSynthesizing,
    apply_completion,
    check_llm_completion,
)
from tests.research.builders import ANTHROPIC, GOOGLE, LATER, OPENAI, research, result, results

# (completed, failed, pending) -> the seed's CompletionAction type
MATRIX = [
    # Row 1: 0 | > 0 | 0 -> failed, "All LLM calls failed"
    pytest.param(("failed",), "all_failed", id="0 completed, 1 failed, 0 pending -> all_failed"),
    pytest.param(
        ("failed", "failed", "failed"),
        "all_failed",
        id="0 completed, 3 failed, 0 pending -> all_failed",
    ),
    # Row 2: > 0 | 0 | 0 -> synthesis (or skip)
    pytest.param(
        ("completed",), "all_completed", id="1 completed, 0 failed, 0 pending -> synthesis"
    ),
    pytest.param(
        ("completed", "completed", "completed"),
        "all_completed",
        id="3 completed, 0 failed, 0 pending -> synthesis",
    ),
    # Row 3: > 0 | > 0 | 0 -> awaiting_confirmation
    pytest.param(
        ("completed", "failed"),
        "partial_failure",
        id="1 completed, 1 failed, 0 pending -> partial_failure",
    ),
    pytest.param(
        ("completed", "failed", "failed"),
        "partial_failure",
        id="1 completed, 2 failed, 0 pending -> partial_failure",
    ),
    # Row 4: any | any | > 0 -> wait
    pytest.param(("pending",), "pending", id="0 completed, 0 failed, 1 pending -> wait"),
    pytest.param(("processing",), "pending", id="0 completed, 0 failed, 1 processing -> wait"),
    pytest.param(
        ("completed", "pending"), "pending", id="1 completed, 0 failed, 1 pending -> wait"
    ),
    pytest.param(
        ("failed", "processing"), "pending", id="0 completed, 1 failed, 1 pending -> wait"
    ),
    pytest.param(
        ("completed", "failed", "pending"),
        "pending",
        id="1 completed, 1 failed, 1 pending -> wait",
    ),
]


@pytest.mark.parametrize(("statuses", "expected"), MATRIX)
def test_the_decision_matrix(statuses: tuple[str, ...], expected: CompletionKind) -> None:
    assert check_llm_completion(results(*statuses)).type == expected


def test_the_matrix_has_the_seeds_four_rows() -> None:
    rows = {(r.completed, r.failed, r.pending, r.decision) for r in DECISION_MATRIX}
    assert rows == {
        ("0", ">0", "0", "all_failed"),
        (">0", "0", "0", "all_completed"),
        (">0", ">0", "0", "partial_failure"),
        ("any", "any", ">0", "pending"),
    }


def test_partial_failure_names_the_failed_models() -> None:
    decision = check_llm_completion(results("failed", "completed", "failed"))
    assert decision.failed_providers == [OPENAI, GOOGLE]


def test_no_results_at_all_is_all_failed_as_in_the_seeds_code() -> None:
    assert check_llm_completion([]).type == "all_failed"


def test_applied_all_failed_marks_failed_with_the_seeds_error() -> None:
    change = apply_completion(
        research("processing", llm_results=results("failed", "failed")), now=LATER
    )
    assert change.research.status == ResearchStatus.FAILED
    assert change.research.error == ALL_LLMS_FAILED == "All LLM calls failed"
    assert change.research.failure_reason == FailureReason.ALL_LLMS_FAILED
    assert [type(e) for e in change.events] == [ResearchFailed]
    assert change.llm_calls == []


def test_applied_all_failed_with_a_refused_key_is_an_api_key_failure() -> None:
    failed = [result(OPENAI, "failed", error_code="api_key_invalid"), result(GOOGLE, "failed")]
    change = apply_completion(research("processing", llm_results=failed), now=LATER)
    assert change.research.error == "All LLM calls failed"
    assert change.research.failure_reason == FailureReason.API_KEY_INVALID


def test_applied_all_completed_moves_to_synthesizing() -> None:
    change = apply_completion(
        research("processing", llm_results=results("completed", "completed")), now=LATER
    )
    assert change.research.status == ResearchStatus.SYNTHESIZING
    assert [type(e) for e in change.events] == [ResearchSynthesizing]


def test_applied_partial_failure_awaits_confirmation_with_the_failed_providers() -> None:
    change = apply_completion(
        research("processing", llm_results=results("completed", "failed", "failed")), now=LATER
    )
    failure = change.research.partial_failure
    assert change.research.status == ResearchStatus.AWAITING_CONFIRMATION
    assert failure is not None
    assert failure.failed_providers == [ANTHROPIC, GOOGLE]
    assert failure.detected_at == LATER
    assert failure.retry_count == 0
    [event] = change.events
    assert isinstance(event, ResearchAwaitingConfirmation)
    assert event.failed_providers == [ANTHROPIC, GOOGLE]


def test_a_partial_failure_after_a_retry_keeps_the_retry_count() -> None:
    after_retry = research("processing", llm_results=results("completed", "failed"), retry_count=1)
    change = apply_completion(after_retry, now=LATER)
    assert change.research.partial_failure is not None
    assert change.research.partial_failure.retry_count == 1


def test_applied_pending_changes_nothing() -> None:
    before = research("processing", llm_results=results("completed", "pending"))
    change = apply_completion(before, now=LATER)
    assert change.research == before
    assert change.events == []


@pytest.mark.parametrize(
    "status", [s for s in ResearchStatus if s != ResearchStatus.PROCESSING], ids=str
)
def test_completion_is_applied_only_while_processing(status: ResearchStatus) -> None:
    with pytest.raises(ConflictError):
        apply_completion(research(status, llm_results=results("completed")), now=LATER)
