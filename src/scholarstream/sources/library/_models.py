"""What the library's callers send and receive."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, computed_field, model_validator

from scholarstream.papers import Record

MAX_OFFSET = 2**31 - 1
"""The largest offset a query may ask for (a 32-bit integer: any database takes it)."""


class LibraryQuery(BaseModel):
    """Empty ``text`` lists the library, newest first; otherwise results are ranked (BM25
    over title, abstract, keywords and MeSH terms)."""

    model_config = ConfigDict(extra="forbid")

    text: str = ""
    year_from: int | None = Field(default=None, ge=1000, le=2999)
    year_to: int | None = Field(default=None, ge=1000, le=2999)
    publication_type: str | None = Field(
        default=None, description="Only records with this publication type (case-insensitive)."
    )
    offset: int = Field(default=0, ge=0, le=MAX_OFFSET)
    limit: int = Field(default=20, ge=1, le=500)

    @model_validator(mode="after")
    def _years_in_order(self) -> LibraryQuery:
        if self.year_from and self.year_to and self.year_from > self.year_to:
            raise ValueError(
                f"the first year ({self.year_from}) is after the last ({self.year_to}):"
                " give the earlier year first"
            )
        return self


class LibraryItem(BaseModel):
    id: uuid.UUID
    record: Record
    added_at: datetime
    source_file: str | None = None
    merged_from: list[str] = Field(
        default_factory=list,
        description="The files of the duplicates merged into this record (its own is source_file).",
    )
    score: float | None = Field(default=None, description="BM25 score; None when listing.")

    @property
    def reference(self) -> str:
        """How a person names the record: its DOI, else its PMID, else its identifier at
        its source, else its id in the library."""
        ids = self.record.ids
        if ids.doi:
            return ids.doi
        if ids.pmid:
            return f"PMID:{ids.pmid}"
        return self.record.record_id or str(self.id)


class LibraryPage(BaseModel):
    total: int = Field(description="Records matching the query and filters.")
    offset: int
    limit: int
    items: list[LibraryItem]


class FacetCount(BaseModel):
    value: str = Field(description="A publication type (lower case) or a year.")
    count: int


class LibraryFacets(BaseModel):
    """How the records a search finds spread over publication types and years."""

    total: int = Field(description="Records matching the query and filters.")
    publication_types: list[FacetCount] = Field(description="Most frequent first.")
    years: list[FacetCount] = Field(description="Newest first; records without a year left out.")


class ImportProblem(BaseModel):
    record_number: int
    line: int | None = None
    field: str | None = Field(
        default=None, description="The field at fault (e.g. abstract), when one is."
    )
    message: str


class ImportReport(BaseModel):
    file: str
    format: str
    imported: int = Field(default=0, description="New records added to the library.")
    merged: int = Field(
        default=0,
        description="Copies of a record already in the library, merged into it (its "
        "identifiers and richer fields added; the merge can be split again).",
    )
    in_file_duplicates: int = Field(
        default=0,
        description="Copies of another record of the same file, merged into it.",
    )
    already_present: int = Field(
        default=0,
        description="Records the library already holds exactly as they are (the same file "
        "imported again): nothing to add.",
    )
    skipped: int = Field(default=0, description="Malformed records, listed in problems.")
    problems: list[ImportProblem] = Field(
        default_factory=list, description=f"The first {100} problems."
    )

    @computed_field(  # type: ignore[prop-decorator]
        description="Records not added as new ones: merged + in_file_duplicates + already_present."
    )
    @property
    def duplicates(self) -> int:
        return self.merged + self.in_file_duplicates + self.already_present


class MergedRecord(BaseModel):
    """One side of a merge, as a person recognises it."""

    id: uuid.UUID
    title: str
    year: int | None = None
    identifiers: dict[str, str] = Field(
        default_factory=dict, description="DOI, PMID, PMCID, arXiv id, ... by name."
    )
    source_file: str | None = None


class LibraryMergeInfo(BaseModel):
    """A record merged into another: ``absorbed`` is the copy as it was before the merge,
    ``kept`` the record it was merged into, as it is now."""

    id: uuid.UUID
    merged_at: datetime
    origin: Literal["import", "file", "scan"] = Field(
        description="import: matched a record already in the library; file: a copy inside "
        "the same file; scan: found by find duplicates."
    )
    evidence: str = Field(description="What matched: the identifier or the rule.")
    kept: MergedRecord
    absorbed: MergedRecord
    split_at: datetime | None = None


class MergePage(BaseModel):
    total: int
    offset: int
    limit: int
    items: list[LibraryMergeInfo]


class SplitResult(BaseModel):
    merge: LibraryMergeInfo
    restored: LibraryItem = Field(description="The absorbed record, its own record again.")
    kept: LibraryItem = Field(description="The record it had been merged into, without it.")


class DuplicateScan(BaseModel):
    """What "find duplicates" did over the whole library."""

    checked: int = Field(description="Records compared.")
    groups: int = Field(description="Works found more than once.")
    merged: int = Field(description="Records merged into another (each can be split).")
    merges: list[LibraryMergeInfo] = Field(
        default_factory=list, description="The first 100 merges made."
    )
