"""Screening projects: create one from a search run, a stream report or the library;
screen (the next record, decide, undo, a suggestion); reviewers and conflicts; the
full-text stage; the PRISMA 2020 flow (counts, SVG, PNG, CSV); exports with decisions."""

from __future__ import annotations

import uuid
from typing import Annotated, Literal
from urllib.parse import quote

from fastapi import APIRouter, Query, Response
from pydantic import BaseModel, ConfigDict, Field

from scholarstream.api._deps import ReleasedUser, RuntimeDep
from scholarstream.screening import (
    MAX_RECORDS,
    MAX_RECORDS_PAGE,
    RECORDS_PAGE,
    ConflictList,
    DecisionIn,
    DownloadName,
    FullTextIn,
    FullTextList,
    PrismaCounts,
    PrismaEntries,
    Progress,
    Project,
    ProjectList,
    ProjectSettings,
    ProjectUpdate,
    RecordFilter,
    RecordList,
    RecordSource,
    ResolutionIn,
    ScreeningStep,
    Suggestion,
    download_name,
    prisma_csv,
    prisma_diagram,
    render_png,
    render_svg,
    screening_service,
    suggester_for,
)

router = APIRouter(prefix="/screening", tags=["screening"])

PROJECT = "/projects/{project_id}"
SkipQuery = Annotated[
    list[uuid.UUID] | None,
    Query(max_length=200, description="Records passed over for now (shown again later)."),
]


class ProjectCreate(ProjectSettings):
    """A new project: its settings, and where its records come from."""

    source: RecordSource = Field(
        description="search_run (run_id), stream_report (stream_id, report_id) or library "
        "(one of: query and its filters, collection_id, or record_ids)."
    )


class ReviewerIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    username: str = Field(min_length=1, max_length=64)


@router.get("/projects", response_model=ProjectList)
async def list_projects(user: ReleasedUser, runtime: RuntimeDep) -> ProjectList:
    """Your projects and those you review, newest first."""
    return await screening_service(runtime).list(user.id)


@router.post("/projects", response_model=Project, status_code=201)
async def create_project(body: ProjectCreate, user: ReleasedUser, runtime: RuntimeDep) -> Project:
    """Creates a project with the records of ``source``."""
    settings = ProjectSettings.model_validate(body.model_dump(exclude={"source"}))
    return await screening_service(runtime).create(user.id, settings, body.source)


@router.get(PROJECT, response_model=Project)
async def get_project(project_id: uuid.UUID, user: ReleasedUser, runtime: RuntimeDep) -> Project:
    return await screening_service(runtime).get(user.id, project_id)


@router.patch(PROJECT, response_model=Project)
async def update_project(
    project_id: uuid.UUID, body: ProjectUpdate, user: ReleasedUser, runtime: RuntimeDep
) -> Project:
    """Changes the name, question, keywords or criteria (the owner only)."""
    return await screening_service(runtime).update(user.id, project_id, body)


@router.delete(PROJECT, status_code=204)
async def delete_project(project_id: uuid.UUID, user: ReleasedUser, runtime: RuntimeDep) -> None:
    """Deletes the project and every decision in it (the owner only)."""
    await screening_service(runtime).delete(user.id, project_id)


@router.post(PROJECT + "/reviewers", response_model=Project)
async def add_reviewer(
    project_id: uuid.UUID, body: ReviewerIn, user: ReleasedUser, runtime: RuntimeDep
) -> Project:
    """Adds a reviewer by username (multi-user mode; the owner only). Each reviewer sees
    only their own decisions."""
    return await screening_service(runtime).add_reviewer(user.id, project_id, body.username)


@router.delete(PROJECT + "/reviewers/{reviewer_id}", response_model=Project)
async def remove_reviewer(
    project_id: uuid.UUID, reviewer_id: uuid.UUID, user: ReleasedUser, runtime: RuntimeDep
) -> Project:
    return await screening_service(runtime).remove_reviewer(user.id, project_id, reviewer_id)


@router.get(PROJECT + "/next", response_model=ScreeningStep)
async def next_record(
    project_id: uuid.UUID, user: ReleasedUser, runtime: RuntimeDep, skip: SkipQuery = None
) -> ScreeningStep:
    """The record you screen next (chosen by the ranker refitted on your decisions, or
    by relevance to the keywords before it can learn), with your progress."""
    return await screening_service(runtime).next(user.id, project_id, frozenset(skip or ()))


