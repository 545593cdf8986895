"""What a research card shows (seed 001, "Frontend Display Logic"), for the web UI.

=========================  ==========================================  ==========================
status                     card display                                ``CardDisplay``
=========================  ==========================================  ==========================
draft                      edit form                                   ``edit_form``
processing                 progress indicator per LLM                  ``progress_per_llm``
synthesizing               "Synthesizing results..."                   ``synthesizing``
retrying                   "Retrying failed providers..."              ``retrying``
awaiting_confirmation      Proceed/Retry/Cancel dialog                 ``confirmation_dialog``
completed (with synth.)    synthesis + individual reports              ``synthesis_and_reports``
completed (no synthesis)   "Synthesis not available" + the report      ``reports_without_synthesis``
failed                     error message + Retry button                ``error_with_retry``
=========================  ==========================================  ==========================

The "Synthesis not available" notice shows under the seed's condition (one answer, no
external report: nothing to combine; its ``inputContexts`` are this package's
``external_reports``) and, since issue 22, when the synthesis failed and the research
completed without it (``synthesis_error``). ``synthesis_notice`` is its one wording, read
by the web page (status.js has the same), the CLI and the shareable report:

========================================  ================================================
case                                      notice
========================================  ================================================
completed, the synthesis failed           "Synthesis not available: <why>. Retry runs the
                                          synthesis again."
completed, the seed's condition           "Synthesis not available: only one model
                                          answered and no other report was given, so
                                          there was nothing to combine."
anything else                             none
========================================  ================================================
"""

from __future__ import annotations

from collections.abc import Callable
from enum import StrEnum

from scholarstream.research.core._lifecycle import ResearchStatus
from scholarstream.research.core._records import Research

__all__ = [
    "CARD_DISPLAY",
    "NOTHING_TO_COMBINE",
    "SYNTHESIS_FAILED_NOTICE",
    "CardDisplay",
    "card_display",
    "synthesis_not_available",
    "synthesis_notice",
]

NOTHING_TO_COMBINE = (
    "Synthesis not available: only one model answered and no other report was given, so "
    "there was nothing to combine."
)
SYNTHESIS_FAILED_NOTICE = "Synthesis not available: {reason}. Retry runs the synthesis again."


class CardDisplay(StrEnum):
    EDIT_FORM = "edit_form"
    PROGRESS_PER_LLM = "progress_per_llm"
    SYNTHESIZING = "synthesizing"
    RETRYING = "retrying"
    CONFIRMATION_DIALOG = "confirmation_dialog"
    SYNTHESIS_AND_REPORTS = "synthesis_and_reports"
    REPORTS_WITHOUT_SYNTHESIS = "reports_without_synthesis"
    ERROR_WITH_RETRY = "error_with_retry"


def _completed_card(research: Research) -> CardDisplay:
    if research.synthesized_result:
        return CardDisplay.SYNTHESIS_AND_REPORTS
    return CardDisplay.REPORTS_WITHOUT_SYNTHESIS


CARD_DISPLAY: dict[ResearchStatus, Callable[[Research], CardDisplay]] = {
    ResearchStatus.DRAFT: lambda r: CardDisplay.EDIT_FORM,
    ResearchStatus.PROCESSING: lambda r: CardDisplay.PROGRESS_PER_LLM,
    ResearchStatus.SYNTHESIZING: lambda r: CardDisplay.SYNTHESIZING,
    ResearchStatus.RETRYING: lambda r: CardDisplay.RETRYING,
    ResearchStatus.AWAITING_CONFIRMATION: lambda r: CardDisplay.CONFIRMATION_DIALOG,
    ResearchStatus.COMPLETED: _completed_card,
    ResearchStatus.FAILED: lambda r: CardDisplay.ERROR_WITH_RETRY,
}


def card_display(research: Research) -> CardDisplay:
    return CARD_DISPLAY[research.status](research)


def _nothing_to_combine(research: Research) -> bool:
    """The seed's ``showSynthesisNotAvailable``."""
    return (
        research.status == ResearchStatus.COMPLETED
        and not research.synthesized_result
        and len(research.successful_results) <= 1
        and not research.external_reports
    )


def _synthesis_failed(research: Research) -> bool:
    return (
        research.status == ResearchStatus.COMPLETED
        and not research.synthesized_result
        and research.synthesis_error is not None
    )


def synthesis_not_available(research: Research) -> bool:
    """The seed's ``showSynthesisNotAvailable``, or a completed research whose synthesis
    failed."""
    return _nothing_to_combine(research) or _synthesis_failed(research)


def synthesis_notice(research: Research) -> str | None:
    """What the user is told instead of a synthesis (see the module), or ``None``."""
    if _synthesis_failed(research):
        reason = (research.synthesis_error or "").strip().rstrip(".") or "the synthesis failed"
        return SYNTHESIS_FAILED_NOTICE.format(reason=reason)
    if _nothing_to_combine(research):
        return NOTHING_TO_COMBINE
    return None
