"""The local library seen through the ``LiteratureSource`` protocol, so every search
surface can include it beside the live sources. Works offline."""

from __future__ import annotations

import uuid
from collections.abc import Sequence

from pydantic import ValidationError

from scholarstream.errors import InvalidInputError, SourceQueryError
from scholarstream.papers import Record
from scholarstream.sources._base import SearchPage, SearchQuery, SourceInfo, check_filters
from scholarstream.sources.library._library import Library
from scholarstream.sources.library._models import LibraryQuery
from scholarstream.validation_messages import explain

NAME = "library"
FILTERS = {"publication_type": "Only records of this publication type (or trial phase)."}

INFO = SourceInfo(
    name=NAME,
    label="Local library",
    description="The records you imported (PubMed XML, MEDLINE, RIS, BibTeX, EndNote XML, "
    "CSV, JSON). Works offline.",
    query_syntax="Plain words or a question, ranked by words (BM25 over title, abstract, "
    "keywords and MeSH terms; English stemming, stop words ignored) and by meaning "
    "(embeddings) together. No Boolean operators.",
    filters=FILTERS,
    rate_limit="none (local)",
    added_date="the day the record was added to the library (imported or saved)",
)


class LibrarySource:
    def __init__(self, library: Library, owner_id: uuid.UUID) -> None:
        self.library = library
        self.owner_id = owner_id

    @property
    def info(self) -> SourceInfo:
        return INFO

    async def search(self, query: SearchQuery) -> SearchPage:
        check_filters(NAME, query, FILTERS)
        offset = query.offset()
        # A stream asks for what is new: in a library, what was added since its last run,
        # whatever the year the work was published.
        added = query.dates == "added"
        try:
            library_query = LibraryQuery(
                text=query.text,
                year_from=query.date_from.year if query.date_from and not added else None,
                year_to=query.date_to.year if query.date_to and not added else None,
                added_from=query.date_from if added else None,
                added_to=query.date_to if added else None,
                publication_type=query.filters.get("publication_type"),
                offset=offset,
                limit=min(query.limit, 500),
            )
        except ValidationError as exc:
            raise SourceQueryError(
                NAME,
                f"The library cannot search that: {explain(exc, whole='the search')}.",
                hint="Dates fall in the years 1000 to 2999; pass page tokens unchanged.",
            ) from exc
        page = await self.library.search(self.owner_id, library_query)
        end = offset + len(page.items)
        return SearchPage(
            source=NAME,
            records=[item.record for item in page.items],
            total=page.total,
            next_page_token=str(end) if end < page.total else None,
        )

    async def fetch(self, ids: Sequence[str]) -> list[Record]:
        try:
            record_ids = [uuid.UUID(value) for value in ids]
        except ValueError as exc:
            raise InvalidInputError(
                "Library ids are UUIDs.", hint="Use the ids that library search returns."
            ) from exc
        return [item.record for item in await self.library.get_many(self.owner_id, record_ids)]
