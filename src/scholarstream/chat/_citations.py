"""The citations of a chat answer, checked as a research's are (issue 24): the records the
conversation's tools showed the model, in this turn or an earlier one, are its pack, each
under the key it keeps for the whole conversation; the answer comes back with every
citation marked, invalid ones removed and flagged, references the model wrote itself
flagged as unverified, and the records it cites (only those) listed after it."""

from __future__ import annotations

from scholarstream.chat.tools import ToolServices
from scholarstream.grounding import (
    CitationAudit,
    CitationVerifier,
    PackBuilder,
    SupportScorer,
    cited_references,
)


async def checked_citations(
    text: str, evidence: PackBuilder, services: ToolServices
) -> tuple[str, CitationAudit | None]:
    """``text`` as shown, and its audit; unchanged, with no audit, when the conversation's
    tools showed no record yet or the answer cites none and names no other work."""
    if not evidence or not text.strip():
        return text, None
    semantic = services.library.semantic
    scorer = SupportScorer(semantic.embedder if semantic.available else None)
    pack = evidence.pack()
    audit = await CitationVerifier(scorer).verify(text, pack)
    if not audit.checks and not audit.unverified:
        return text, None
    references = cited_references(pack, [audit])
    shown = f"{audit.annotated.rstrip()}\n\n{references}" if references else audit.annotated
    return shown, audit
