"""The evidence pack of a research draft (issue 24): found for its prompt with the evidence
phase, then trimmed, extended from the library, or dropped, before the research starts."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence

from pydantic import BaseModel

from scholarstream.errors import ConflictError, InvalidInputError
from scholarstream.grounding import as_paper, cited_items
from scholarstream.grounding.evidence import (
    EvidenceFinder,
    EvidenceOptions,
    EvidenceRequest,
    EvidenceSearch,
)
from scholarstream.papers import Paper
from scholarstream.research._store import ResearchStore
from scholarstream.research.core import (
    Research,
    ResearchChange,
    add_evidence,
    check_evidence_editable,
    remove_evidence,
    research_audits,
    set_evidence,
)
from scholarstream.runtime import Runtime
from scholarstream.sources.library import ImportReport, Library

__all__ = ["FoundEvidence", "ResearchEvidence", "research_evidence"]


class FoundEvidence(BaseModel):
    """The draft with its new pack, and what was searched to build it."""

    research: Research
    search: EvidenceSearch


class ResearchEvidence:
    def __init__(self, store: ResearchStore, finder: EvidenceFinder, library: Library) -> None:
        self.store = store
        self.finder = finder
        self.library = library

    async def find(
        self, owner_id: uuid.UUID, research_id: uuid.UUID, options: EvidenceOptions
    ) -> FoundEvidence:
        """Searches for the draft's prompt and makes the result its pack (replacing any). A
        search that finds nothing changes nothing: the search summary says so."""
        draft = await self._draft(owner_id, research_id)
        found = await self.finder.find(
            owner_id, EvidenceRequest.for_question(draft.prompt, options)
        )
        if not found.pack.items:
            kept = " The draft keeps its evidence." if draft.evidence else ""
            notice = f"No evidence was found for the prompt.{kept}"
            search = found.search.model_copy(update={"notices": [*found.search.notices, notice]})
            return FoundEvidence(research=draft, search=search)
        research = await self._apply(owner_id, research_id, lambda r: set_evidence(r, found.pack))
        return FoundEvidence(research=research, search=found.search)

    async def remove(
        self, owner_id: uuid.UUID, research_id: uuid.UUID, keys: Sequence[int]
    ) -> Research:
        return await self._apply(owner_id, research_id, lambda r: remove_evidence(r, set(keys)))

    async def add_from_library(
        self, owner_id: uuid.UUID, research_id: uuid.UUID, record_ids: Sequence[uuid.UUID]
    ) -> Research:
        """Adds library records to the pack; an id that is not in the library says so."""
        await self._draft(owner_id, research_id)  # another's research is 404 before all else
        items = await self.library.get_many(owner_id, record_ids)
        missing = len(set(record_ids)) - len({item.id for item in items})
        if missing:
            raise InvalidInputError(
                f"{missing} of the records to add {'is' if missing == 1 else 'are'} not in "
                "your library.",
                hint="Add records from your library's search results.",
            )
        papers = [as_paper(item.record) for item in items]
        return await self._apply(owner_id, research_id, lambda r: add_evidence(r, papers))

    async def cited_papers(
        self, owner_id: uuid.UUID, research_id: uuid.UUID, *, whole_pack: bool = False
    ) -> list[Paper]:
        """The records the research's answers cite (or its whole pack), in key order."""
        research = await self.store.get(owner_id, research_id)
        if whole_pack:
            items = research.evidence.items if research.evidence else []
        else:
            items = cited_items(research.evidence, research_audits(research))
        if not items:
            what = "has no evidence" if whole_pack else "cites no record of an evidence pack"
            raise ConflictError(
                f"This research {what}: there are no references to give.",
                hint="Find evidence for a draft before you start it, and its answers cite it.",
            )
        return [item.paper for item in items]

    async def save_cited(self, owner_id: uuid.UUID, research_id: uuid.UUID) -> ImportReport:
        """Saves the cited records to the library (those already there are counted)."""
        papers = await self.cited_papers(owner_id, research_id)
        return await self.library.save_records(owner_id, papers, origin="research references")

    async def drop(self, owner_id: uuid.UUID, research_id: uuid.UUID) -> Research:
        """The draft runs without evidence: the bare prompt, as the seed describes."""
        return await self._apply(owner_id, research_id, lambda r: set_evidence(r, None))

    async def _draft(self, owner_id: uuid.UUID, research_id: uuid.UUID) -> Research:
        research = await self.store.get(owner_id, research_id)
        check_evidence_editable(research)  # before searching, not after
        return research

    async def _apply(
        self,
        owner_id: uuid.UUID,
        research_id: uuid.UUID,
        change: Callable[[Research], Research],
    ) -> Research:
        applied = await self.store.apply(
            owner_id, research_id, lambda r: ResearchChange(research=change(r))
        )
        return applied.research


def research_evidence(runtime: Runtime) -> ResearchEvidence:
    return ResearchEvidence(
        ResearchStore(runtime.database), EvidenceFinder.for_runtime(runtime), runtime.library
    )
