"""Grounded answers (issue 24): the evidence a research or a chat answer may cite, and the
check of every citation it makes. ``core`` is pure; the evidence search and the citation
verifier (with its model judge) are the shell around it."""

from scholarstream.grounding._verify import CitationVerifier, runtime_verifier
from scholarstream.grounding.core import (
    CITATION_INSTRUCTIONS,
    DEFAULT_PACK_SIZE,
    MARK_LEGEND,
    MARKS,
    VERDICT_WORDS,
    CitationAudit,
    CitationCheck,
    EvidenceItem,
    EvidencePack,
    ForeignReference,
    ModelJudgement,
    PackBuilder,
    SupportScore,
    SupportScorer,
    Thresholds,
    Verdict,
    audit_answer,
    cited_items,
    cited_references,
    reference_line,
    render_pack,
)

__all__ = [
    "CITATION_INSTRUCTIONS",
    "DEFAULT_PACK_SIZE",
    "MARKS",
    "MARK_LEGEND",
    "VERDICT_WORDS",
    "CitationAudit",
    "CitationCheck",
    "CitationVerifier",
    "EvidenceItem",
    "EvidencePack",
    "ForeignReference",
    "ModelJudgement",
    "PackBuilder",
    "SupportScore",
    "SupportScorer",
    "Thresholds",
    "Verdict",
    "audit_answer",
    "cited_items",
    "cited_references",
    "reference_line",
    "render_pack",
    "runtime_verifier",
]
