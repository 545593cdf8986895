"""Why a research failed and what its user can do next (seed 001, "Error Handling Summary").

=======================  ========  ============================  =========================
error type               status    user action                   reason
=======================  ========  ============================  =========================
All LLMs failed          failed    Retry                         ``all_llms_failed``
Synthesis failed         failed    Retry                         ``synthesis_failed``
Max retries exceeded     failed    Create new research           ``max_retries_exceeded``
API key invalid          failed    Update API keys, retry        ``api_key_invalid``
Cancelled by user        failed    Create new research           ``cancelled_by_user``
=======================  ========  ============================  =========================

A failed research stores its ``failure_reason`` next to the seed's ``error`` message, so
the summary never has to parse messages.

Since issue 22 a synthesis call that fails no longer fails the research: it completes
without a synthesis ("Synthesis not available", ``synthesis.record_synthesis_failed``).
The "Synthesis failed" row (and "API key invalid" for a synthesis key) is then left for
the skip logic's error (nothing to synthesise) and for research stored failed before.

"API key invalid" is the reason whenever a failure that ended the research came from a
refused or missing key (a model result, or the synthesis call, whose ``error_code`` is in
``API_KEY_ERROR_CODES``): retrying without fixing the key would only fail again.

The summary's advice says what Retry will really do for this research
(``retry.retry_action``): call the failed models again (while retries are left), or run
the synthesis on the answers already received. A research that ran out of retries but holds
answers (or external reports) is not a dead end: its summary offers Retry, which runs the
synthesis without the failed models; only with nothing to synthesise does "Max retries
exceeded" mean creating a new research.
"""

from __future__ import annotations

from collections.abc import Iterable
from enum import StrEnum
from typing import TYPE_CHECKING, Literal

from scholarstream.research.core._base import CamelModel
from scholarstream.research.core._lifecycle import ResearchStatus

if TYPE_CHECKING:
    from scholarstream.research.core._records import Research

__all__ = [
    "ALL_LLMS_FAILED",
    "API_KEY_ERROR_CODES",
    "CANCELLED_BY_USER",
    "ERROR_SUMMARY",
    "MAX_RETRIES_EXCEEDED",
    "NO_SUCCESSFUL_RESULTS",
    "RETRY_ADVICE",
    "ErrorSummary",
    "ErrorSummaryRow",
    "FailureReason",
    "RetryFromFailedAction",
    "UserAction",
    "error_summary",
    "is_api_key_error",
    "reason_for_llm_failures",
]

# The seed's error messages, stored as the research's ``error``.
ALL_LLMS_FAILED = "All LLM calls failed"
NO_SUCCESSFUL_RESULTS = "No successful LLM results"
MAX_RETRIES_EXCEEDED = "Max retries exceeded"
CANCELLED_BY_USER = "Cancelled by user"

API_KEY_ERROR_CODES = frozenset({"missing_credentials", "api_key_invalid"})
"""``error_code`` values meaning the provider key is missing (``MissingCredentialsError``)
or was refused (the orchestrator records ``api_key_invalid`` for an HTTP 401)."""


class FailureReason(StrEnum):
    ALL_LLMS_FAILED = "all_llms_failed"
    SYNTHESIS_FAILED = "synthesis_failed"
    MAX_RETRIES_EXCEEDED = "max_retries_exceeded"
    API_KEY_INVALID = "api_key_invalid"
    CANCELLED_BY_USER = "cancelled_by_user"


class UserAction(StrEnum):
    RETRY = "retry"
    CREATE_NEW_RESEARCH = "create_new_research"
    UPDATE_API_KEYS_AND_RETRY = "update_api_keys_and_retry"


class ErrorSummaryRow(CamelModel):
    error_type: str
    user_action: UserAction
    advice: str


