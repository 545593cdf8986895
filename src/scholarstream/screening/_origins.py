"""Where a project's records come from: a search run's results, a stream report's items,
or records of the library (the records a library search finds, or a selection of them).
Each origin also gives what PRISMA's identification needs: the records per source and the
duplicates removed before screening, where it knows them."""

from __future__ import annotations

import uuid
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from scholarstream.db import Database
from scholarstream.errors import ConflictError, InvalidInputError
from scholarstream.papers import Record
from scholarstream.screening.core import Identification, Origin, SourceCount, agrees, counted
from scholarstream.search import SearchRunStore
from scholarstream.sources.library import (
    Library,
    LibraryItem,
    LibraryQuery,
    NothingMatchedError,
)
from scholarstream.streams.monitoring import ReportStore
from scholarstream.validation_messages import explain

MAX_RECORDS = 20_000
"""A project screens at most this many records."""
_PAGE = 500


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class FromSearchRun(_Model):
    kind: Literal["search_run"] = "search_run"
    run_id: uuid.UUID = Field(description="A search run with results.")


class FromStreamReport(_Model):
    kind: Literal["stream_report"] = "stream_report"
    stream_id: uuid.UUID
    report_id: uuid.UUID


class FromLibrary(_Model):
    """Library records, named one way: a ``collection_id`` (its records, in the order
    added), the ``record_ids`` given (a selection), or every record a search of the library
    finds (``query``: its words, ranked; no words: every record passing the filters
    ``year_from``, ``year_to``, ``publication_type``, ``tag``). A search's words or filters
    beside a collection or a selection are refused, never dropped."""

    kind: Literal["library"] = "library"
    query: str = Field(default="", description="Search words; empty: no word filter.")
    year_from: int | None = None
    year_to: int | None = None
    publication_type: str | None = None
    tag: str | None = Field(default=None, description="Only the records with this tag.")
    collection_id: uuid.UUID | None = Field(
        default=None,
        description="A collection of the library: its records (without a search's words or "
        "filters).",
    )
    record_ids: list[uuid.UUID] | None = Field(
        default=None,
        description="A selection of library records (ids), instead of a search or a collection.",
    )

    @model_validator(mode="after")
    def _bounded(self) -> FromLibrary:
        if self.record_ids is not None and not self.record_ids:
            raise ValueError("the selection is empty: select at least one record")
        if self.record_ids is not None and len(self.record_ids) > MAX_RECORDS:
            raise ValueError(f"select at most {MAX_RECORDS:,} records")
        ways = [
            name
            for name, given in (
                ("collection_id", self.collection_id is not None),
                ("record_ids", self.record_ids is not None),
            )
            if given
        ]
        searched = self.searched_by()
        if len(ways) > 1 or (ways and searched):
            raise ValueError(
                "name the library records one way: a search (query and its filters), a "
                "collection (collection_id) or a selection (record_ids), not several; you "
                f"gave {_listed([*searched, *ways])}"
            )
        if not ways:
            try:
                self.library_query()
            except ValidationError as exc:
                raise ValueError(explain(exc, whole="the library search")) from None
        return self

    def searched_by(self) -> list[str]:
        """The fields of a library search given (words, filters), by name."""
        return [
            name
            for name, value in (
                ("query", self.query.strip()),
                ("year_from", self.year_from),
                ("year_to", self.year_to),
                ("publication_type", (self.publication_type or "").strip()),
                ("tag", (self.tag or "").strip()),
            )
            if value not in (None, "")
        ]

    def library_query(self) -> LibraryQuery:
        return LibraryQuery(
            text=self.query,
            year_from=self.year_from,
            year_to=self.year_to,
            publication_type=self.publication_type,
            tag=self.tag,
            related=False,  # a screening set is what the words find, nothing looser
        )


def _listed(names: list[str]) -> str:
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"


RecordSource = Annotated[
    FromSearchRun | FromStreamReport | FromLibrary, Field(discriminator="kind")
]


@dataclass(frozen=True)
class Gathered:
    origin: Origin
    identification: Identification
    records: list[Record]


def _too_many(count: int) -> InvalidInputError:
    return InvalidInputError(
        f"That is {count:,} records; a screening project takes at most {MAX_RECORDS:,}.",
        hint="Narrow the search (more words, years, a publication type) and create it again.",
    )


def _label(labels: Mapping[str, str]) -> Callable[[str], str]:
    return lambda name: labels.get(name, name)


