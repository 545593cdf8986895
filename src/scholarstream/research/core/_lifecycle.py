"""The research status state machine (seed 001, "Status State Machine").

==========================  ===================================================================
from                        to
==========================  ===================================================================
draft                       processing (start)
processing                  synthesizing (all models answered), awaiting_confirmation (some
                            failed), failed (all failed)
synthesizing                completed (synthesised, or synthesis skipped), failed
awaiting_confirmation       synthesizing (proceed), retrying (retry), failed (cancel, or retry
                            after the maximum number of retries)
retrying                    processing (the failed models are being called again)
failed                      retrying (retry failed models), synthesizing (re-run synthesis),
                            completed (nothing to retry)
completed                   synthesizing (Retry of a synthesis that failed: the research had
                            completed without one, "Synthesis not available")
==========================  ===================================================================

The seed's ``completed`` is terminal and its failed synthesis fails the research. Issue 22
changes that: a synthesis that fails for any reason of its model leaves every answer
usable, so the research completes without a synthesis (``synthesis_error`` says why) and
Retry runs the synthesis again: ``completed -> synthesizing`` is that retry and nothing
else (``retry.retry_research``).

``transition`` is the only place a research's status changes. It keeps the invariants
that go with a status: a research that is not ``failed`` carries no error, no failure
reason and no synthesis error (``synthesis.record_synthesis_failed`` sets the synthesis
error of a research it completes, after the transition); ``started_at`` is set on the
first start and ``completed_at`` when the research completes.
"""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import TYPE_CHECKING

from scholarstream.errors import ConflictError
from scholarstream.research.core._base import utc_now

if TYPE_CHECKING:
    from scholarstream.research.core._records import Research

__all__ = [
    "STATUS_HINTS",
    "TRANSITIONS",
    "ResearchStatus",
    "allowed_transitions",
    "can_transition",
    "conflict",
    "transition",
]


class ResearchStatus(StrEnum):
    DRAFT = "draft"
    PROCESSING = "processing"
    SYNTHESIZING = "synthesizing"
    AWAITING_CONFIRMATION = "awaiting_confirmation"
    RETRYING = "retrying"
    COMPLETED = "completed"
    FAILED = "failed"


_S = ResearchStatus

TRANSITIONS: dict[ResearchStatus, frozenset[ResearchStatus]] = {
    _S.DRAFT: frozenset({_S.PROCESSING}),
    _S.PROCESSING: frozenset({_S.SYNTHESIZING, _S.AWAITING_CONFIRMATION, _S.FAILED}),
    _S.SYNTHESIZING: frozenset({_S.COMPLETED, _S.FAILED}),
    _S.AWAITING_CONFIRMATION: frozenset({_S.SYNTHESIZING, _S.RETRYING, _S.FAILED}),
    _S.RETRYING: frozenset({_S.PROCESSING}),
    _S.FAILED: frozenset({_S.RETRYING, _S.SYNTHESIZING, _S.COMPLETED}),
    _S.COMPLETED: frozenset({_S.SYNTHESIZING}),
}

STATUS_HINTS: dict[ResearchStatus, str] = {
    _S.DRAFT: "Start the research first.",
    _S.PROCESSING: "Wait until every selected model has answered.",
    _S.SYNTHESIZING: "Wait for the synthesis to finish.",
    _S.AWAITING_CONFIRMATION: (
        "Some models failed: confirm with 'proceed' (synthesise what succeeded), "
        "'retry' (call the failed models again) or 'cancel'."
    ),
    _S.RETRYING: "Wait while the failed models are called again.",
    _S.COMPLETED: (
        "It is finished; create a new research to ask again (Retry runs a synthesis that "
        "failed again)."
    ),
    _S.FAILED: "Retry it, or create a new research.",
}
"""What a user can do with a research in each status; the hint of every conflict."""


def allowed_transitions(status: ResearchStatus) -> frozenset[ResearchStatus]:
    return TRANSITIONS[status]


def can_transition(current: ResearchStatus, target: ResearchStatus) -> bool:
    return target in TRANSITIONS[current]


def conflict(status: ResearchStatus, message: str) -> ConflictError:
    """A ``ConflictError`` (HTTP 409) for a research in ``status``, with what to do instead."""
    return ConflictError(message, hint=STATUS_HINTS[status])


def transition(
    research: Research, target: ResearchStatus, *, now: datetime | None = None
) -> Research:
    """``research`` moved to ``target``, or ``ConflictError`` naming the illegal move."""
    if not can_transition(research.status, target):
        raise conflict(
            research.status,
            f"A research that is {research.status} cannot become {target}.",
        )
    moment = utc_now(now)
    update: dict[str, object] = {"status": target, "updated_at": moment}
    if target != _S.FAILED:
        update |= {
            "error": None,
            "failure_reason": None,
            "synthesis_error": None,
            "synthesis_error_code": None,
        }
    if target == _S.PROCESSING and research.started_at is None:
        update["started_at"] = moment
    if target == _S.COMPLETED:
        update["completed_at"] = moment
    return research.model_copy(update=update)
