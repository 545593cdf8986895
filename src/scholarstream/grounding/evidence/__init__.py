"""The evidence phase of grounded answers (issue 24): "find the evidence for this
question". The paper-search skills turn the question into queries; the library and the
enabled sources are searched; duplicates are merged; every work is ranked for the question
(by its relevance score and, with an embedding model, by meaning too); the best make the
evidence pack. It runs straight through, with or without a model, and offline."""

from scholarstream.grounding.evidence._finder import EvidenceFinder
from scholarstream.grounding.evidence._models import (
    MAX_PACK_SIZE,
    EvidenceOptions,
    EvidenceRequest,
    EvidenceResult,
    EvidenceSearch,
    FoundIn,
    QueryUsed,
    SourceSearched,
)

__all__ = [
    "MAX_PACK_SIZE",
    "EvidenceFinder",
    "EvidenceOptions",
    "EvidenceRequest",
    "EvidenceResult",
    "EvidenceSearch",
    "FoundIn",
    "QueryUsed",
    "SourceSearched",
]