async def from_search_run(
    database: Database, user_id: uuid.UUID, spec: FromSearchRun, labels: Mapping[str, str]
) -> Gathered:
    run = await SearchRunStore(database).get(user_id, spec.run_id)
    collection = run.collection
    if collection is None or not collection.papers:
        raise ConflictError(
            "This search run has no results to screen yet.",
            hint="Wait until it shows its results (or approve its strategy), then create the "
            "project again.",
        )
    if len(collection.papers) > MAX_RECORDS:
        raise _too_many(len(collection.papers))
    name = _label(labels)
    sources = [
        SourceCount(source=name(status.source), records=status.returned)
        for status in collection.source_statuses
        if status.ok
    ]
    if not sources:
        sources = [
            SourceCount(source=name(s), records=n) for s, n in collection.stats.by_source.items()
        ]
    return Gathered(
        origin=Origin(
            kind="search_run",
            reference=str(run.id),
            label=f"Search run: {run.question}"[:300],
        ),
        identification=Identification(
            sources=sources, duplicates_removed=collection.stats.duplicates_removed
        ),
        records=[paper.record for paper in collection.papers],
    )


async def from_stream_report(
    database: Database, user_id: uuid.UUID, spec: FromStreamReport, labels: Mapping[str, str]
) -> Gathered:
    stored = await ReportStore(database).get(user_id, spec.stream_id, spec.report_id)
    report = stored.report
    if report is None or not report.items:
        raise ConflictError(
            "This report has no items to screen.",
            hint="Pick a finished report with new items.",
        )
    name = _label(labels)
    counts = report.counts
    # A source that failed identified nothing: it is no PRISMA source with "n = 0".
    failed = {outcome.source for outcome in stored.sources if not outcome.ok}
    return Gathered(
        origin=Origin(
            kind="stream_report",
            reference=f"{spec.stream_id}/{spec.report_id}",
            label=f"Stream report: {report.stream_name}, new since {report.since.isoformat()}",
        ),
        identification=Identification(
            sources=[
                SourceCount(source=name(s), records=n)
                for s, n in counts.by_source.items()
                if s not in failed
            ],
            duplicates_removed=counts.duplicates_dropped,
            other_removed=counts.already_reported or None,
            other_removed_reason="Already in an earlier report of the stream",
        ),
        records=[item.record for item in report.items],
    )


_NO_FILE = "Library (saved records)"


def _by_file(items: list[LibraryItem], copies: Mapping[str | None, int]) -> list[SourceCount]:
    """The records per file they came from, with the copies merged into them (each counted
    under its own file): what was identified before the duplicates were removed."""
    files = Counter(item.source_file or _NO_FILE for item in items)
    for source_file, count in copies.items():
        files[source_file or _NO_FILE] += count
    return [SourceCount(source=f"Library: {name}", records=n) for name, n in files.most_common()]


async def _items(library: Library, user_id: uuid.UUID, ids: list[uuid.UUID]) -> list[LibraryItem]:
    if len(ids) > MAX_RECORDS:
        raise _too_many(len(ids))
    items: list[LibraryItem] = []
    for start in range(0, len(ids), _PAGE):
        items += await library.get_many(user_id, ids[start : start + _PAGE])
    return items


async def from_library(library: Library, user_id: uuid.UUID, spec: FromLibrary) -> Gathered:
    if spec.record_ids is not None:
        wanted = list(dict.fromkeys(spec.record_ids))
        items = await _items(library, user_id, wanted)
        missing = len(wanted) - len(items)
        if missing:
            raise InvalidInputError(
                f"{counted(missing)} of the selection {agrees(missing, 'is', 'are')} not in "
                "your library (deleted, or never yours).",
                hint="Select the records again on the Library page.",
            )
        label = f"Library: {counted(len(items), 'selected record')}"
        reference = None
    elif spec.collection_id is not None:
        collection = await library.labels.collection(user_id, spec.collection_id)
        items = await _items(
            library, user_id, await library.collection_record_ids(user_id, spec.collection_id)
        )
        if not items:
            raise InvalidInputError(
                f"The collection “{collection.name}” holds no records.",
                hint="Add records to it on the Library page, or pick another collection.",
            )
        label = f"Library collection: {collection.name}"
        reference = str(collection.id)
    else:
        query = spec.library_query()
        try:
            ids = await library.record_ids(user_id, query)
        except NothingMatchedError as exc:
            raise InvalidInputError(
                "The library search finds no records: there is nothing to screen.",
                hint=exc.hint,
            ) from None
        items = await _items(library, user_id, ids)
        described = query.described()
        label = (
            f"Library: the records with {described}"
            if query.has_words
            else f"Library: {described}"
            if query.filters_described()
            else "Library: every record"
        )
        reference = spec.query or None
    # The copies merged into these records as the files were imported (or by find
    # duplicates, or by hand) are the duplicates this review had removed.
    copies = await library.merged_copies(user_id, [item.id for item in items])
    return Gathered(
        origin=Origin(kind="library", reference=reference, label=label[:300]),
        identification=Identification(
            sources=_by_file(items, copies), duplicates_removed=sum(copies.values())
        ),
        records=[item.record for item in items],
    )
