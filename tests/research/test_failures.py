"""The seed's error summary: each row, reached the way a research really fails."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from scholarstream.research import (
    ERROR_SUMMARY,
    MAX_RETRIES,
    RETRY_ADVICE,
    ConfirmAction,
    FailureReason,
    Research,
    ResearchStatus,
    UserAction,
    apply_completion,
    confirm,
    error_summary,
    record_synthesis_failed,
    retry_research,
)
from tests.research.builders import GOOGLE, LATER, OPENAI, research, result, results


def _all_llms_failed() -> Research:
    return apply_completion(
        research("processing", llm_results=results("failed", "failed"))
    ).research


def _synthesis_failed() -> Research:
    # Since issue 22 a failed synthesis call completes the research without a synthesis
    # (test_synthesis.py); a research failed for its synthesis is one stored before then,
    # whose row of the summary still applies.
    return research(
        "failed",
        llm_results=results("completed", "completed"),
        error="Synthesis failed: HTTP 503",
        synthesis_error="HTTP 503",
        failure_reason=FailureReason.SYNTHESIS_FAILED,
    )


def _max_retries_exceeded() -> Research:
    # No model ever answered: nothing is left to synthesise, so a new research it is.
    subject = research(
        "failed",
        llm_results=results("failed", "failed"),
        retry_count=2,
        error="All LLM calls failed",
        failure_reason=FailureReason.ALL_LLMS_FAILED,
    )
    return retry_research(subject, now=LATER).research


def _api_key_invalid() -> Research:
    failed = [result(OPENAI, "failed", error_code="api_key_invalid"), result(GOOGLE, "failed")]
    return apply_completion(research("processing", llm_results=failed), now=LATER).research


def _cancelled_by_user() -> Research:
    subject = research(
        "awaiting_confirmation", llm_results=results("completed", "failed"), retry_count=0
    )
    return confirm(subject, ConfirmAction.CANCEL, now=LATER).research


SUMMARY = [
    pytest.param(
        _all_llms_failed,
        "All LLMs failed",
        UserAction.RETRY,
        "All LLM calls failed",
        id="All LLMs failed -> failed, Retry",
    ),
    pytest.param(
        _synthesis_failed,
        "Synthesis failed",
        UserAction.RETRY,
        "Synthesis failed: HTTP 503",
        id="Synthesis failed -> failed, Retry",
    ),
    pytest.param(
        _max_retries_exceeded,
        "Max retries exceeded",
        UserAction.CREATE_NEW_RESEARCH,
        "Max retries exceeded",
        id="Max retries exceeded -> failed, Create new research",
    ),
    pytest.param(
        _api_key_invalid,
        "API key invalid",
        UserAction.UPDATE_API_KEYS_AND_RETRY,
        "All LLM calls failed",
        id="API key invalid -> failed, Update API keys, retry",
    ),
    pytest.param(
        _cancelled_by_user,
        "Cancelled by user",
        UserAction.CREATE_NEW_RESEARCH,
        "Cancelled by user",
        id="Cancelled by user -> failed, Create new research",
    ),
]


@pytest.mark.parametrize(("failing", "error_type", "user_action", "error"), SUMMARY)
def test_the_error_summary(
    failing: Callable[[], Research], error_type: str, user_action: UserAction, error: str
) -> None:
    failed = failing()
    summary = error_summary(failed)
    assert failed.status == ResearchStatus.FAILED
    assert summary is not None
    assert (summary.error_type, summary.user_action, summary.error) == (
        error_type,
        user_action,
        error,
    )


def test_the_summary_has_one_row_per_failure_reason() -> None:
    assert set(ERROR_SUMMARY) == set(FailureReason)


def test_a_key_failure_names_the_models_whose_key_was_refused() -> None:
    summary = error_summary(_api_key_invalid())
    assert summary is not None
    assert summary.models_with_key_errors == [OPENAI]


def test_a_synthesis_key_failure_names_the_synthesis_model() -> None:
    # A research stored failed for its synthesis's key before issue 22 (now such a
    # synthesis completes the research without one: the next test).
    failed = research(
        "failed",
        llm_results=results("completed", "completed"),
        error="Synthesis failed: HTTP 401",
        synthesis_error="HTTP 401",
        failure_reason=FailureReason.API_KEY_INVALID,
    )
    summary = error_summary(failed)
    assert summary is not None
    assert summary.reason == FailureReason.API_KEY_INVALID
    assert summary.models_with_key_errors == [GOOGLE]


def test_a_synthesis_refused_for_its_key_completes_the_research_and_says_so() -> None:
    subject = research("synthesizing", llm_results=results("completed", "completed"))
    done = record_synthesis_failed(
        subject, "The google API key was refused.", error_code="api_key_invalid"
    ).research
    assert done.status == ResearchStatus.COMPLETED
    assert error_summary(done) is None  # nothing failed: the answers are there
    assert done.synthesis_error_code == "api_key_invalid"
    assert done.synthesis_error == "The google API key was refused."


@pytest.mark.parametrize(
    "status", [s for s in ResearchStatus if s != ResearchStatus.FAILED], ids=str
)
def test_only_a_failed_research_has_an_error_summary(status: ResearchStatus) -> None:
    assert error_summary(research(status)) is None


@pytest.mark.parametrize(("failing", "error_type", "user_action", "error"), SUMMARY)
def test_the_advice_to_retry_says_what_the_retry_does(
    failing: Callable[[], Research], error_type: str, user_action: UserAction, error: str
) -> None:
    failed = failing()
    summary = error_summary(failed)
    assert summary is not None
    if summary.user_action is not UserAction.RETRY:
        return
    action = retry_research(failed, now=LATER).action
    left = MAX_RETRIES - failed.retry_count
    assert summary.advice == RETRY_ADVICE[action].format(left=left, most=MAX_RETRIES)
