"""Completion detection (seed 001, Phase 3, ``checkLlmCompletion``), run after each model
result is recorded.

=========  ======  =======  ===============================================================
completed  failed  pending  action
=========  ======  =======  ===============================================================
0          > 0     0        mark ``failed``, error "All LLM calls failed"
> 0        0       0        run synthesis (or skip): the research becomes ``synthesizing``
> 0        > 0     0        set ``awaiting_confirmation`` with the failed models
any        any     > 0      wait (no action)
=========  ======  =======  ===============================================================

"pending" counts results that are ``pending`` or ``processing``. The decision depends on
the results only: the retry count matters when the user asks for a retry
(``retry.retry_failed_llms``), not here.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from pydantic import Field

from scholarstream.research.core._base import CamelModel, utc_now
from scholarstream.research.core._changes import ResearchChange, changed, fail, unchanged
from scholarstream.research.core._failures import ALL_LLMS_FAILED, reason_for_llm_failures
from scholarstream.research.core._lifecycle import ResearchStatus, conflict, transition
from scholarstream.research.core._records import (
    LLMResult,
    LLMResultStatus,
    PartialFailure,
    Research,
)

__all__ = [
    "DECISION_MATRIX",
    "CompletionDecision",
    "CompletionKind",
    "CountRule",
    "MatrixRow",
    "apply_completion",
    "check_llm_completion",
]

CompletionKind = Literal["pending", "all_failed", "all_completed", "partial_failure"]
"""The seed's ``CompletionAction`` types."""

CountRule = Literal["0", ">0", "any"]


@dataclass(frozen=True)
class MatrixRow:
    completed: CountRule
    failed: CountRule
    pending: CountRule
    decision: CompletionKind


DECISION_MATRIX: tuple[MatrixRow, ...] = (
    MatrixRow(completed="0", failed=">0", pending="0", decision="all_failed"),
    MatrixRow(completed=">0", failed="0", pending="0", decision="all_completed"),
    MatrixRow(completed=">0", failed=">0", pending="0", decision="partial_failure"),
    MatrixRow(completed="any", failed="any", pending=">0", decision="pending"),
)


class CompletionDecision(CamelModel):
    type: CompletionKind
    failed_providers: list[str] = Field(
        default_factory=list, description="The failed models (partial_failure only)."
    )


_COUNT_RULES: dict[CountRule, Callable[[int], bool]] = {
    "0": lambda n: n == 0,
    ">0": lambda n: n > 0,
    "any": lambda n: True,
}


def _matches(rule: CountRule, count: int) -> bool:
    return _COUNT_RULES[rule](count)


def check_llm_completion(results: Sequence[LLMResult]) -> CompletionDecision:
    """Where a research stands once its latest result is recorded (the decision matrix)."""
    pending = sum(
        r.status in (LLMResultStatus.PENDING, LLMResultStatus.PROCESSING) for r in results
    )
    completed = sum(r.status == LLMResultStatus.COMPLETED for r in results)
    failed = [r.model for r in results if r.status == LLMResultStatus.FAILED]
    row = next(
        (
            row
            for row in DECISION_MATRIX
            if _matches(row.completed, completed)
            and _matches(row.failed, len(failed))
            and _matches(row.pending, pending)
        ),
        None,
    )
    # No results at all matches no row; the seed's code answers all_failed.
    decision: CompletionKind = row.decision if row else "all_failed"
    providers = failed if decision == "partial_failure" else []
    return CompletionDecision(type=decision, failed_providers=providers)


def _wait(research: Research, decision: CompletionDecision, now: datetime) -> ResearchChange:
    return unchanged(research)


def _mark_failed(research: Research, decision: CompletionDecision, now: datetime) -> ResearchChange:
    reason = reason_for_llm_failures(r.error_code for r in research.llm_results)
    return changed(research, fail(research, reason, ALL_LLMS_FAILED, now=now), now=now)


def _synthesize(research: Research, decision: CompletionDecision, now: datetime) -> ResearchChange:
    return changed(research, transition(research, ResearchStatus.SYNTHESIZING, now=now), now=now)


def _await_confirmation(
    research: Research, decision: CompletionDecision, now: datetime
) -> ResearchChange:
    failure = PartialFailure(
        failed_providers=decision.failed_providers,
        detected_at=now,
        retry_count=research.retry_count,  # carried over: two retries per research
    )
    awaiting = transition(research, ResearchStatus.AWAITING_CONFIRMATION, now=now)
    return changed(research, awaiting.model_copy(update={"partial_failure": failure}), now=now)


_ACTIONS: dict[
    CompletionKind, Callable[[Research, CompletionDecision, datetime], ResearchChange]
] = {
    "pending": _wait,
    "all_failed": _mark_failed,
    "all_completed": _synthesize,
    "partial_failure": _await_confirmation,
}


def apply_completion(research: Research, *, now: datetime | None = None) -> ResearchChange:
    """The decision for a ``processing`` research, applied."""
    if research.status != ResearchStatus.PROCESSING:
        raise conflict(
            research.status,
            f"Completion is checked while models are called; the research is {research.status}.",
        )
    decision = check_llm_completion(research.llm_results)
    return _ACTIONS[decision.type](research, decision, utc_now(now))
