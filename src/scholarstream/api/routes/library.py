"""The current user's library: import files, search, read, delete, export, and the merged
duplicates (list, split, find more)."""

from __future__ import annotations

import tempfile
import uuid
from collections.abc import Iterator
from typing import Annotated, TextIO

from fastapi import APIRouter, File, Form, Query, UploadFile
from fastapi.responses import StreamingResponse
from pydantic import BaseModel, ValidationError
from starlette.exceptions import HTTPException

from scholarstream.api._deps import CurrentUser, RuntimeDep
from scholarstream.errors import InvalidInputError
from scholarstream.papers.formats import export_format_names, get_format, import_format_names
from scholarstream.sources.library import (
    MAX_OFFSET,
    DuplicateScan,
    ImportReport,
    LibraryFacets,
    LibraryItem,
    LibraryPage,
    LibraryQuery,
    MergePage,
    SemanticStatus,
    SplitResult,
)
from scholarstream.validation_messages import explain

router = APIRouter(prefix="/library", tags=["library"])

_CHUNK = 64 * 1024
MAX_SELECTION = 1000
"""Records one export may name by id (a few pages of results); more: export a search."""


class FormatsOut(BaseModel):
    import_formats: list[str]
    export_formats: list[str]


@router.get("/formats", response_model=FormatsOut)
async def list_formats() -> FormatsOut:
    return FormatsOut(import_formats=import_format_names(), export_formats=export_format_names())


@router.post(
    "/imports",
    response_model=ImportReport,
    status_code=201,
    responses={413: {"description": "The file is larger than the server accepts."}},
)
async def import_file(
    runtime: RuntimeDep,
    user: CurrentUser,
    file: Annotated[UploadFile, File(description="PubMed XML, MEDLINE, RIS, BibTeX, ...")],
    format: Annotated[
        str | None, Form(description="Format name; detected from the content if omitted.")
    ] = None,
) -> ImportReport:
    """Imports every valid record; malformed ones (and those with a field longer than the
    server's limit) are listed in ``problems`` and skipped. A copy of a record already in
    the library is merged into it (``merged``), a copy of another record of the file too
    (``in_file_duplicates``), and a record imported before exactly as it is is left alone
    (``already_present``); each merge is listed at ``/library/merges`` and can be split. The
    upload is spooled to a temporary file as it arrives
    and read from there a record at a time: the file is never held in memory."""
    filename = file.filename or "upload"
    most = runtime.settings.limits.import_body_bytes
    if file.size is not None and file.size > most:
        raise HTTPException(
            413,
            detail=f"{filename} is {file.size:,} bytes; the server accepts imports of at most "
            f"{most:,} bytes. Compress it (.gz) or split it into smaller files and import each.",
        )
    return await runtime.library.import_stream(
        user.id, file.file, filename, format_name=format or None
    )


def _query(
    q: str = "",
    year_from: int | None = None,
    year_to: int | None = None,
    publication_type: str | None = None,
    offset: int = 0,
    limit: int = 20,
) -> LibraryQuery:
    try:
        return LibraryQuery(
            text=q,
            year_from=year_from,
            year_to=year_to,
            publication_type=publication_type or None,
            offset=offset,
            limit=limit,
        )
    except ValidationError as exc:
        raise InvalidInputError(
            f"Invalid library query: {explain(exc)}.",
            hint="Years are 4 digits with year_from <= year_to; limit is 1-500.",
        ) from exc


@router.get("/facets", response_model=LibraryFacets)
async def record_facets(
    runtime: RuntimeDep,
    user: CurrentUser,
    q: str = "",
    year_from: int | None = None,
    year_to: int | None = None,
    publication_type: str | None = None,
) -> LibraryFacets:
    """Publication types and years, with counts, of the records this search finds."""
    query = _query(q, year_from, year_to, publication_type, 0, 20)
    return await runtime.library.facets(user.id, query)


