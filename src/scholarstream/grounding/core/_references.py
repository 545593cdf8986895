"""The reference list of an answer: the pack's records its audit found validly cited."""

from __future__ import annotations

import re
from collections.abc import Sequence

from scholarstream.grounding.core._audit import CitationAudit
from scholarstream.grounding.core._pack import EvidenceItem, EvidencePack, reference_text

# A title from a source is text: its * _ [ ] ` < > must not become formatting or links.
_MARKDOWN = re.compile(r"[\\`*_\[\]<>]")


def cited_items(pack: EvidencePack | None, audits: Sequence[CitationAudit]) -> list[EvidenceItem]:
    """The records of ``pack`` that ``audits`` cite validly, in key order."""
    if pack is None:
        return []
    cited = {key for audit in audits for key in audit.cited_keys}
    return [item for item in pack.items if item.key in cited]


def cited_references(pack: EvidencePack | None, audits: Sequence[CitationAudit]) -> str:
    """The Markdown reference list of the records ``audits`` cite, in key order, with
    links for DOIs and PMIDs; empty when nothing is cited."""
    lines = []
    for item in cited_items(pack, audits):
        links = []
        if item.paper.ids.doi:
            links.append(f"[DOI](https://doi.org/{item.paper.ids.doi})")
        if item.paper.ids.pmid:
            links.append(f"[PubMed](https://pubmed.ncbi.nlm.nih.gov/{item.paper.ids.pmid}/)")
        text = _MARKDOWN.sub(r"\\\g<0>", reference_text(item))
        lines.append(f"- [{item.key}] {text} {' '.join(links)}".rstrip())
    return "## References\n\n" + "\n".join(lines) if lines else ""
