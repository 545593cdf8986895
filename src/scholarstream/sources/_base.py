"""What every literature source is: one async protocol, its query and page models, and
the registry the sources add themselves to."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field, model_validator

from scholarstream.errors import InvalidInputError, SourceQueryError
from scholarstream.papers import Record
from scholarstream.settings import SourceSettings
from scholarstream.sources._http import SourceHttp

DateKind = Literal["published", "added"]


class SearchQuery(BaseModel):
    """One search against one source. ``page_token`` is the ``next_page_token`` of the page
    before (an offset or a cursor, whichever the source pages by)."""

    model_config = ConfigDict(extra="forbid")

    text: str = Field(min_length=1, description="The query, in the source's own syntax.")
    limit: int = Field(default=20, ge=1, le=1000, description="Records per page.")
    page_token: str | None = None
    date_from: dt.date | None = None
    date_to: dt.date | None = None
    dates: DateKind = Field(
        default="published",
        description="Which date date_from/date_to bound: the publication date, or the date "
        "the source added the record ('added': PubMed's Entrez date, Crossref's created "
        "date, ...). A source that cannot filter by the date it added a record (its "
        "info's added_date is null) filters by publication date instead.",
    )
    filters: dict[str, str] = Field(
        default_factory=dict, description="Source-specific filters; see each source's info."
    )

    @model_validator(mode="after")
    def _dates_in_order(self) -> SearchQuery:
        if self.date_from and self.date_to and self.date_from > self.date_to:
            raise ValueError("date_from is after date_to")
        return self

    def offset(self) -> int:
        """The page token read as an offset, for sources that page by offset."""
        if self.page_token is None:
            return 0
        # ASCII digits only: str.isdigit() takes "²", which int() refuses.
        if not (self.page_token.isascii() and self.page_token.isdigit()):
            raise InvalidInputError(
                f"Page token {self.page_token!r} is not one this source gave out.",
                hint="Pass the next_page_token of the previous page unchanged.",
            )
        return int(self.page_token)


class SearchPage(BaseModel):
    source: str
    records: list[Record]
    total: int | None = Field(description="Matches in the whole source, when it says.")
    next_page_token: str | None = None


class SourceInfo(BaseModel):
    name: str
    label: str
    description: str
    record_kind: Literal["papers", "trials"] = "papers"
    query_syntax: str
    filters: dict[str, str] = Field(default_factory=dict, description="Filter name -> meaning.")
    api_key: Literal["required", "optional", "none"] = "none"
    api_key_setting: str | None = None
    configured: bool = True
    rate_limit: str
    problem: str | None = None
    added_date: str | None = Field(
        default=None,
        description="The date a query with dates='added' filters on (when the source added "
        "the record); null when the source can only filter by publication date.",
    )


class LiteratureSource(Protocol):
    @property
    def info(self) -> SourceInfo: ...

    async def search(self, query: SearchQuery) -> SearchPage: ...

    async def fetch(self, ids: Sequence[str]) -> list[Record]:
        """Full records for the source's own ids; ids it does not know are left out."""
        ...


def check_filters(source: str, query: SearchQuery, allowed: Mapping[str, str]) -> None:
    unknown = sorted(set(query.filters) - set(allowed))
    if unknown:
        raise SourceQueryError(
            source,
            f"{source} has no filter {', '.join(map(repr, unknown))}.",
            hint=f"Filters it accepts: {', '.join(sorted(allowed)) or 'none'}.",
        )


@dataclass(frozen=True)
class SourceContext:
    """What a source is built with: its settings and the shared, rate-limited HTTP layer."""

    settings: SourceSettings
    http: SourceHttp


SourceFactory = Callable[[SourceContext], LiteratureSource]

_FACTORIES: dict[str, SourceFactory] = {}


def register_source(name: str) -> Callable[[SourceFactory], SourceFactory]:
    def decorator(factory: SourceFactory) -> SourceFactory:
        if name in _FACTORIES:
            raise ValueError(f"source {name!r} is registered twice")
        _FACTORIES[name] = factory
        return factory

    return decorator


def source_names() -> list[str]:
    return sorted(_FACTORIES)


def build_source(name: str, context: SourceContext) -> LiteratureSource:
    factory = _FACTORIES.get(name)
    if factory is None:
        raise InvalidInputError(
            f"There is no source {name!r}.",
            hint=f"Sources: {', '.join(source_names())}.",
        )
    return factory(context)