@router.get("/records", response_model=LibraryPage)
async def search_records(
    runtime: RuntimeDep,
    user: CurrentUser,
    q: Annotated[
        str,
        Query(
            description="What to look for: ranked by words (BM25) and meaning (embeddings) "
            "together; empty lists newest first."
        ),
    ] = "",
    year_from: int | None = None,
    year_to: int | None = None,
    publication_type: str | None = None,
    offset: Annotated[int, Query(ge=0, le=MAX_OFFSET)] = 0,
    limit: Annotated[int, Query(ge=1, le=500)] = 20,
) -> LibraryPage:
    query = _query(q, year_from, year_to, publication_type, offset, limit)
    return await runtime.library.search(user.id, query)


@router.get("/semantic", response_model=SemanticStatus)
async def semantic_status(runtime: RuntimeDep, user: CurrentUser) -> SemanticStatus:
    """How far the semantic index is built (records embedded of all); search ranks by
    words alone for records not embedded yet."""
    return await runtime.library.semantic_status(user.id)


@router.get("/records/{record_id}", response_model=LibraryItem)
async def get_record(record_id: uuid.UUID, runtime: RuntimeDep, user: CurrentUser) -> LibraryItem:
    return await runtime.library.get(user.id, record_id)


@router.delete("/records/{record_id}", status_code=204)
async def delete_record(record_id: uuid.UUID, runtime: RuntimeDep, user: CurrentUser) -> None:
    await runtime.library.delete(user.id, record_id)


@router.get("/merges", response_model=MergePage)
async def list_merges(
    runtime: RuntimeDep,
    user: CurrentUser,
    offset: Annotated[int, Query(ge=0, le=MAX_OFFSET)] = 0,
    limit: Annotated[int, Query(ge=1, le=500)] = 50,
) -> MergePage:
    """Records merged into another as duplicates, newest first: both records' titles and
    identifiers and what matched (the identifier or the rule)."""
    return await runtime.library.merges(user.id, offset=offset, limit=limit)


@router.post("/merges/{merge_id}/split", response_model=SplitResult)
async def split_merge(merge_id: uuid.UUID, runtime: RuntimeDep, user: CurrentUser) -> SplitResult:
    """Undoes a merge: the absorbed record is its own record again, what it added to the
    other is removed, and the two are never merged again."""
    return await runtime.library.split(user.id, merge_id)


@router.post("/find-duplicates", response_model=DuplicateScan)
async def find_duplicates(runtime: RuntimeDep, user: CurrentUser) -> DuplicateScan:
    """Compares the whole library and merges the copies it already holds, each into the
    oldest record of its work; every merge can be split."""
    return await runtime.library.find_duplicates(user.id)


def _stream_and_close(spool: TextIO) -> Iterator[bytes]:
    with spool:
        spool.seek(0)
        binary = spool.buffer
        while chunk := binary.read(_CHUNK):
            yield chunk


@router.get(
    "/export",
    response_class=StreamingResponse,
    responses={200: {"description": "The records as a file in the chosen format."}},
)
async def export_records(
    runtime: RuntimeDep,
    user: CurrentUser,
    format: Annotated[str, Query(description="ris, bibtex, csv or json")] = "ris",
    q: Annotated[
        str, Query(description="Search words: export every record they find, best first.")
    ] = "",
    year_from: int | None = None,
    year_to: int | None = None,
    publication_type: str | None = None,
    record_id: Annotated[
        list[uuid.UUID] | None,
        Query(
            alias="id",
            max_length=MAX_SELECTION,
            description="Export just these records (a selection), in this order; "
            "repeat the parameter for each.",
        ),
    ] = None,
) -> StreamingResponse:
    """Every record, the records a search finds (``q`` and the filters), or a selection."""
    file_format = get_format(format, for_export=True)
    query = _query(q, year_from, year_to, publication_type, 0, 20)
    # Spooled to a temporary file first: an error while exporting becomes a proper error
    # response instead of a truncated download.
    spool = tempfile.TemporaryFile("w+", encoding="utf-8", newline="")  # noqa: SIM115
    try:
        await runtime.library.export(
            user.id, file_format.name, spool, query=query, ids=record_id or None
        )
    except BaseException:
        spool.close()
        raise
    filename = f"scholarstream-library{file_format.export_extension}"
    return StreamingResponse(
        _stream_and_close(spool),
        media_type=f"{file_format.media_type}; charset=utf-8",
        headers={"Content-Disposition": f'attachment; filename="{filename}"'},
    )