ERROR_SUMMARY: dict[FailureReason, ErrorSummaryRow] = {
    FailureReason.ALL_LLMS_FAILED: ErrorSummaryRow(
        error_type="All LLMs failed",
        user_action=UserAction.RETRY,
        advice="Retry the research.",
    ),
    FailureReason.SYNTHESIS_FAILED: ErrorSummaryRow(
        error_type="Synthesis failed",
        user_action=UserAction.RETRY,
        advice="Retry the research: the synthesis runs again on the answers already received.",
    ),
    FailureReason.MAX_RETRIES_EXCEEDED: ErrorSummaryRow(
        error_type="Max retries exceeded",
        user_action=UserAction.CREATE_NEW_RESEARCH,
        advice="The failed models were retried twice; create a new research.",
    ),
    FailureReason.API_KEY_INVALID: ErrorSummaryRow(
        error_type="API key invalid",
        user_action=UserAction.UPDATE_API_KEYS_AND_RETRY,
        advice="Update the API keys of the models named below under Settings, then retry.",
    ),
    FailureReason.CANCELLED_BY_USER: ErrorSummaryRow(
        error_type="Cancelled by user",
        user_action=UserAction.CREATE_NEW_RESEARCH,
        advice="Create a new research.",
    ),
}


RetryFromFailedAction = Literal["retry_llms", "rerun_synthesis", "no_op"]
"""What ``POST /research/{id}/retry`` does for a failed research (``retry.RETRY_FROM_FAILED``)."""

RETRY_ADVICE: dict[RetryFromFailedAction, str] = {
    "retry_llms": (
        "Retry the research: the failed models are called again ({left} of {most} retries "
        "left), then the research goes on with their answers."
    ),
    "rerun_synthesis": (
        "Retry the research: the synthesis runs again on the answers already received."
    ),
    "no_op": "Retry the research: nothing failed any more, so it completes.",
}
"""The advice of a summary whose user action is Retry, by what the retry will do."""

SYNTHESISE_WITHOUT_THEM = (
    "The failed models were retried twice. Retry the research to run the synthesis on the "
    "answers already received, without them, or create a new research."
)
NOTHING_LEFT = (
    "The failed models were retried twice and no answer was received: create a new research."
)


class ErrorSummary(CamelModel):
    """One failed research as the error display shows it."""

    reason: FailureReason
    error_type: str
    error: str
    user_action: UserAction
    advice: str
    models_with_key_errors: list[str]


def is_api_key_error(error_code: str | None) -> bool:
    return error_code in API_KEY_ERROR_CODES


def reason_for_llm_failures(error_codes: Iterable[str | None]) -> FailureReason:
    """All models failed: a key problem among them decides what the user must do first."""
    if any(is_api_key_error(code) for code in error_codes):
        return FailureReason.API_KEY_INVALID
    return FailureReason.ALL_LLMS_FAILED


def error_summary(research: Research) -> ErrorSummary | None:
    """The seed's error summary for a failed research; ``None`` for any other status."""
    reason = research.failure_reason
    if research.status != ResearchStatus.FAILED or reason is None:
        return None
    row = ERROR_SUMMARY[reason]
    user_action, advice = _what_to_do(research, reason, row)
    key_errors = [r.model for r in research.llm_results if is_api_key_error(r.error_code)]
    # A synthesis that failed on its key is reported with the synthesis model's name.
    synthesis_key_failed = (
        reason is FailureReason.API_KEY_INVALID and research.synthesis_error is not None
    )
    if synthesis_key_failed and research.synthesis_llm is not None:
        key_errors.append(research.synthesis_llm)
    return ErrorSummary(
        reason=reason,
        error_type=row.error_type,
        error=research.error or row.error_type,
        user_action=user_action,
        advice=advice,
        models_with_key_errors=key_errors,
    )


def _what_to_do(
    research: Research, reason: FailureReason, row: ErrorSummaryRow
) -> tuple[UserAction, str]:
    """The row's user action and an advice that is true of what Retry will do."""
    from scholarstream.research.core._retry import MAX_RETRIES, retries_left, retry_action

    action = retry_action(research)
    left = retries_left(research)
    exhausted = action == "retry_llms" and left == 0  # Retry would end "Max retries exceeded"
    if row.user_action is UserAction.RETRY:
        if exhausted:
            return UserAction.CREATE_NEW_RESEARCH, NOTHING_LEFT
        return row.user_action, RETRY_ADVICE[action].format(left=left, most=MAX_RETRIES)
    if reason is FailureReason.MAX_RETRIES_EXCEEDED:
        if action == "rerun_synthesis":
            return UserAction.RETRY, SYNTHESISE_WITHOUT_THEM
        return row.user_action, NOTHING_LEFT if exhausted else row.advice
    return row.user_action, row.advice
