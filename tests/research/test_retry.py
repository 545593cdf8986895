"""Retry from failed (seed Phase 6): each row of the endpoint's table, and what is reset."""

from __future__ import annotations

import pytest

from scholarstream.errors import ConflictError
from scholarstream.research import (
    MAX_RETRIES,
    ConfirmAction,
    FailureReason,
    LLMResultStatus,
    Research,
    ResearchStatus,
    RetryFromFailedAction,
    UserAction,
    apply_completion,
    begin_synthesis,
    confirm,
    error_summary,
    record_call_failed,
    record_call_started,
    record_synthesis_failed,
    record_synthesis_succeeded,
    retry_research,
)
from tests.research.builders import ANTHROPIC, GOOGLE, LATER, OPENAI, research, results

FAILED_LLMS = research(
    "failed",
    llm_results=results("failed", "failed"),
    error="All LLM calls failed",
    failure_reason=FailureReason.ALL_LLMS_FAILED,
)
SYNTHESIS_ERROR = research(
    "failed",
    llm_results=results("completed", "completed"),
    error="Synthesis failed: timeout",
    synthesis_error="timeout",
    failure_reason=FailureReason.SYNTHESIS_FAILED,
)
NOTHING_TO_RETRY = research(
    "failed",
    llm_results=results("completed"),
    error="Synthesis failed: gone",
    failure_reason=FailureReason.SYNTHESIS_FAILED,
)

PHASE_6 = [
    pytest.param(
        FAILED_LLMS,
        "retry_llms",
        ResearchStatus.RETRYING,
        id="failed + failed LLMs -> retry LLMs -> retrying",
    ),
    pytest.param(
        SYNTHESIS_ERROR,
        "rerun_synthesis",
        ResearchStatus.SYNTHESIZING,
        id="failed + synthesis error -> re-run synthesis -> synthesizing",
    ),
    pytest.param(
        NOTHING_TO_RETRY,
        "no_op",
        ResearchStatus.COMPLETED,
        id="failed + nothing to retry -> no-op -> completed (idempotent)",
    ),
]


@pytest.mark.parametrize(("subject", "action", "status"), PHASE_6)
def test_retry_from_failed(
    subject: Research, action: RetryFromFailedAction, status: ResearchStatus
) -> None:
    outcome = retry_research(subject, now=LATER)
    assert outcome.action == action
    assert outcome.research.status == status
    assert outcome.research.error is None
    assert outcome.research.failure_reason is None


@pytest.mark.parametrize(
    "status", [s for s in ResearchStatus if s != ResearchStatus.FAILED], ids=str
)
def test_other_statuses_are_a_409_conflict(status: ResearchStatus) -> None:
    with pytest.raises(ConflictError) as caught:
        retry_research(research(status, llm_results=results("failed")), now=LATER)
    assert caught.value.http_status == 409
    assert caught.value.message == (
        "Only a failed research can be retried (or a completed one whose synthesis failed); "
        f"this one is {status}."
    )


def test_retrying_llms_resets_only_the_failed_results_and_drops_the_synthesis() -> None:
    subject = research(
        "failed",
        llm_results=results("completed", "failed", "failed"),
        error="Synthesis failed: timeout",
        synthesis_error="timeout",
        failure_reason=FailureReason.SYNTHESIS_FAILED,
    )
    outcome = retry_research(subject, now=LATER)
    assert outcome.action == "retry_llms"  # failed LLMs come before the synthesis error
    assert [(r.model, r.status, r.attempt) for r in outcome.research.llm_results] == [
        (OPENAI, LLMResultStatus.COMPLETED, 1),
        (ANTHROPIC, LLMResultStatus.PENDING, 2),
        (GOOGLE, LLMResultStatus.PENDING, 2),
    ]
    assert outcome.research.synthesis_error is None
    assert outcome.research.synthesized_result is None
    assert outcome.models_to_call == [ANTHROPIC, GOOGLE]


def test_retrying_llms_goes_back_to_processing_when_the_calls_run() -> None:
    outcome = retry_research(FAILED_LLMS, now=LATER)
    change = record_call_started(outcome.research, OPENAI, 2, now=LATER)
    assert change.research.status == ResearchStatus.PROCESSING


def test_retrying_an_all_failed_research_counts_towards_the_two_retries() -> None:
    outcome = retry_research(FAILED_LLMS, now=LATER)
    failure = outcome.research.partial_failure
    assert failure is not None
    assert failure.retry_count == 1
    assert failure.failed_providers == [OPENAI, ANTHROPIC]


def test_retrying_llms_after_the_maximum_without_answers_stays_failed_with_max_retries() -> None:
    maxed = research(
        "failed",
        llm_results=results("failed", "failed"),
        retry_count=MAX_RETRIES,
        error="All LLM calls failed",
        failure_reason=FailureReason.ALL_LLMS_FAILED,
    )
    outcome = retry_research(maxed, now=LATER)
    assert outcome.action == "retry_llms"
    assert outcome.research.status == ResearchStatus.FAILED
    assert outcome.research.error == "Max retries exceeded"
    assert outcome.research.failure_reason == FailureReason.MAX_RETRIES_EXCEEDED
    assert outcome.llm_calls == []
    summary = error_summary(outcome.research)
    assert summary is not None and summary.user_action is UserAction.CREATE_NEW_RESEARCH


