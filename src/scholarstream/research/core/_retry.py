"""Retries: calling failed models again (seed 001, Phase 5 "Retry Flow"), and the retry of
a failed research (Phase 6, ``POST /research/:id/retry``).

Phase 5, ``retry_failed_llms``, from ``awaiting_confirmation`` or ``failed``:

==============  =============================================================================
retry count     effect
==============  =============================================================================
< 2             failed results reset to ``pending`` (next attempt, content and error cleared),
                completed results kept, retry count + 1, status ``retrying``, one ``llm.call``
                per reset model
>= 2            ``failed``, error "Max retries exceeded" (no call)
==============  =============================================================================

Phase 6, ``retry_research``: the seed's table, checked in this order, with the rows that
keep a research with answers recoverable once no model may be retried:

====================================  ================  ======================================
current status                        action            result
====================================  ================  ======================================
``failed`` + failed LLMs that may     retry LLMs        ``retrying`` -> processing (Phase 5)
be retried (retry count < 2)
``failed`` + failed LLMs, no retry    re-run synthesis  ``synthesizing`` -> ``completed`` /
left, answers or reports to                             ``failed``, on the answers (and
synthesise                                              external reports) already received
``failed`` + failed LLMs, no retry    retry LLMs        stays ``failed``: "Max retries
left, nothing to synthesise                             exceeded" (Phase 5)
``failed`` + synthesis error          re-run synthesis  ``synthesizing`` -> ``completed``/``failed``
``failed`` + nothing to retry         no-op             ``completed`` (idempotent)
``completed`` + synthesis error       re-run synthesis  ``synthesizing`` -> ``completed``, on
("Synthesis not available")                             the same answers (failed models are
                                                        not called again)
any other status                      error             ``ConflictError`` (HTTP 409)
====================================  ================  ======================================

The ``completed`` row is issue 22's: a synthesis that fails completes the research without
one (``synthesis.record_synthesis_failed``) instead of failing it, so its Retry must be
reachable from ``completed``. It re-runs only the synthesis: the user already has the
answers (and, after Proceed, chose to go on without the failed models); its count
(``synthesis_retries``) makes each run's report shared again.

Retrying models throws away a synthesis error and any synthesis: the synthesis runs again
once the retried models have answered. Re-running the synthesis keeps every model result.
So a research that holds a successful answer (or an external report) is never a dead end:
while a failed model may be retried, Retry calls it again; after that, Retry runs the
synthesis (which the skip logic completes without one for a single answer).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

from scholarstream.research.core._base import utc_now
from scholarstream.research.core._changes import ResearchChange, changed, fail
from scholarstream.research.core._events import LLMCallEvent
from scholarstream.research.core._failures import (
    MAX_RETRIES_EXCEEDED,
    FailureReason,
    RetryFromFailedAction,
)
from scholarstream.research.core._lifecycle import ResearchStatus, conflict, transition
from scholarstream.research.core._records import (
    LLMResult,
    LLMResultStatus,
    PartialFailure,
    Research,
)
from scholarstream.research.core._synthesis import decide_synthesis

__all__ = [
    "MAX_RETRIES",
    "RETRY_FROM_FAILED",
    "RetryFromFailedAction",
    "RetryFromFailedRow",
    "RetryOutcome",
    "can_retry",
    "retries_left",
    "retry_action",
    "retry_failed_llms",
    "retry_research",
    "synthesis_retryable",
]

MAX_RETRIES = 2


@dataclass(frozen=True)
class RetryFromFailedRow:
    condition: str
    applies: Callable[[Research], bool]
    action: RetryFromFailedAction


def retries_left(research: Research) -> int:
    """How many more times the failed models may be called again (two per research)."""
    return max(0, MAX_RETRIES - research.retry_count)


def _can_synthesise(research: Research) -> bool:
    """Whether the synthesis has something to work on: an answer or an external report."""
    return decide_synthesis(research).action != "error"


RETRY_FROM_FAILED: tuple[RetryFromFailedRow, ...] = (
    RetryFromFailedRow(
        "failed LLMs that may be retried",
        lambda r: bool(r.failed_models) and retries_left(r) > 0,
        "retry_llms",
    ),
    RetryFromFailedRow(
        "failed LLMs, no retry left, answers to synthesise",
        lambda r: bool(r.failed_models) and _can_synthesise(r),
        "rerun_synthesis",
    ),
    RetryFromFailedRow(
        "failed LLMs, no retry left, nothing to synthesise",
        lambda r: bool(r.failed_models),
        "retry_llms",
    ),
    RetryFromFailedRow(
        "synthesis error", lambda r: r.synthesis_error is not None, "rerun_synthesis"
    ),
    RetryFromFailedRow("nothing to retry", lambda r: True, "no_op"),
)


class RetryOutcome(ResearchChange):
    action: RetryFromFailedAction


def retry_failed_llms(research: Research, *, now: datetime | None = None) -> ResearchChange:
    """Phase 5: call the failed models again, or fail once two retries were used."""
    moment = utc_now(now)
    if research.status not in (ResearchStatus.AWAITING_CONFIRMATION, ResearchStatus.FAILED):
        raise conflict(
            research.status,
            f"Failed models are retried from awaiting_confirmation or failed; "
            f"this research is {research.status}.",
        )
    failed = research.results_in(LLMResultStatus.FAILED)
    if not failed:
        raise conflict(research.status, "No model of this research has failed.")
    if research.retry_count >= MAX_RETRIES:
        # A synthesis error is kept: it still says what failed, and what a retry re-runs.
        maxed = fail(
            research,
            FailureReason.MAX_RETRIES_EXCEEDED,
            MAX_RETRIES_EXCEEDED,
            now=moment,
            synthesis_error=research.synthesis_error,
        )
        return changed(research, maxed, now=moment)
    retrying = transition(research, ResearchStatus.RETRYING, now=moment).model_copy(
        update={
            "llm_results": [
                _reset(r) if r.status == LLMResultStatus.FAILED else r for r in research.llm_results
            ],
            "partial_failure": _counted_retry(research, failed, moment),
            "synthesized_result": None,
        }
    )
    calls = [
        LLMCallEvent(research_id=research.id, model=r.model, attempt=r.attempt + 1) for r in failed
    ]
    return changed(research, retrying, now=moment, llm_calls=calls)


def retry_action(research: Research) -> RetryFromFailedAction:
    """Phase 6: the first row of ``RETRY_FROM_FAILED`` that applies to a failed research."""
    return next(row.action for row in RETRY_FROM_FAILED if row.applies(research))


def synthesis_retryable(research: Research) -> bool:
    """A completed research whose synthesis failed ("Synthesis not available"): Retry
    runs the synthesis again."""
    return research.status == ResearchStatus.COMPLETED and research.synthesis_error is not None


def can_retry(research: Research) -> bool:
    """Whether ``retry_research`` accepts the research (else it is a 409)."""
    return research.status == ResearchStatus.FAILED or synthesis_retryable(research)


def retry_research(research: Research, *, now: datetime | None = None) -> RetryOutcome:
    """Phase 6 (``POST /research/:id/retry``): retry a failed research, or the synthesis
    of a completed one whose synthesis failed; any other status is a ``ConflictError``
    (409)."""
    if synthesis_retryable(research):
        action: RetryFromFailedAction = "rerun_synthesis"
        change = _synthesise_again(research, utc_now(now))
        return RetryOutcome(
            action=action,
            research=change.research,
            events=change.events,
            llm_calls=change.llm_calls,
        )
    if research.status != ResearchStatus.FAILED:
        raise conflict(
            research.status,
            f"Only a failed research can be retried (or a completed one whose synthesis "
            f"failed); this one is {research.status}.",
        )
    action = retry_action(research)
    change = _RETRY_ACTIONS[action](research, utc_now(now))
    return RetryOutcome(
        action=action, research=change.research, events=change.events, llm_calls=change.llm_calls
    )


def _rerun_synthesis(research: Research, now: datetime) -> ResearchChange:
    return changed(research, transition(research, ResearchStatus.SYNTHESIZING, now=now), now=now)


def _synthesise_again(research: Research, now: datetime) -> ResearchChange:
    """A completed research without synthesis back to ``synthesizing``: its answers and
    shareable report are kept; the next run's report is shared again (a new edition)."""
    again = transition(research, ResearchStatus.SYNTHESIZING, now=now).model_copy(
        update={"synthesis_retries": research.synthesis_retries + 1}
    )
    return changed(research, again, now=now)


def _nothing_to_retry(research: Research, now: datetime) -> ResearchChange:
    return changed(research, transition(research, ResearchStatus.COMPLETED, now=now), now=now)


def _retry_llms(research: Research, now: datetime) -> ResearchChange:
    return retry_failed_llms(research, now=now)


_RETRY_ACTIONS: dict[RetryFromFailedAction, Callable[[Research, datetime], ResearchChange]] = {
    "retry_llms": _retry_llms,
    "rerun_synthesis": _rerun_synthesis,
    "no_op": _nothing_to_retry,
}


def _reset(result: LLMResult) -> LLMResult:
    return LLMResult(model=result.model, attempt=result.attempt + 1)


def _counted_retry(research: Research, failed: list[LLMResult], now: datetime) -> PartialFailure:
    """The partial failure with one more retry. A research that failed outright (all
    models) has none yet: it is recorded here, so the two-retry limit holds for it too."""
    if research.partial_failure is not None:
        return research.partial_failure.model_copy(
            update={"retry_count": research.partial_failure.retry_count + 1}
        )
    ended = [r.completed_at for r in failed if r.completed_at is not None]
    return PartialFailure(
        failed_providers=[r.model for r in failed],
        detected_at=max(ended, default=now),
        retry_count=1,
    )
