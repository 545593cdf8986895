"""Synthesis (seed 001, Phase 4): whether to run it, and recording how it went.

Skip logic, one row per case:

===============  ================  ==========================================
successful LLMs  external reports  action
===============  ================  ==========================================
0                0                 error "No successful LLM results"
0                > 0               run synthesis (external reports only)
1                0                 skip synthesis, mark completed
1                > 0               run synthesis
> 1              any               run synthesis
===============  ================  ==========================================

The seed's code (``successful <= 1 && external == 0`` means skip) would skip the first
row too; its table says error, and the table is followed. Flow, for a ``synthesizing``
research: ``begin_synthesis`` completes a skipped synthesis (no ``synthesized_result``)
or fails the research; when it says ``run``, build the prompt
(``synthesis_prompt.build_synthesis_prompt``), call the synthesis model, then record
``record_synthesis_succeeded`` or ``record_synthesis_failed``.

How the synthesis call ends (the seed: success -> completed + synthesis, failure ->
failed + error; issue 22 changes the failure row):

=======================  ==================================================================
the synthesis call       the research
=======================  ==================================================================
answers                  ``completed`` with ``synthesized_result`` (``synthesis_cut_off``
                         when the answer stopped at its length limit: kept, marked)
fails, for any reason    ``completed`` without ``synthesized_result``; ``synthesis_error``
of its model             says why ("Synthesis not available: <why>. Retry runs the
                         synthesis again."), and Retry (``retry.retry_research``) runs it
                         again on the same answers
=======================  ==================================================================

A synthesis has no offline counterpart, but every model's answer arrived: failing the
research for the synthesis would hide them behind an error. ``failed`` with a synthesis
error is left for the skip logic's error row (nothing to synthesise) and for research
stored before this change; Retry re-runs their synthesis as the seed says.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from scholarstream.grounding.core import CitationAudit
from scholarstream.research.core._base import CamelModel, utc_now
from scholarstream.research.core._changes import ResearchChange, changed, fail, unchanged
from scholarstream.research.core._failures import NO_SUCCESSFUL_RESULTS, FailureReason
from scholarstream.research.core._lifecycle import ResearchStatus, conflict, transition
from scholarstream.research.core._records import Research

__all__ = [
    "SKIP_LOGIC",
    "SkipLogicRow",
    "SynthesisAction",
    "SynthesisDecision",
    "begin_synthesis",
    "decide_synthesis",
    "record_synthesis_failed",
    "record_synthesis_succeeded",
]

SynthesisAction = Literal["run", "skip", "error"]
SuccessfulCount = Literal["0", "1", ">1"]
ReportCount = Literal["0", ">0", "any"]


@dataclass(frozen=True)
class SkipLogicRow:
    successful_llms: SuccessfulCount
    external_reports: ReportCount
    action: SynthesisAction


SKIP_LOGIC: tuple[SkipLogicRow, ...] = (
    SkipLogicRow(successful_llms="0", external_reports="0", action="error"),
    SkipLogicRow(successful_llms="0", external_reports=">0", action="run"),
    SkipLogicRow(successful_llms="1", external_reports="0", action="skip"),
    SkipLogicRow(successful_llms="1", external_reports=">0", action="run"),
    SkipLogicRow(successful_llms=">1", external_reports="any", action="run"),
)


class SynthesisDecision(CamelModel):
    action: SynthesisAction
    successful_models: list[str]
    external_reports: int
    error: str | None = None


def _successful_bucket(count: int) -> SuccessfulCount:
    return "0" if count == 0 else "1" if count == 1 else ">1"


def _report_matches(rule: ReportCount, count: int) -> bool:
    return rule == "any" or (rule == "0") == (count == 0)


def decide_synthesis(research: Research) -> SynthesisDecision:
    """The skip-logic row for the research's successful results and external reports."""
    successful = [r.model for r in research.successful_results]
    reports = len(research.external_reports)
    row = next(
        row
        for row in SKIP_LOGIC
        if row.successful_llms == _successful_bucket(len(successful))
        and _report_matches(row.external_reports, reports)
    )
    return SynthesisDecision(
        action=row.action,
        successful_models=successful,
        external_reports=reports,
        error=NO_SUCCESSFUL_RESULTS if row.action == "error" else None,
    )


def _run(research: Research, decision: SynthesisDecision, now: datetime) -> ResearchChange:
    return unchanged(research)  # the caller calls the synthesis model


def _skip(research: Research, decision: SynthesisDecision, now: datetime) -> ResearchChange:
    return changed(research, transition(research, ResearchStatus.COMPLETED, now=now), now=now)


def _error(research: Research, decision: SynthesisDecision, now: datetime) -> ResearchChange:
    message = decision.error or NO_SUCCESSFUL_RESULTS
    failed = fail(
        research,
        FailureReason.SYNTHESIS_FAILED,
        f"Synthesis failed: {message}",
        now=now,
        synthesis_error=message,
    )
    return changed(research, failed, now=now)


_ACTIONS: dict[
    SynthesisAction, Callable[[Research, SynthesisDecision, datetime], ResearchChange]
] = {
    "run": _run,
    "skip": _skip,
    "error": _error,
}


def begin_synthesis(
    research: Research, *, now: datetime | None = None
) -> tuple[SynthesisDecision, ResearchChange]:
    """Apply the skip logic to a ``synthesizing`` research. When the decision is ``run``
    the research is unchanged and the caller runs the synthesis."""
    _require_synthesizing(research)
    decision = decide_synthesis(research)
    return decision, _ACTIONS[decision.action](research, decision, utc_now(now))


def record_synthesis_succeeded(
    research: Research,
    synthesized_result: str,
    *,
    cut_off: bool = False,
    audit: CitationAudit | None = None,
    now: datetime | None = None,
) -> ResearchChange:
    """``cut_off``: the answer stopped at its length limit; it is kept, and marked.
    ``audit``: its citations of the evidence pack, checked."""
    _require_synthesizing(research)
    moment = utc_now(now)
    completed = transition(research, ResearchStatus.COMPLETED, now=moment).model_copy(
        update={
            "synthesized_result": synthesized_result,
            "synthesis_cut_off": cut_off,
            "synthesis_audit": audit,
        }
    )
    return changed(research, completed, now=moment)


def record_synthesis_failed(
    research: Research,
    error: str,
    *,
    error_code: str | None = None,
    now: datetime | None = None,
) -> ResearchChange:
    """The synthesis call failed (an error, no answer in time, an answer that could not be
    used): the research completes with the models' answers and without a synthesis,
    ``synthesis_error`` says why, and Retry runs the synthesis again (see the module).
    ``error_code`` as in ``results.record_call_failed``; kept as ``synthesis_error_code``
    (a refused key sends the user to Settings)."""
    _require_synthesizing(research)
    moment = utc_now(now)
    completed = transition(research, ResearchStatus.COMPLETED, now=moment).model_copy(
        update={
            "synthesized_result": None,
            "synthesis_cut_off": False,
            "synthesis_error": error,
            "synthesis_error_code": error_code,
        }
    )
    return changed(research, completed, now=moment)


def _require_synthesizing(research: Research) -> None:
    if research.status != ResearchStatus.SYNTHESIZING:
        raise conflict(
            research.status,
            f"Synthesis runs on a synthesizing research; this one is {research.status}.",
        )