def test_max_retries_keeps_the_synthesis_error() -> None:
    maxed = research(
        "failed",
        llm_results=results("failed"),
        retry_count=MAX_RETRIES,
        error="Synthesis failed: timeout",
        synthesis_error="timeout",
        failure_reason=FailureReason.SYNTHESIS_FAILED,
    )
    outcome = retry_research(maxed, now=LATER)
    assert outcome.research.failure_reason == FailureReason.MAX_RETRIES_EXCEEDED
    assert outcome.research.synthesis_error == "timeout"


# --- failed models and a synthesis error together (after Proceed) -----------------------


def _proceeded_then_synthesis_failed(retry_count: int) -> Research:
    """Two models answered, one failed, the user proceeded and the synthesis failed."""
    return research(
        "failed",
        llm_results=results("completed", "failed", "completed"),
        retry_count=retry_count,
        error="Synthesis failed: HTTP 503",
        synthesis_error="HTTP 503",
        failure_reason=FailureReason.SYNTHESIS_FAILED,
    )


@pytest.mark.parametrize("retry_count", range(MAX_RETRIES))
def test_failed_models_with_retries_left_are_called_again_first(retry_count: int) -> None:
    # The seed's first row: failed LLMs are retried before the synthesis error.
    subject = _proceeded_then_synthesis_failed(retry_count)
    summary = error_summary(subject)
    assert summary is not None and summary.user_action is UserAction.RETRY
    left = MAX_RETRIES - retry_count
    assert f"the failed models are called again ({left} of {MAX_RETRIES} retries left)" in (
        summary.advice
    )

    outcome = retry_research(subject, now=LATER)
    assert outcome.action == "retry_llms"
    assert outcome.research.status == ResearchStatus.RETRYING
    assert outcome.models_to_call == [ANTHROPIC]
    assert outcome.research.retry_count == retry_count + 1
    assert [r.status for r in outcome.research.llm_results] == [
        LLMResultStatus.COMPLETED,
        LLMResultStatus.PENDING,
        LLMResultStatus.COMPLETED,
    ]


@pytest.mark.parametrize(
    "reason", [FailureReason.SYNTHESIS_FAILED, FailureReason.MAX_RETRIES_EXCEEDED], ids=str
)
def test_with_no_retry_left_retry_runs_the_synthesis_on_the_answers_received(
    reason: FailureReason,
) -> None:
    subject = _proceeded_then_synthesis_failed(MAX_RETRIES).model_copy(
        update={"failure_reason": reason}
    )
    summary = error_summary(subject)
    assert summary is not None and summary.user_action is UserAction.RETRY
    assert "run the synthesis on the answers already received" in summary.advice or (
        "the synthesis runs again on the answers already received" in summary.advice
    )

    outcome = retry_research(subject, now=LATER)
    assert outcome.action == "rerun_synthesis"
    assert outcome.research.status == ResearchStatus.SYNTHESIZING
    assert outcome.llm_calls == []
    assert outcome.research.llm_results == subject.llm_results
    decision, _ = begin_synthesis(outcome.research, now=LATER)
    assert (decision.action, decision.successful_models) == ("run", [OPENAI, GOOGLE])
    done = record_synthesis_succeeded(outcome.research, "S [M1][M2]", now=LATER).research
    assert (done.status, done.synthesized_result) == (ResearchStatus.COMPLETED, "S [M1][M2]")


def test_a_research_with_answers_is_never_a_dead_end() -> None:
    """Retry after retry, whatever the failed model and the synthesis do, the research
    ends completed once the synthesis succeeds: retries first, then the synthesis. Since
    issue 22 the synthesis failing after Proceed completes the research without it, and
    its Retry runs the synthesis (the failed model was left out by Proceed)."""
    subject = _proceeded_then_synthesis_failed(0)
    actions: list[RetryFromFailedAction] = []
    for _ in range(MAX_RETRIES + 1):
        outcome = retry_research(subject, now=LATER)
        actions.append(outcome.action)
        if outcome.action == "rerun_synthesis":
            break
        # The retried model fails again; the user proceeds; the synthesis fails again.
        retried = outcome.research.result_for(ANTHROPIC)
        assert retried is not None and retried.status == LLMResultStatus.PENDING
        calling = record_call_started(outcome.research, ANTHROPIC, retried.attempt, now=LATER)
        failing = record_call_failed(
            calling.research, ANTHROPIC, retried.attempt, "HTTP 500", now=LATER
        )
        again = failing.research
        waiting = apply_completion(again, now=LATER).research
        assert waiting.status == ResearchStatus.AWAITING_CONFIRMATION
        synthesizing = confirm(waiting, ConfirmAction.PROCEED, now=LATER).research
        subject = record_synthesis_failed(synthesizing, "HTTP 503", now=LATER).research
        assert subject.synthesis_error == "HTTP 503"
        assert subject.status == ResearchStatus.COMPLETED
    assert actions == ["retry_llms", "rerun_synthesis"]


def test_re_running_synthesis_keeps_every_model_result() -> None:
    outcome = retry_research(SYNTHESIS_ERROR, now=LATER)
    assert outcome.research.llm_results == SYNTHESIS_ERROR.llm_results
    assert outcome.research.synthesis_error is None
    assert outcome.llm_calls == []


def test_nothing_to_retry_completes_and_says_so() -> None:
    outcome = retry_research(NOTHING_TO_RETRY, now=LATER)
    assert outcome.research.completed_at == LATER
    assert [e.type for e in outcome.events] == ["research.completed"]
