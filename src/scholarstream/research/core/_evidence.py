"""The evidence pack of a research (issue 24): set, trimmed or extended while it is a
draft; given to every model with the prompt; its cited records listed after the answers.

A draft without a pack runs as the seed describes: the bare prompt. With a pack, every
model receives the same records under the same keys, fenced as data, and is asked to cite
the keys for every claim; each answer and the synthesis are audited (``CitationAudit``)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from scholarstream.errors import ConflictError, InvalidInputError
from scholarstream.grounding.core import CitationAudit, EvidencePack, render_pack
from scholarstream.papers import Paper
from scholarstream.research.core._base import utc_now
from scholarstream.research.core._lifecycle import ResearchStatus
from scholarstream.research.core._records import Research

__all__ = [
    "add_evidence",
    "check_evidence_editable",
    "remove_evidence",
    "research_audits",
    "research_prompt",
    "set_evidence",
]


def research_prompt(research: Research) -> str:
    """What each model is asked: the prompt, then the evidence pack when there is one."""
    if research.evidence is None or not research.evidence.items:
        return research.prompt
    return f"{research.prompt}\n\n{render_pack(research.evidence)}"


def check_evidence_editable(research: Research) -> None:
    """``ConflictError`` unless a draft: the pack is fixed once the models have it."""
    if research.status != ResearchStatus.DRAFT:
        raise ConflictError(
            f"The evidence can be changed only before the research starts; "
            f"this research is {research.status}.",
            hint="Start a new research to ask with other evidence.",
        )


def set_evidence(
    research: Research, pack: EvidencePack | None, *, now: datetime | None = None
) -> Research:
    """The draft with ``pack`` as its evidence; ``None`` runs it without evidence."""
    check_evidence_editable(research)
    return research.model_copy(update={"evidence": pack, "updated_at": utc_now(now)})


def remove_evidence(research: Research, keys: set[int], *, now: datetime | None = None) -> Research:
    """The draft without the records under ``keys``; the rest are keyed again from 1.
    ``InvalidInputError`` naming any key the pack does not hold (nothing is removed)."""
    check_evidence_editable(research)
    pack = research.evidence or EvidencePack(question=research.prompt)
    unknown = sorted(keys - pack.keys)
    if unknown:
        listed = ", ".join(f"[{key}]" for key in unknown)
        raise InvalidInputError(
            f"The evidence has no record {listed}; nothing was removed.",
            hint=f"Its keys are 1 to {len(pack.items)}." if pack.items else "It is empty.",
        )
    return set_evidence(research, pack.without(keys), now=now)


def add_evidence(
    research: Research, papers: Sequence[Paper], *, now: datetime | None = None
) -> Research:
    """The draft with ``papers`` (from the library) added at the end of its pack."""
    check_evidence_editable(research)
    pack = research.evidence or EvidencePack(question=research.prompt)
    return set_evidence(research, pack.plus(papers), now=now)


def research_audits(research: Research) -> list[CitationAudit]:
    """The audits of the synthesis and of every answer, in that order."""
    audits = [research.synthesis_audit, *(r.audit for r in research.successful_results)]
    return [audit for audit in audits if audit is not None]
