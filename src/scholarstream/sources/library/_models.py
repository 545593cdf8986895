"""What the library's callers send and receive."""

from __future__ import annotations

import uuid
from datetime import date, datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, computed_field, model_validator

from scholarstream.errors import NotFoundError
from scholarstream.papers import Record

MAX_OFFSET = 2**31 - 1
"""The largest offset a query may ask for (a 32-bit integer: any database takes it)."""


FIRST_YEAR = 1000
LAST_YEAR = 2999


class LibraryQuery(BaseModel):
    """Empty ``text`` lists the library, newest first; otherwise the records that have the
    words are ranked (BM25 over title, abstract, keywords and MeSH terms, fused with
    meaning), followed by those related by meaning alone (``related``)."""

    model_config = ConfigDict(extra="forbid")

    text: str = ""
    year_from: int | None = None
    year_to: int | None = None
    publication_type: str | None = Field(
        default=None, description="Only records with this publication type (case-insensitive)."
    )
    related: bool = Field(
        default=True,
        description="With search words: also list the records related by meaning that lack "
        "the words, after those that have them (each marked ``match: meaning``).",
    )
    collection: uuid.UUID | None = Field(
        default=None, description="Only the records of this collection (its id)."
    )
    tag: str | None = Field(default=None, description="Only the records with this tag.")
    has_note: bool | None = Field(
        default=None, description="True: only records with a note; False: only those without."
    )
    added_from: date | None = Field(
        default=None, description="Only records added to the library on or after this day (UTC)."
    )
    added_to: date | None = Field(
        default=None, description="Only records added to the library on or before this day (UTC)."
    )
    offset: int = Field(default=0, ge=0, le=MAX_OFFSET)
    limit: int = Field(default=20, ge=1, le=500)

    @model_validator(mode="after")
    def _years_in_order(self) -> LibraryQuery:
        for year, which in ((self.year_from, "first"), (self.year_to, "last")):
            if year is not None and not FIRST_YEAR <= year <= LAST_YEAR:
                bound = f"{FIRST_YEAR} or later" if year < FIRST_YEAR else f"{LAST_YEAR} or earlier"
                raise ValueError(
                    f"the {which} year must be {bound} (you gave {year}): give years as four digits"
                )
        if self.year_from and self.year_to and self.year_from > self.year_to:
            raise ValueError(
                f"the first year ({self.year_from}) is after the last ({self.year_to}):"
                " give the earlier year first"
            )
        if self.added_from and self.added_to and self.added_from > self.added_to:
            raise ValueError(
                f"the first day added ({self.added_from}) is after the last ({self.added_to}):"
                " give the earlier day first"
            )
        return self

    @property
    def has_words(self) -> bool:
        return bool(self.text.strip())

    @property
    def has_labels(self) -> bool:
        """Does the query filter by collection, tag or note?"""
        return self.collection is not None or bool(self.tag) or self.has_note is not None

    @property
    def has_added_dates(self) -> bool:
        return self.added_from is not None or self.added_to is not None

    def filters_described(self, collection: str | None = None) -> str:
        """The filters in words, after "records": "of 2020 to 2024, of type Review, in the
        collection “Included” and tagged “RCT”" ("" without filters; ``collection``: the
        name of the query's collection)."""
        parts: list[str] = []
        if self.year_from and self.year_to:
            parts.append(
                f"of {self.year_from}"
                if self.year_from == self.year_to
                else f"of {self.year_from} to {self.year_to}"
            )
        elif self.year_from:
            parts.append(f"of {self.year_from} or later")
        elif self.year_to:
            parts.append(f"of {self.year_to} or earlier")
        if self.publication_type:
            parts.append(f"of type {self.publication_type}")
        if self.collection is not None:
            parts.append(f"in the collection “{collection}”" if collection else "in the collection")
        if self.tag:
            parts.append(f"tagged “{self.tag}”")
        if self.has_note is not None:
            parts.append("with a note" if self.has_note else "without a note")
        if self.added_from and self.added_to:
            parts.append(f"added from {self.added_from} to {self.added_to}")
        elif self.added_from:
            parts.append(f"added on {self.added_from} or later")
        elif self.added_to:
            parts.append(f"added on {self.added_to} or earlier")
        if len(parts) < 2:
            return "".join(parts)
        return ", ".join(parts[:-1]) + " and " + parts[-1]

    def described(self, collection: str | None = None) -> str:
        """What the query asks for, in words: "the words “taurine” among the records of
        2020 to 2024 and of type Review", "the records tagged “RCT”"."""
        filters = self.filters_described(collection)
        if self.has_words:
            words = f"the words “{self.text.strip()}”"
            return f"{words} among the records {filters}" if filters else words
        return f"the records {filters}" if filters else "your whole library"


class CollectionRef(BaseModel):
    id: uuid.UUID
    name: str


class LibraryItem(BaseModel):
    id: uuid.UUID
    record: Record
    added_at: datetime
    source_file: str | None = None
    merged_from: list[str] = Field(
        default_factory=list,
        description="The files of the duplicates merged into this record (its own is source_file).",
    )
    collections: list[CollectionRef] = Field(
        default_factory=list, description="The collections the record is in, by name."
    )
    tags: list[str] = Field(default_factory=list, description="Its tags, in alphabetical order.")
    note: str | None = Field(default=None, description="Its note (plain text), if any.")
    score: float | None = Field(
        default=None,
        description="Relevance: words and meaning fused (0 to 1), or the BM25 score "
        "while meaning is not available; None when listing.",
    )
    match: Literal["words", "meaning"] | None = Field(
        default=None,
        description="words: the record has the search words; meaning: it lacks them and is "
        "listed as related by meaning. None when listing without search words.",
    )

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
    total: int = Field(description="Records listed for the query and filters.")
    matching: int = Field(
        default=0,
        description="Of them, the records that have the search words (listed first); all of "
        "them when listing without words.",
    )
    related: int = Field(
        default=0,
        description="Of them, the records related by meaning alone, listed after the others.",
    )
    offset: int
    limit: int
    items: list[LibraryItem]


