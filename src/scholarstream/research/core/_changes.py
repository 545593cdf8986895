"""What every research operation returns: the new record, the events to publish and the
model calls to dispatch. The caller stores the record first, then publishes and
dispatches; a ``synthesizing`` research is the caller's cue to run the synthesis."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from pydantic import Field

from scholarstream.research.core._base import CamelModel, utc_now
from scholarstream.research.core._events import LLMCallEvent, ResearchEvent, status_event
from scholarstream.research.core._failures import FailureReason
from scholarstream.research.core._lifecycle import ResearchStatus, transition
from scholarstream.research.core._records import Research

__all__ = ["ResearchChange", "changed", "fail", "unchanged"]


class ResearchChange(CamelModel):
    research: Research
    events: list[ResearchEvent] = Field(default_factory=list)
    llm_calls: list[LLMCallEvent] = Field(
        default_factory=list, description="Models to call (again), one message each."
    )

    @property
    def models_to_call(self) -> list[str]:
        return [call.model for call in self.llm_calls]


def changed(
    before: Research,
    after: Research,
    *,
    now: datetime,
    events: Sequence[ResearchEvent] = (),
    llm_calls: Sequence[LLMCallEvent] = (),
) -> ResearchChange:
    """``after`` with ``events``, then the status event if its status changed."""
    announced = status_event(before, after, now)
    return ResearchChange(
        research=after,
        events=[*events, *([announced] if announced else [])],
        llm_calls=list(llm_calls),
    )


def unchanged(research: Research) -> ResearchChange:
    return ResearchChange(research=research)


def fail(
    research: Research,
    reason: FailureReason,
    error: str,
    *,
    now: datetime | None = None,
    synthesis_error: str | None = None,
) -> Research:
    """``research`` failed for ``reason``. A research already failed stays failed with the
    new reason (a retry refused after the maximum retries)."""
    moment = utc_now(now)
    failed = (
        research
        if research.status == ResearchStatus.FAILED
        else transition(research, ResearchStatus.FAILED, now=moment)
    )
    return failed.model_copy(
        update={
            "error": error,
            "failure_reason": reason,
            "synthesis_error": synthesis_error,
            "updated_at": moment,
        }
    )
