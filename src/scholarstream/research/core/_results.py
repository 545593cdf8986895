"""Recording one model's call on its research (seed 001, Phase 2 and "LLM Result States").

==========  ==================================================================
from        to
==========  ==================================================================
pending     processing (call started), completed, failed (outcome recorded)
processing  completed, failed
completed   nothing
failed      pending (reset for a retry, ``retry.retry_failed_llms``)
==========  ==================================================================

Every record names the ``attempt`` it belongs to: an answer to an earlier attempt (a slow
call that came back after the result was reset for a retry) is refused with
``ConflictError``. Recording exactly what is already recorded changes nothing, so a
durable step that runs again after a crash is harmless. The first record made while the
research is ``retrying`` moves it back to ``processing`` (the seed's "back to LLM
processing"). After recording an outcome, call ``completion.apply_completion``.
"""

from __future__ import annotations

from datetime import datetime

from scholarstream.errors import ConflictError, InvalidInputError
from scholarstream.grounding.core import CitationAudit
from scholarstream.research.core._base import utc_now
from scholarstream.research.core._changes import ResearchChange, changed, unchanged
from scholarstream.research.core._events import (
    ResearchEvent,
    ResearchLLMCompleted,
    ResearchLLMFailed,
)
from scholarstream.research.core._lifecycle import ResearchStatus, conflict, transition
from scholarstream.research.core._records import LLMResult, LLMResultStatus, Research

__all__ = [
    "LLM_RESULT_TRANSITIONS",
    "record_call_failed",
    "record_call_started",
    "record_call_succeeded",
]

_L = LLMResultStatus

LLM_RESULT_TRANSITIONS: dict[LLMResultStatus, frozenset[LLMResultStatus]] = {
    _L.PENDING: frozenset({_L.PROCESSING, _L.COMPLETED, _L.FAILED}),
    _L.PROCESSING: frozenset({_L.COMPLETED, _L.FAILED}),
    _L.COMPLETED: frozenset(),
    _L.FAILED: frozenset({_L.PENDING}),
}

_CALLING = (ResearchStatus.PROCESSING, ResearchStatus.RETRYING)


def record_call_started(
    research: Research, model: str, attempt: int, *, now: datetime | None = None
) -> ResearchChange:
    moment = utc_now(now)
    current = _current_result(research, model, attempt)
    if current.status == _L.PROCESSING:
        return unchanged(research)
    updated = current.model_copy(update={"status": _L.PROCESSING, "started_at": moment})
    return _store(research, current, updated, moment, event=None)


def record_call_succeeded(
    research: Research,
    model: str,
    attempt: int,
    content: str,
    *,
    cut_off: bool = False,
    audit: CitationAudit | None = None,
    now: datetime | None = None,
) -> ResearchChange:
    """``cut_off``: the answer stopped at its length limit (the provider's finish reason
    ``length``): it is kept as it came and marked, not failed (issue 22). ``audit``: its
    citations checked against the evidence pack."""
    moment = utc_now(now)
    current = _current_result(research, model, attempt)
    if current.status == _L.COMPLETED and (current.content, current.cut_off) == (content, cut_off):
        return unchanged(research)
    updated = current.model_copy(
        update={
            "status": _L.COMPLETED,
            "content": content,
            "cut_off": cut_off,
            "audit": audit,
            "completed_at": moment,
        }
    )
    event = ResearchLLMCompleted(
        research_id=research.id, occurred_at=moment, model=model, attempt=attempt
    )
    return _store(research, current, updated, moment, event=event)


def record_call_failed(
    research: Research,
    model: str,
    attempt: int,
    error: str,
    *,
    error_code: str | None = None,
    now: datetime | None = None,
) -> ResearchChange:
    """``error_code``: the product's error code of the failure (``LLMError.code``), or
    ``'api_key_invalid'`` when the provider refused the key; it decides the error summary."""
    moment = utc_now(now)
    current = _current_result(research, model, attempt)
    if current.status == _L.FAILED and (current.error, current.error_code) == (error, error_code):
        return unchanged(research)
    updated = current.model_copy(
        update={
            "status": _L.FAILED,
            "error": error,
            "error_code": error_code,
            "completed_at": moment,
        }
    )
    event = ResearchLLMFailed(
        research_id=research.id, occurred_at=moment, model=model, attempt=attempt, error=error
    )
    return _store(research, current, updated, moment, event=event)


def _current_result(research: Research, model: str, attempt: int) -> LLMResult:
    if research.status not in _CALLING:
        raise conflict(
            research.status,
            f"Cannot record a call of {model}: the research is {research.status}, "
            "not calling models.",
        )
    result = research.result_for(model)
    if result is None:
        raise InvalidInputError(
            f"{model} is not one of this research's models.",
            hint=f"Its models are: {', '.join(r.model for r in research.llm_results)}.",
        )
    if result.attempt != attempt:
        raise ConflictError(
            f"The call of {model} belongs to attempt {attempt}; the current one is "
            f"attempt {result.attempt}.",
            hint="Drop this outcome: the model has been called again since.",
        )
    return result


def _store(
    research: Research,
    current: LLMResult,
    updated: LLMResult,
    now: datetime,
    *,
    event: ResearchEvent | None,
) -> ResearchChange:
    if updated.status not in LLM_RESULT_TRANSITIONS[current.status]:
        raise ConflictError(
            f"The result of {current.model} is already {current.status}; "
            f"it cannot become {updated.status}.",
            hint="A result is recorded once per attempt; retry the research to call it again.",
        )
    calling = (
        transition(research, ResearchStatus.PROCESSING, now=now)
        if research.status == ResearchStatus.RETRYING
        else research
    )
    after = calling.model_copy(
        update={
            "llm_results": [
                updated if r.model == current.model else r for r in research.llm_results
            ],
            "updated_at": now,
        }
    )
    return changed(research, after, now=now, events=[event] if event else [])
