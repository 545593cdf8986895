"""What the library's callers send and receive."""

from __future__ import annotations

import uuid
from datetime import datetime

from pydantic import BaseModel, ConfigDict, Field, model_validator

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
            raise ValueError("year_from is after year_to")
        return self


class LibraryItem(BaseModel):
    id: uuid.UUID
    record: Record
    added_at: datetime
    source_file: str | None = None
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
    imported: int = 0
    duplicates: int = Field(default=0, description="Records already in the library.")
    skipped: int = Field(default=0, description="Malformed records, listed in problems.")
    problems: list[ImportProblem] = Field(
        default_factory=list, description=f"The first {100} problems."
    )
