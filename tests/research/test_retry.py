"""Retry from failed (seed Phase 6): each row of the endpoint's table, and what is reset."""

from __future__ import annotations

import pytest

from scholarstream.errors import ConflictError
from scholarstream.research import (
    MAX_RETRIES,
    FailureReason,
    LLMResultStatus,
    Research,
    ResearchStatus,
    RetryFromFailedAction,
    record_call_started,
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
    assert f"Only a failed research can be retried; this one is {status}." == caught.value.message


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


def test_retrying_llms_after_the_maximum_stays_failed_with_max_retries() -> None:
    maxed = research(
        "failed",
        llm_results=results("completed", "failed"),
        retry_count=MAX_RETRIES,
        error="Cancelled by user",
        failure_reason=FailureReason.CANCELLED_BY_USER,
    )
    outcome = retry_research(maxed, now=LATER)
    assert outcome.action == "retry_llms"
    assert outcome.research.status == ResearchStatus.FAILED
    assert outcome.research.error == "Max retries exceeded"
    assert outcome.research.failure_reason == FailureReason.MAX_RETRIES_EXCEEDED
    assert outcome.llm_calls == []


def test_re_running_synthesis_keeps_every_model_result() -> None:
    outcome = retry_research(SYNTHESIS_ERROR, now=LATER)
    assert outcome.research.llm_results == SYNTHESIS_ERROR.llm_results
    assert outcome.research.synthesis_error is None
    assert outcome.llm_calls == []


def test_nothing_to_retry_completes_and_says_so() -> None:
    outcome = retry_research(NOTHING_TO_RETRY, now=LATER)
    assert outcome.research.completed_at == LATER
    assert [e.type for e in outcome.events] == ["research.completed"]
