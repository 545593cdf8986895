"""The pure core of grounding: evidence packs and their keys, citations read from an
answer, support scores and the audit of every citation. No database, model or network."""

from scholarstream.grounding.core._audit import (
    INVALID_NOTE,
    MARK_LEGEND,
    MARKS,
    UNVERIFIED_NOTE,
    VERDICT_WORDS,
    CitationAudit,
    CitationCheck,
    Key,
    ModelJudgement,
    Thresholds,
    Verdict,
    audit_answer,
    cited_pairs,
)
from scholarstream.grounding.core._citations import (
    CitedSentence,
    ForeignReference,
    Marker,
    foreign_references,
    read_markers,
)
from scholarstream.grounding.core._pack import (
    CITATION_INSTRUCTIONS,
    DEFAULT_PACK_SIZE,
    EvidenceItem,
    EvidencePack,
    PackBuilder,
    as_paper,
    reference_line,
    reference_text,
    render_pack,
)
from scholarstream.grounding.core._references import cited_items, cited_references
from scholarstream.grounding.core._support import (
    SupportScore,
    SupportScorer,
    content_words,
    record_sentences,
)

__all__ = [
    "CITATION_INSTRUCTIONS",
    "DEFAULT_PACK_SIZE",
    "INVALID_NOTE",
    "MARKS",
    "MARK_LEGEND",
    "UNVERIFIED_NOTE",
    "VERDICT_WORDS",
    "CitationAudit",
    "CitationCheck",
    "CitedSentence",
    "EvidenceItem",
    "EvidencePack",
    "ForeignReference",
    "Key",
    "Marker",
    "ModelJudgement",
    "PackBuilder",
    "SupportScore",
    "SupportScorer",
    "Thresholds",
    "Verdict",
    "as_paper",
    "audit_answer",
    "cited_items",
    "cited_pairs",
    "cited_references",
    "content_words",
    "foreign_references",
    "read_markers",
    "record_sentences",
    "reference_line",
    "reference_text",
    "render_pack",
]