@router.get(PROJECT + "/progress", response_model=Progress)
async def your_progress(project_id: uuid.UUID, user: ReleasedUser, runtime: RuntimeDep) -> Progress:
    """Your progress: records screened, includes found as you went, and the stopping aid."""
    return await screening_service(runtime).progress(user.id, project_id)


@router.get(PROJECT + "/records", response_model=RecordList)
async def list_records(
    project_id: uuid.UUID,
    user: ReleasedUser,
    runtime: RuntimeDep,
    offset: Annotated[
        int, Query(ge=0, le=MAX_RECORDS, description="Records listed before the page.")
    ] = 0,
    limit: Annotated[
        int, Query(ge=1, le=MAX_RECORDS_PAGE, description="Records on the page.")
    ] = RECORDS_PAGE,
    decision: Annotated[
        RecordFilter | None,
        Query(
            description="Only the records you decided so: include, exclude, maybe, or "
            "unscreened (those you have not decided yet)."
        ),
    ] = None,
) -> RecordList:
    """A page of the records, in the project's order, each with your decision (the owner
    also sees the project's outcome); ``total`` counts the records the filter lists."""
    return await screening_service(runtime).records(
        user.id, project_id, offset=offset, limit=limit, decision=decision
    )


@router.get(PROJECT + "/records/{record_id}", response_model=ScreeningStep)
async def show_record(
    project_id: uuid.UUID, record_id: uuid.UUID, user: ReleasedUser, runtime: RuntimeDep
) -> ScreeningStep:
    """The screening view on one record, with your decision on it (to change it)."""
    return await screening_service(runtime).show(user.id, project_id, record_id)


@router.post(PROJECT + "/decisions", response_model=ScreeningStep)
async def decide(
    project_id: uuid.UUID,
    body: DecisionIn,
    user: ReleasedUser,
    runtime: RuntimeDep,
    skip: SkipQuery = None,
) -> ScreeningStep:
    """Records your include / exclude / maybe on a record (an exclusion takes one of the
    exclusion criteria as its reason, or none in a project without any) and answers with
    the next record."""
    return await screening_service(runtime).decide(user.id, project_id, body, frozenset(skip or ()))


@router.post(PROJECT + "/undo", response_model=ScreeningStep)
async def undo(project_id: uuid.UUID, user: ReleasedUser, runtime: RuntimeDep) -> ScreeningStep:
    """Takes back your last decision and shows its record again."""
    return await screening_service(runtime).undo(user.id, project_id)


@router.post(PROJECT + "/records/{record_id}/suggestion", response_model=Suggestion)
async def suggest(
    project_id: uuid.UUID, record_id: uuid.UUID, user: ReleasedUser, runtime: RuntimeDep
) -> Suggestion:
    """A suggestion for the record: the model's include / exclude / unsure with the
    criterion and a rationale quoting the abstract (checked), or, with no model or an
    unusable answer, the ranker's score standing in. Never a decision."""
    suggester = await suggester_for(runtime, user.id)
    return await screening_service(runtime).suggest(user.id, project_id, record_id, suggester)


@router.get(PROJECT + "/conflicts", response_model=ConflictList)
async def conflicts(project_id: uuid.UUID, user: ReleasedUser, runtime: RuntimeDep) -> ConflictList:
    """Records the reviewers decided differently (the owner only)."""
    return await screening_service(runtime).conflicts(user.id, project_id)


@router.put(PROJECT + "/conflicts/{record_id}", response_model=ConflictList)
async def resolve(
    project_id: uuid.UUID,
    record_id: uuid.UUID,
    body: ResolutionIn,
    user: ReleasedUser,
    runtime: RuntimeDep,
) -> ConflictList:
    """Settles a conflict: include, or exclude with a reason (the owner only)."""
    return await screening_service(runtime).resolve(user.id, project_id, record_id, body)


@router.get(PROJECT + "/fulltext", response_model=FullTextList)
async def fulltext(project_id: uuid.UUID, user: ReleasedUser, runtime: RuntimeDep) -> FullTextList:
    """The records included on title and abstract (reports sought for retrieval) with
    their full-text decision (the owner only)."""
    return await screening_service(runtime).fulltext(user.id, project_id)


@router.put(PROJECT + "/fulltext/{record_id}", response_model=FullTextList)
async def decide_fulltext(
    project_id: uuid.UUID,
    record_id: uuid.UUID,
    body: FullTextIn,
    user: ReleasedUser,
    runtime: RuntimeDep,
) -> FullTextList:
    """Records the full-text decision: include, exclude (with a reason) or not retrieved."""
    return await screening_service(runtime).decide_fulltext(user.id, project_id, record_id, body)


