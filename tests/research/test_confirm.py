"""The user's answer to a partial failure: each row of the seed's proceed/retry/cancel
table, the two-retry limit, and the status it may be given in."""

from __future__ import annotations

import pytest

from scholarstream.errors import ConflictError
from scholarstream.research import (
    CONFIRM_ACTIONS,
    ConfirmAction,
    ConfirmRequest,
    FailureReason,
    LLMCallEvent,
    LLMResultStatus,
    ResearchFailed,
    ResearchRetrying,
    ResearchStatus,
    ResearchSynthesizing,
    confirm,
    error_summary,
    retry_research,
)
from tests.research.builders import ANTHROPIC, GOOGLE, LATER, OPENAI, RESEARCH_ID, research, results

AWAITING = research(
    "awaiting_confirmation", llm_results=results("completed", "failed", "failed"), retry_count=0
)


def test_proceed_runs_synthesis_with_the_successful_results_only() -> None:
    change = confirm(AWAITING, ConfirmAction.PROCEED, now=LATER)
    assert change.research.status == ResearchStatus.SYNTHESIZING
    assert [r.model for r in change.research.successful_results] == [OPENAI]
    assert change.llm_calls == []
    [event] = change.events
    assert isinstance(event, ResearchSynthesizing)
    assert event.successful_models == [OPENAI]


def test_retry_re_runs_the_failed_llms() -> None:
    change = confirm(AWAITING, ConfirmAction.RETRY, now=LATER)
    after = change.research
    assert after.status == ResearchStatus.RETRYING
    assert change.models_to_call == [ANTHROPIC, GOOGLE]
    assert change.llm_calls == [
        LLMCallEvent(research_id=RESEARCH_ID, model=ANTHROPIC, attempt=2),
        LLMCallEvent(research_id=RESEARCH_ID, model=GOOGLE, attempt=2),
    ]
    assert [(r.model, r.status, r.attempt) for r in after.llm_results] == [
        (OPENAI, LLMResultStatus.COMPLETED, 1),
        (ANTHROPIC, LLMResultStatus.PENDING, 2),
        (GOOGLE, LLMResultStatus.PENDING, 2),
    ]
    assert all(r.error is None and r.content is None for r in after.llm_results[1:])
    assert after.partial_failure is not None
    assert after.partial_failure.retry_count == 1
    [event] = change.events
    assert isinstance(event, ResearchRetrying)
    assert (event.models, event.retry_count) == ([ANTHROPIC, GOOGLE], 1)


def test_cancel_marks_failed_cancelled_by_user() -> None:
    change = confirm(AWAITING, ConfirmAction.CANCEL, now=LATER)
    assert change.research.status == ResearchStatus.FAILED
    assert change.research.error == "Cancelled by user"
    assert change.research.failure_reason == FailureReason.CANCELLED_BY_USER
    assert change.llm_calls == []
    [event] = change.events
    assert isinstance(event, ResearchFailed)
    assert event.user_action == "create_new_research"


RETRY_LIMIT = [
    pytest.param(0, ResearchStatus.RETRYING, 1, id="retry count 0 < 2 -> retrying (count 1)"),
    pytest.param(1, ResearchStatus.RETRYING, 2, id="retry count 1 < 2 -> retrying (count 2)"),
    pytest.param(2, ResearchStatus.FAILED, 2, id="retry count 2 -> failed 'Max retries'"),
]


@pytest.mark.parametrize(("retry_count", "status", "count_after"), RETRY_LIMIT)
def test_retry_is_allowed_twice(retry_count: int, status: ResearchStatus, count_after: int) -> None:
    awaiting = research(
        "awaiting_confirmation", llm_results=results("completed", "failed"), retry_count=retry_count
    )
    change = confirm(awaiting, ConfirmAction.RETRY, now=LATER)
    assert change.research.status == status
    assert change.research.retry_count == count_after


def test_retry_after_two_retries_fails_with_max_retries() -> None:
    awaiting = research(
        "awaiting_confirmation", llm_results=results("completed", "failed"), retry_count=2
    )
    change = confirm(awaiting, ConfirmAction.RETRY, now=LATER)
    assert change.research.error == "Max retries exceeded"
    assert change.research.failure_reason == FailureReason.MAX_RETRIES_EXCEEDED
    assert change.llm_calls == []
    # A model answered: the research is not a dead end. Retry runs the synthesis on it.
    summary = error_summary(change.research)
    assert summary is not None
    assert summary.user_action == "retry"
    assert retry_research(change.research, now=LATER).action == "rerun_synthesis"


@pytest.mark.parametrize(
    "status", [s for s in ResearchStatus if s != ResearchStatus.AWAITING_CONFIRMATION], ids=str
)
@pytest.mark.parametrize("action", list(ConfirmAction), ids=str)
def test_only_a_research_awaiting_confirmation_can_be_confirmed(
    status: ResearchStatus, action: ConfirmAction
) -> None:
    with pytest.raises(ConflictError) as caught:
        confirm(research(status, llm_results=results("completed", "failed")), action, now=LATER)
    assert caught.value.http_status == 409
    assert status in caught.value.message


def test_the_request_body_parses_the_seeds_actions() -> None:
    for action in ("proceed", "retry", "cancel"):
        assert ConfirmRequest.model_validate({"action": action}).action == action
    assert set(CONFIRM_ACTIONS) == set(ConfirmAction)