class FacetCount(BaseModel):
    value: str = Field(description="A publication type (lower case) or a year.")
    count: int


class CollectionCount(BaseModel):
    id: uuid.UUID
    name: str
    count: int


class LibraryFacets(BaseModel):
    """How the records a search lists spread over publication types, years, collections
    and tags, and how many have a note."""

    total: int = Field(description="Records listed for the query and filters.")
    publication_types: list[FacetCount] = Field(description="Most frequent first.")
    years: list[FacetCount] = Field(description="Newest first; records without a year left out.")
    collections: list[CollectionCount] = Field(
        default_factory=list, description="The collections holding some of them, by name."
    )
    tags: list[FacetCount] = Field(
        default_factory=list, description="Their tags, most frequent first."
    )
    with_note: int = Field(default=0, description="Of them, the records with a note.")


class CollectionInfo(BaseModel):
    """A collection of records, with how many it holds."""

    id: uuid.UUID
    name: str
    records: int
    created_at: datetime
    updated_at: datetime


class CollectionChange(BaseModel):
    """What adding records to a collection (or removing them) did."""

    collection: CollectionInfo
    added: int = Field(default=0, description="Records put in the collection.")
    already: int = Field(default=0, description="Records that were in it already.")
    removed: int = Field(
        default=0, description="Records taken out of it (they stay in the library)."
    )
    not_in_library: int = Field(
        default=0,
        description="Records named by id that are not in your library (deleted, or someone "
        "else's): left out.",
    )


class TagChange(BaseModel):
    """What tagging records did."""

    records: int = Field(description="Records named (the owner's).")
    added: int = Field(description="Tags put on records that did not have them.")
    removed: int = Field(description="Tags taken off records that had them.")


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
    ``kept`` the record it was merged into as it was before its first merge (so the two
    sides show what each one brought: its file, its identifiers)."""

    id: uuid.UUID
    merged_at: datetime
    origin: Literal["import", "file", "scan", "hand"] = Field(
        description="import: matched a record already in the library; file: a copy inside "
        "the same file; scan: found by find duplicates; hand: merged by a person."
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


class DuplicateCopy(BaseModel):
    """A record found to be a copy of another, and what matched."""

    record: MergedRecord
    evidence: str = Field(description="What matched: the identifier or the rule.")


class DuplicateGroup(BaseModel):
    """One work found more than once: the record the copies would be merged into (the
    oldest) and the copies."""

    kept: MergedRecord
    copies: list[DuplicateCopy]


class DuplicateScan(BaseModel):
    """What "find duplicates" did over the whole library (or, in a dry run, would do)."""

    checked: int = Field(description="Records compared.")
    groups: int = Field(description="Works found more than once.")
    merged: int = Field(description="Records merged into another (each can be split).")
    merges: list[LibraryMergeInfo] = Field(
        default_factory=list, description="The first 100 merges made."
    )
    dry_run: bool = Field(default=False, description="Nothing was merged: see candidates.")
    candidates: list[DuplicateGroup] = Field(
        default_factory=list,
        description="In a dry run, the first 100 groups that would be merged, with evidence.",
    )

    @property
    def copies(self) -> int:
        """Records that are copies of another (merged, or in a dry run to be merged)."""
        return self.merged if not self.dry_run else sum(len(g.copies) for g in self.candidates)


class NothingMatchedError(NotFoundError):
    """An export (or another action on a search's records) that would take no record:
    nothing is done. ``related``: records related by meaning the query left out."""

    def __init__(
        self,
        query: LibraryQuery,
        *,
        related: int = 0,
        advice: ExportAdvice | None = None,
        collection: str | None = None,
        action: str = "exported",
    ) -> None:
        self.query = query
        self.related = related
        self.options = advice or ExportAdvice()
        self.collection = collection
        self.action = action
        super().__init__(
            f"Nothing matched {query.described(collection)}: nothing was {action}."
            if query.has_words or query.filters_described()
            else f"Your library is empty: nothing was {action}.",
            hint=self.advice(),
        )

    def advice(self) -> str:
        """What to try, in the words of the interface that asked (``options``)."""
        options, query = self.options, self.query
        tries = []
        if self.related:
            noun = "record is" if self.related == 1 else "records are"
            tries.append(f"{self.related} {noun} related by meaning: {options.related}")
        if query.has_words:
            tries.append("try fewer or other words")
        if query.year_from or query.year_to or query.publication_type:
            tries.append("widen the years or the publication type")
        if query.has_labels:
            tries.append("leave out the collection, tag or note filter")
        tries.append(options.search)
        hint = "; ".join(tries)
        return hint[0].upper() + hint[1:] + "."

    def told(self, advice: ExportAdvice) -> NothingMatchedError:
        """The same error, its advice in the words of ``advice``."""
        return NothingMatchedError(
            self.query,
            related=self.related,
            advice=advice,
            collection=self.collection,
            action=self.action,
        )


class ExportAdvice(BaseModel):
    """How an interface names the ways out of an empty export."""

    related: str = "add related=true to take those too"
    search: str = "searching the library with the same words shows what it holds"