@router.get(PROJECT + "/prisma", response_model=PrismaCounts)
async def prisma(project_id: uuid.UUID, user: ReleasedUser, runtime: RuntimeDep) -> PrismaCounts:
    """The PRISMA 2020 flow's counts (the owner only). A count nobody recorded is null."""
    return await screening_service(runtime).prisma(user.id, project_id)


@router.get(PROJECT + "/prisma/entries", response_model=PrismaEntries)
async def prisma_entries(
    project_id: uuid.UUID, user: ReleasedUser, runtime: RuntimeDep
) -> PrismaEntries:
    """The numbers you entered for what the project does not record."""
    return await screening_service(runtime).entries(user.id, project_id)


@router.put(PROJECT + "/prisma/entries", response_model=PrismaCounts)
async def save_prisma_entries(
    project_id: uuid.UUID, body: PrismaEntries, user: ReleasedUser, runtime: RuntimeDep
) -> PrismaCounts:
    """Saves the numbers you enter (other sources, removals before screening, reports not
    retrieved, full-text exclusions, studies included) and answers with the counts."""
    return await screening_service(runtime).save_entries(user.id, project_id, body)


_DIAGRAM_TYPES = {"svg": "image/svg+xml", "png": "image/png", "csv": "text/csv; charset=utf-8"}


@router.get(
    PROJECT + "/prisma/diagram",
    response_class=Response,
    responses={
        200: {"description": "The PRISMA 2020 flow diagram (SVG or PNG) or its counts (CSV)."}
    },
)
async def prisma_diagram_file(
    project_id: uuid.UUID,
    user: ReleasedUser,
    runtime: RuntimeDep,
    format: Annotated[Literal["svg", "png", "csv"], Query(description="svg, png or csv")] = "svg",
    download: Annotated[
        bool, Query(description="true: sent as a file to save (attachment), not to show.")
    ] = False,
) -> Response:
    """The diagram (or its counts), named after the project (``otitis-in-dogs-prisma.svg``)
    in its Content-Disposition: shown inline, or saved as that file with ``download``."""
    service = screening_service(runtime)
    counts = await service.prisma(user.id, project_id)
    project = await service.get(user.id, project_id)
    title = f"PRISMA 2020 flow diagram: {project.name}"
    body: bytes
    if format == "csv":
        body = ("\ufeff" + prisma_csv(counts)).encode()
    elif format == "png":
        body = render_png(prisma_diagram(counts, title))
    else:
        body = render_svg(prisma_diagram(counts, title)).encode()
    headers = {
        "Cache-Control": "no-store",
        "Content-Disposition": _disposition(
            download_name(project.name, "prisma", format),
            "attachment" if download else "inline",
        ),
    }
    return Response(body, media_type=_DIAGRAM_TYPES[format], headers=headers)


def _disposition(name: DownloadName, kind: Literal["attachment", "inline"] = "attachment") -> str:
    """A Content-Disposition header (RFC 6266): the ASCII name for every client, and the
    name with the project's own letters as ``filename*`` (RFC 8187) when it differs."""
    header = f'{kind}; filename="{name.ascii}"'
    if name.needs_unicode:
        header += f"; filename*=UTF-8''{quote(name.unicode, safe='')}"
    return header


_EXPORT_TYPES = {
    "ris": ("application/x-research-info-systems", ".ris"),
    "bibtex": ("application/x-bibtex", ".bib"),
    "csv": ("text/csv", ".csv"),
}


@router.get(
    PROJECT + "/export",
    response_class=Response,
    responses={200: {"description": "The project's records with their decisions, as a file."}},
)
async def export_project(
    project_id: uuid.UUID,
    user: ReleasedUser,
    runtime: RuntimeDep,
    format: Annotated[
        Literal["ris", "bibtex", "csv"], Query(description="ris, bibtex or csv")
    ] = "ris",
) -> Response:
    """Every record with its decision, reason, reviewers and the ranker's score (RIS
    notes, BibTeX fields, CSV columns), as a file named after the project
    (``otitis-in-dogs-screening.csv``). The owner's export has every reviewer's decision
    and the full-text stage; a reviewer's has their own decisions."""
    service = screening_service(runtime)
    text, _ = await service.export(user.id, project_id, format)
    project = await service.get(user.id, project_id)
    media, extension = _EXPORT_TYPES[format]
    return Response(
        text.encode(),
        media_type=f"{media}; charset=utf-8",
        headers={
            "Content-Disposition": _disposition(download_name(project.name, "screening", extension))
        },
    )
