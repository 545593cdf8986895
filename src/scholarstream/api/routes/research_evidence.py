"""The evidence pack of a research draft (issue 24): find it for the draft's prompt, remove
records, add records from the library, or run without evidence. Every change is refused
(409) once the research has started: every model receives the same pack. Once answered,
the records the answers cite export as a file and save to the library in one call."""

from __future__ import annotations

import io
import uuid
from typing import Annotated, Literal

from fastapi import APIRouter, Path, Query, Response
from pydantic import Field, StrictInt

from scholarstream.api._deps import ReleasedUser, RuntimeDep
from scholarstream.grounding.evidence import EvidenceOptions
from scholarstream.papers.formats import get_format
from scholarstream.research import (
    CamelModel,
    FoundEvidence,
    Research,
    research_evidence,
)
from scholarstream.sources.library import ImportReport

router = APIRouter(prefix="/research", tags=["research"])


class RemoveRecords(CamelModel):
    keys: list[Annotated[StrictInt, Field(ge=1)]] = Field(
        min_length=1, max_length=100, description="The pack keys ([1], [2] ...) to remove."
    )


class AddRecords(CamelModel):
    record_ids: list[uuid.UUID] = Field(
        min_length=1, max_length=100, description="Library record ids to add to the pack."
    )


ResearchId = Annotated[uuid.UUID, Path(description="The research draft.")]


@router.post("/{research_id}/evidence", response_model=FoundEvidence)
async def find_evidence(
    research_id: ResearchId, options: EvidenceOptions, user: ReleasedUser, runtime: RuntimeDep
) -> FoundEvidence:
    """Finds the evidence for the draft's prompt (the library and the enabled sources,
    merged and ranked) and makes it the draft's pack, replacing any; also says what was
    searched and which sources failed. A search that finds nothing leaves the draft as it
    was and says so. Works offline and with no model."""
    return await research_evidence(runtime).find(user.id, research_id, options)


@router.post("/{research_id}/evidence/remove", response_model=Research)
async def remove_evidence(
    research_id: ResearchId, body: RemoveRecords, user: ReleasedUser, runtime: RuntimeDep
) -> Research:
    """Removes records from the pack; the rest are keyed again from 1. 422 naming any key
    the pack does not hold (nothing is removed)."""
    return await research_evidence(runtime).remove(user.id, research_id, body.keys)


@router.post("/{research_id}/evidence/records", response_model=Research)
async def add_evidence(
    research_id: ResearchId, body: AddRecords, user: ReleasedUser, runtime: RuntimeDep
) -> Research:
    """Adds library records at the end of the pack (a record already in it is skipped)."""
    return await research_evidence(runtime).add_from_library(user.id, research_id, body.record_ids)


@router.delete("/{research_id}/evidence", response_model=Research)
async def drop_evidence(
    research_id: ResearchId, user: ReleasedUser, runtime: RuntimeDep
) -> Research:
    """The draft runs without evidence: every model gets the bare prompt."""
    return await research_evidence(runtime).drop(user.id, research_id)


@router.get(
    "/{research_id}/references",
    response_class=Response,
    responses={200: {"description": "The cited records as a file in the chosen format."}},
)
async def export_references(
    research_id: ResearchId,
    user: ReleasedUser,
    runtime: RuntimeDep,
    format: Annotated[str, Query(description="ris, bibtex, csv or json")] = "ris",
    scope: Annotated[
        Literal["cited", "pack"],
        Query(description="cited: the records the answers cite; pack: the whole evidence pack."),
    ] = "cited",
) -> Response:
    """The research's references as a file to import into a reference manager; 409 when
    there are none (no evidence, or no answer cites it)."""
    file_format = get_format(format, for_export=True)
    assert file_format.write is not None  # get_format(for_export=True) guarantees it
    papers = await research_evidence(runtime).cited_papers(
        user.id, research_id, whole_pack=scope == "pack"
    )
    out = io.StringIO()  # a pack holds at most a hundred records
    file_format.write(papers, out)
    filename = f"research-references{file_format.export_extension}"
    return Response(
        out.getvalue(),
        media_type=f"{file_format.media_type}; charset=utf-8",
        headers={"Content-Disposition": f'attachment; filename="{filename}"'},
    )


@router.post("/{research_id}/references/library", response_model=ImportReport)
async def save_references(
    research_id: ResearchId, user: ReleasedUser, runtime: RuntimeDep
) -> ImportReport:
    """Saves the records the answers cite to your library; those already there are counted
    as duplicates. 409 when the research cites no record of an evidence pack."""
    return await research_evidence(runtime).save_cited(user.id, research_id)
