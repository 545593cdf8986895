"""The audit step of a research's model calls: an answer (or the synthesis) checked against
the research's evidence pack, before it is recorded. A research without a pack has
nothing to check."""

from __future__ import annotations

import logging
import uuid

from scholarstream.durable import current_runtime
from scholarstream.errors import NotFoundError
from scholarstream.grounding import CitationAudit, runtime_verifier
from scholarstream.research._store import ResearchStore

log = logging.getLogger(__name__)


async def audit_content(
    owner_id: str, research_id: str, content: str | None
) -> CitationAudit | None:
    """``content``'s citations checked against the research's pack; ``None`` without a
    pack, an answer, or the research."""
    if content is None:
        return None
    runtime = current_runtime()
    owner = uuid.UUID(owner_id)
    try:
        research = await ResearchStore(runtime.database).get(owner, uuid.UUID(research_id))
    except NotFoundError:
        return None
    if research.evidence is None or not research.evidence.items:
        return None
    try:
        return await runtime_verifier(runtime, owner).verify(content, research.evidence)
    except Exception:
        # The check is worth less than the answer it checks: a failure of the check (an
        # embedding runtime error, say) must not lose a model's answer. The answer is
        # recorded without an audit, and the log says why.
        log.exception("research %s: the citations of an answer could not be checked", research_id)
        return None
