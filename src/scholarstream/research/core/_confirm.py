"""The user's answer to a partial failure (seed 001, Phase 5, ``POST /research/:id/confirm``).

=======  ====================================================================================
action   effect
=======  ====================================================================================
proceed  run synthesis with the successful results only: status ``synthesizing``
retry    re-run the failed models (at most 2 retries; then ``failed``, "Max retries exceeded")
cancel   ``failed`` with "Cancelled by user"
=======  ====================================================================================

Only a research in ``awaiting_confirmation`` can be confirmed (``ConflictError`` otherwise).
The returned change's ``llm_calls`` names the models to call again (retry only).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from enum import StrEnum

from scholarstream.research.core._base import CamelModel, utc_now
from scholarstream.research.core._changes import ResearchChange, changed, fail
from scholarstream.research.core._failures import CANCELLED_BY_USER, FailureReason
from scholarstream.research.core._lifecycle import ResearchStatus, conflict, transition
from scholarstream.research.core._records import Research
from scholarstream.research.core._retry import retry_failed_llms

__all__ = ["CONFIRM_ACTIONS", "ConfirmAction", "ConfirmRequest", "confirm"]


class ConfirmAction(StrEnum):
    PROCEED = "proceed"
    RETRY = "retry"
    CANCEL = "cancel"


class ConfirmRequest(CamelModel):
    """The body of ``POST /research/:id/confirm``."""

    action: ConfirmAction


def _proceed(research: Research, now: datetime) -> ResearchChange:
    return changed(research, transition(research, ResearchStatus.SYNTHESIZING, now=now), now=now)


def _retry(research: Research, now: datetime) -> ResearchChange:
    return retry_failed_llms(research, now=now)


def _cancel(research: Research, now: datetime) -> ResearchChange:
    cancelled = fail(research, FailureReason.CANCELLED_BY_USER, CANCELLED_BY_USER, now=now)
    return changed(research, cancelled, now=now)


CONFIRM_ACTIONS: dict[ConfirmAction, Callable[[Research, datetime], ResearchChange]] = {
    ConfirmAction.PROCEED: _proceed,
    ConfirmAction.RETRY: _retry,
    ConfirmAction.CANCEL: _cancel,
}


def confirm(
    research: Research, action: ConfirmAction, *, now: datetime | None = None
) -> ResearchChange:
    if research.status != ResearchStatus.AWAITING_CONFIRMATION:
        raise conflict(
            research.status,
            f"Only a research awaiting confirmation can be confirmed; this one is "
            f"{research.status}.",
        )
    return CONFIRM_ACTIONS[ConfirmAction(action)](research, utc_now(now))
