"""The current user's library: import files, search, read, delete, export; the merged
duplicates (list, split, find more); collections, tags and notes."""

from __future__ import annotations

import tempfile
import uuid
from collections.abc import Iterator
from typing import Annotated, TextIO

from fastapi import APIRouter, Depends, File, Form, Query, UploadFile
from fastapi.responses import StreamingResponse
from pydantic import BaseModel, ConfigDict, Field, ValidationError
from starlette.exceptions import HTTPException

from scholarstream.api._deps import CurrentUser, RuntimeDep
from scholarstream.errors import InvalidInputError
from scholarstream.papers.formats import export_format_names, get_format, import_format_names
from scholarstream.sources.library import (
    MAX_OFFSET,
    CollectionChange,
    CollectionInfo,
    DuplicateScan,
    FacetCount,
    ImportReport,
    LibraryFacets,
    LibraryItem,
    LibraryMergeInfo,
    LibraryPage,
    LibraryQuery,
    MergePage,
    SemanticStatus,
    SplitResult,
    TagChange,
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


class Labels(BaseModel):
    """The collection, tag and note filters of a search (query parameters)."""

    collection: uuid.UUID | None = None
    tag: str | None = None
    has_note: bool | None = None


def _labels(
    collection: Annotated[
        uuid.UUID | None, Query(description="Only the records of this collection (its id).")
    ] = None,
    tag: Annotated[str | None, Query(description="Only the records with this tag.")] = None,
    has_note: Annotated[
        bool | None,
        Query(description="true: only records with a note; false: only those without."),
    ] = None,
) -> Labels:
    return Labels(collection=collection, tag=tag or None, has_note=has_note)


LabelFilters = Annotated[Labels, Depends(_labels)]


def _query(
    q: str = "",
    year_from: int | None = None,
    year_to: int | None = None,
    publication_type: str | None = None,
    offset: int = 0,
    limit: int = 20,
    *,
    related: bool = True,
    labels: Labels | None = None,
) -> LibraryQuery:
    labels = labels or Labels()
    try:
        return LibraryQuery(
            text=q,
            year_from=year_from,
            year_to=year_to,
            publication_type=publication_type or None,
            related=related,
            collection=labels.collection,
            tag=labels.tag,
            has_note=labels.has_note,
            offset=offset,
            limit=limit,
        )
    except ValidationError as exc:
        raise InvalidInputError(
            f"Invalid library query: {explain(exc, whole='the search')}.",
            hint="Give years as four digits (1000 to 2999), the earlier one first.",
        ) from exc


_RELATED = (
    "Also list the records related by meaning that lack the search words, after those that "
    "have them (each marked match: meaning)."
)


@router.get("/facets", response_model=LibraryFacets)
async def record_facets(
    runtime: RuntimeDep,
    user: CurrentUser,
    labels: LabelFilters,
    q: str = "",
    year_from: int | None = None,
    year_to: int | None = None,
    publication_type: str | None = None,
    related: Annotated[bool, Query(description=_RELATED)] = True,
) -> LibraryFacets:
    """Publication types, years, collections and tags, with counts, of the records this
    search lists, and how many of them have a note."""
    query = _query(q, year_from, year_to, publication_type, 0, 20, related=related, labels=labels)
    return await runtime.library.facets(user.id, query)


@router.get("/records", response_model=LibraryPage)
async def search_records(
    runtime: RuntimeDep,
    user: CurrentUser,
    labels: LabelFilters,
    q: Annotated[
        str,
        Query(
            description="What to look for: the records that have these words, ranked by words "
            "(BM25) and meaning (embeddings) together, then those related by meaning alone; "
            "empty lists newest first."
        ),
    ] = "",
    year_from: int | None = None,
    year_to: int | None = None,
    publication_type: str | None = None,
    related: Annotated[bool, Query(description=_RELATED)] = True,
    offset: Annotated[int, Query(ge=0, le=MAX_OFFSET)] = 0,
    limit: Annotated[int, Query(ge=1, le=500)] = 20,
) -> LibraryPage:
    query = _query(
        q, year_from, year_to, publication_type, offset, limit, related=related, labels=labels
    )
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


class MergeIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    kept: uuid.UUID = Field(description="The record to keep.")
    copies: list[uuid.UUID] = Field(
        min_length=1, max_length=50, description="Records to merge into it."
    )


@router.post("/merges", response_model=list[LibraryMergeInfo], status_code=201)
async def merge_records(
    body: MergeIn, runtime: RuntimeDep, user: CurrentUser
) -> list[LibraryMergeInfo]:
    """Merges records by hand (two records of one work the rules keep apart, such as a
    venue written two ways): the kept record keeps its title, authors, identifiers and
    types, the copies fill only what it lacks; each merge is listed and can be split."""
    return await runtime.library.merge(user.id, body.kept, body.copies)


@router.post("/merges/{merge_id}/split", response_model=SplitResult)
async def split_merge(merge_id: uuid.UUID, runtime: RuntimeDep, user: CurrentUser) -> SplitResult:
    """Undoes a merge: the absorbed record is its own record again, what it added to the
    other is removed, and the two are never merged again."""
    return await runtime.library.split(user.id, merge_id)


@router.post("/find-duplicates", response_model=DuplicateScan)
async def find_duplicates(
    runtime: RuntimeDep,
    user: CurrentUser,
    dry_run: Annotated[
        bool,
        Query(
            description="Only list the groups that would be merged (candidates), with the "
            "evidence; merge nothing."
        ),
    ] = False,
) -> DuplicateScan:
    """Compares the whole library and merges the copies it already holds, each into the
    oldest record of its work; every merge can be split."""
    return await runtime.library.find_duplicates(user.id, dry_run=dry_run)


def _stream_and_close(spool: TextIO) -> Iterator[bytes]:
    with spool:
        spool.seek(0)
        binary = spool.buffer
        while chunk := binary.read(_CHUNK):
            yield chunk


@router.get(
    "/export",
    response_class=StreamingResponse,
    responses={
        200: {"description": "The records as a file in the chosen format."},
        404: {"description": "No record matches: nothing to export."},
    },
)
async def export_records(
    runtime: RuntimeDep,
    user: CurrentUser,
    labels: LabelFilters,
    format: Annotated[str, Query(description="ris, bibtex, csv or json")] = "ris",
    q: Annotated[
        str,
        Query(description="Search words: export every record that has them, best first."),
    ] = "",
    year_from: int | None = None,
    year_to: int | None = None,
    publication_type: str | None = None,
    related: Annotated[
        bool,
        Query(description="With search words: also export the records related by meaning."),
    ] = False,
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
    """Every record, the records a search finds (``q`` and the filters: a collection's
    records with ``collection``), or a selection. Nothing to export (no record matches) is
    a 404 saying what to try, not an empty file."""
    file_format = get_format(format, for_export=True)
    query = _query(q, year_from, year_to, publication_type, 0, 20, related=related, labels=labels)
    prepared = await runtime.library.prepare_export(user.id, query=query, ids=record_id or None)
    # Spooled to a temporary file first: an error while exporting becomes a proper error
    # response instead of a truncated download.
    spool = tempfile.TemporaryFile("w+", encoding="utf-8", newline="")  # noqa: SIM115
    try:
        await prepared.write(file_format.name, spool)
    except BaseException:
        spool.close()
        raise
    filename = f"scholarstream-library{file_format.export_extension}"
    return StreamingResponse(
        _stream_and_close(spool),
        media_type=f"{file_format.media_type}; charset=utf-8",
        headers={"Content-Disposition": f'attachment; filename="{filename}"'},
    )


# -- collections, tags and notes ---------------------------------------------------------------


class SearchIn(BaseModel):
    """A search whose records an action takes: every record it lists (with words, those
    that have them; with ``related``, those related by meaning too)."""

    model_config = ConfigDict(extra="forbid")

    q: str = ""
    year_from: int | None = None
    year_to: int | None = None
    publication_type: str | None = None
    related: bool = False
    collection: uuid.UUID | None = None
    tag: str | None = None
    has_note: bool | None = None

    def query(self) -> LibraryQuery:
        return _query(
            self.q,
            self.year_from,
            self.year_to,
            self.publication_type,
            related=self.related,
            labels=Labels(collection=self.collection, tag=self.tag, has_note=self.has_note),
        )


class RecordsIn(BaseModel):
    """Records named by id (a selection) or by a search: one of the two."""

    model_config = ConfigDict(extra="forbid")

    ids: list[uuid.UUID] | None = Field(
        default=None, description="The records (a selection).", max_length=50_000
    )
    search: SearchIn | None = Field(
        default=None, description="A search: every record it lists is taken."
    )

    def named(self) -> tuple[list[uuid.UUID] | None, LibraryQuery | None]:
        if (self.ids is None) == (self.search is None):
            raise InvalidInputError(
                "Name the records either by id or by a search, not both (nor neither).",
                hint='Send {"ids": [...]} for a selection, or {"search": {"q": "..."}} for '
                "the results of a search.",
            )
        return self.ids, self.search.query() if self.search is not None else None


class CollectionIn(RecordsIn):
    """A new collection: its name and, optionally, its first records."""

    name: str = Field(description="Shown as given; unique whatever the case.")

    def named(self) -> tuple[list[uuid.UUID] | None, LibraryQuery | None]:
        if self.ids is None and self.search is None:
            return None, None
        return super().named()


class CollectionRename(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str


class TagsIn(RecordsIn):
    add: list[str] = Field(default_factory=list, description='Tags to add ("a, b" is two).')
    remove: list[str] = Field(default_factory=list, description="Tags to remove.")


class NoteIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    text: str = Field(description="Plain text; empty deletes the note.")


@router.get("/collections", response_model=list[CollectionInfo])
async def list_collections(runtime: RuntimeDep, user: CurrentUser) -> list[CollectionInfo]:
    """Your collections by name, with how many records each holds."""
    return await runtime.library.labels.collections(user.id)


@router.post("/collections", response_model=CollectionChange, status_code=201)
async def create_collection(
    body: CollectionIn, runtime: RuntimeDep, user: CurrentUser
) -> CollectionChange:
    """A new collection, empty or with records: a selection (``ids``) or every record a
    search lists (``search``). A name you use already (any case) is a 409."""
    ids, query = body.named()
    return await runtime.library.labels.create_collection(user.id, body.name, ids=ids, query=query)


@router.get("/collections/{collection_id}", response_model=CollectionInfo)
async def get_collection(
    collection_id: uuid.UUID, runtime: RuntimeDep, user: CurrentUser
) -> CollectionInfo:
    return await runtime.library.labels.collection(user.id, collection_id)


@router.patch("/collections/{collection_id}", response_model=CollectionInfo)
async def rename_collection(
    collection_id: uuid.UUID, body: CollectionRename, runtime: RuntimeDep, user: CurrentUser
) -> CollectionInfo:
    return await runtime.library.labels.rename_collection(user.id, collection_id, body.name)


@router.delete("/collections/{collection_id}", response_model=CollectionInfo)
async def delete_collection(
    collection_id: uuid.UUID, runtime: RuntimeDep, user: CurrentUser
) -> CollectionInfo:
    """Deletes the collection; its records stay in your library. Returns it as it was."""
    return await runtime.library.labels.delete_collection(user.id, collection_id)


@router.post("/collections/{collection_id}/records", response_model=CollectionChange)
async def add_to_collection(
    collection_id: uuid.UUID, body: RecordsIn, runtime: RuntimeDep, user: CurrentUser
) -> CollectionChange:
    """Adds a selection (``ids``) or every record a search lists (``search``); records in
    the collection already are counted in ``already``."""
    ids, query = body.named()
    return await runtime.library.labels.add_to_collection(
        user.id, collection_id, ids=ids, query=query
    )


class RemoveIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    ids: list[uuid.UUID] = Field(max_length=50_000)


@router.post("/collections/{collection_id}/records/remove", response_model=CollectionChange)
async def remove_from_collection(
    collection_id: uuid.UUID, body: RemoveIn, runtime: RuntimeDep, user: CurrentUser
) -> CollectionChange:
    """Takes records out of the collection; they stay in your library."""
    return await runtime.library.labels.remove_from_collection(user.id, collection_id, body.ids)


@router.get("/tags", response_model=list[FacetCount])
async def list_tags(runtime: RuntimeDep, user: CurrentUser) -> list[FacetCount]:
    """Every tag you use, most used first, with how many records have it."""
    return await runtime.library.labels.tags(user.id)


@router.post("/tags", response_model=TagChange)
async def change_tags(body: TagsIn, runtime: RuntimeDep, user: CurrentUser) -> TagChange:
    """Adds and removes tags on a selection (``ids``) or on every record a search lists."""
    ids, query = body.named()
    return await runtime.library.labels.tag(
        user.id, ids=ids, query=query, add=body.add, remove=body.remove
    )


@router.put("/records/{record_id}/note", response_model=LibraryItem)
async def set_note(
    record_id: uuid.UUID, body: NoteIn, runtime: RuntimeDep, user: CurrentUser
) -> LibraryItem:
    """Replaces the record's note (plain text; empty deletes it); returns the record."""
    return await runtime.library.labels.set_note(user.id, record_id, body.text)
