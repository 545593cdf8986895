"""The research lifecycle events (the seed's ``research-events`` topic) and the ``llm.call``
message (its ``llm-call`` topic). One typed model per event, discriminated by ``type``.

The seed names the two topics and the ``llm.call`` event but not the lifecycle events
themselves; they are named here ``research.<what happened>``, in the style of ``llm.call``,
one per status a research enters, plus one per model result and one for sharing:

==============================  ===============================================================
type                            when
==============================  ===============================================================
research.started                draft -> processing; one ``llm.call`` per selected model
research.llm_completed          one model answered
research.llm_failed             one model's call failed
research.awaiting_confirmation  some models failed, the others answered: proceed/retry/cancel?
research.retrying               failed models reset to pending and called again
research.synthesizing           synthesis begins (it may still be skipped), or runs again
research.completed              finished, with or without a synthesis (a synthesis that
                                failed: ``synthesisError``); also after Retry re-ran it
research.failed                 failed; carries the error summary's reason and user action
research.shared                 the shareable report was stored (notify with its URL)
==============================  ===============================================================
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from datetime import datetime
from typing import Annotated, Literal

from pydantic import Field, TypeAdapter

from scholarstream.research.core._base import CamelModel
from scholarstream.research.core._failures import (
    ERROR_SUMMARY,
    FailureReason,
    UserAction,
    error_summary,
)
from scholarstream.research.core._lifecycle import ResearchStatus
from scholarstream.research.core._records import LLMResultStatus, Research

__all__ = [
    "LLMCallEvent",
    "ResearchAwaitingConfirmation",
    "ResearchCompleted",
    "ResearchEvent",
    "ResearchFailed",
    "ResearchLLMCompleted",
    "ResearchLLMFailed",
    "ResearchRetrying",
    "ResearchShared",
    "ResearchStarted",
    "ResearchSynthesizing",
    "research_event_adapter",
    "status_event",
]


class LLMCallEvent(CamelModel):
    """Call one model for one research (the seed's ``llm.call``). The prompt is read from
    the research when the call runs, so a message stays small and never goes stale."""

    type: Literal["llm.call"] = "llm.call"
    research_id: uuid.UUID
    model: str
    attempt: int


class _ResearchEventBase(CamelModel):
    research_id: uuid.UUID
    occurred_at: datetime


class ResearchStarted(_ResearchEventBase):
    type: Literal["research.started"] = "research.started"
    models: list[str]
    synthesis_llm: str | None


class ResearchLLMCompleted(_ResearchEventBase):
    type: Literal["research.llm_completed"] = "research.llm_completed"
    model: str
    attempt: int


class ResearchLLMFailed(_ResearchEventBase):
    type: Literal["research.llm_failed"] = "research.llm_failed"
    model: str
    attempt: int
    error: str


class ResearchAwaitingConfirmation(_ResearchEventBase):
    type: Literal["research.awaiting_confirmation"] = "research.awaiting_confirmation"
    failed_providers: list[str]
    retry_count: int


class ResearchRetrying(_ResearchEventBase):
    type: Literal["research.retrying"] = "research.retrying"
    models: list[str] = Field(description="The failed models being called again.")
    retry_count: int


class ResearchSynthesizing(_ResearchEventBase):
    type: Literal["research.synthesizing"] = "research.synthesizing"
    successful_models: list[str]
    external_reports: int


class ResearchCompleted(_ResearchEventBase):
    type: Literal["research.completed"] = "research.completed"
    synthesized: bool
    synthesis_error: str | None = Field(
        default=None,
        description='Why there is no synthesis when it failed ("Synthesis not available"; '
        "Retry runs it again).",
    )


class ResearchFailed(_ResearchEventBase):
    type: Literal["research.failed"] = "research.failed"
    reason: FailureReason
    error: str
    user_action: UserAction


class ResearchShared(_ResearchEventBase):
    type: Literal["research.shared"] = "research.shared"
    share_url: str


ResearchEvent = Annotated[
    ResearchStarted
    | ResearchLLMCompleted
    | ResearchLLMFailed
    | ResearchAwaitingConfirmation
    | ResearchRetrying
    | ResearchSynthesizing
    | ResearchCompleted
    | ResearchFailed
    | ResearchShared,
    Field(discriminator="type"),
]
research_event_adapter: TypeAdapter[ResearchEvent] = TypeAdapter(ResearchEvent)


def _started(research: Research, at: datetime) -> ResearchEvent:
    return ResearchStarted(
        research_id=research.id,
        occurred_at=at,
        models=[r.model for r in research.llm_results],
        synthesis_llm=research.synthesis_llm,
    )


def _awaiting_confirmation(research: Research, at: datetime) -> ResearchEvent:
    failure = research.partial_failure
    return ResearchAwaitingConfirmation(
        research_id=research.id,
        occurred_at=at,
        failed_providers=failure.failed_providers if failure else research.failed_models,
        retry_count=research.retry_count,
    )


def _retrying(research: Research, at: datetime) -> ResearchEvent:
    return ResearchRetrying(
        research_id=research.id,
        occurred_at=at,
        models=[r.model for r in research.results_in(LLMResultStatus.PENDING)],
        retry_count=research.retry_count,
    )


def _synthesizing(research: Research, at: datetime) -> ResearchEvent:
    return ResearchSynthesizing(
        research_id=research.id,
        occurred_at=at,
        successful_models=[r.model for r in research.successful_results],
        external_reports=len(research.external_reports),
    )


def _completed(research: Research, at: datetime) -> ResearchEvent:
    return ResearchCompleted(
        research_id=research.id,
        occurred_at=at,
        synthesized=research.synthesized_result is not None,
        synthesis_error=research.synthesis_error,
    )


def _failed(research: Research, at: datetime) -> ResearchEvent:
    reason = research.failure_reason or FailureReason.ALL_LLMS_FAILED
    summary = error_summary(research)  # what the user can do with this research, now
    return ResearchFailed(
        research_id=research.id,
        occurred_at=at,
        reason=reason,
        error=research.error or ERROR_SUMMARY[reason].error_type,
        user_action=summary.user_action if summary else ERROR_SUMMARY[reason].user_action,
    )


_STATUS_EVENTS: dict[ResearchStatus, Callable[[Research, datetime], ResearchEvent]] = {
    ResearchStatus.PROCESSING: _started,
    ResearchStatus.AWAITING_CONFIRMATION: _awaiting_confirmation,
    ResearchStatus.RETRYING: _retrying,
    ResearchStatus.SYNTHESIZING: _synthesizing,
    ResearchStatus.COMPLETED: _completed,
    ResearchStatus.FAILED: _failed,
}


def status_event(before: Research, after: Research, at: datetime) -> ResearchEvent | None:
    """The event announcing how ``after`` differs from ``before`` in status (or, staying
    failed, in why it failed); ``None`` when nothing worth announcing changed.

    retrying -> processing announces nothing: ``research.retrying`` already did."""
    same_status = before.status == after.status
    if same_status and (after.status != ResearchStatus.FAILED or before.error == after.error):
        return None
    if before.status == ResearchStatus.RETRYING and after.status == ResearchStatus.PROCESSING:
        return None
    build = _STATUS_EVENTS.get(after.status)
    return build(after, at) if build else None
