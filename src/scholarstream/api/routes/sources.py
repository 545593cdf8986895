"""Literature sources: what is available, and live searches (one source, or several at
once with a status per source). ``library`` is the current user's own library."""

from __future__ import annotations

import datetime as dt
from typing import Annotated

from fastapi import APIRouter, Query
from pydantic import BaseModel, Field, ValidationError

from scholarstream.api._deps import CurrentUser, RuntimeDep
from scholarstream.errors import InvalidInputError
from scholarstream.runtime import Runtime
from scholarstream.sources import (
    LiteratureSource,
    MultiSearchResult,
    SearchPage,
    SearchQuery,
    SourceInfo,
)
from scholarstream.sources.library import LIBRARY_INFO, LibrarySource
from scholarstream.validation_messages import explain

router = APIRouter(prefix="/sources", tags=["sources"])


def _local(runtime: Runtime, user: CurrentUser) -> dict[str, LiteratureSource]:
    return {"library": LibrarySource(runtime.library, user.id)}


@router.get("", response_model=list[SourceInfo])
async def list_sources(runtime: RuntimeDep) -> list[SourceInfo]:
    return [LIBRARY_INFO, *runtime.sources.infos()]


def _filters(values: list[str]) -> dict[str, str]:
    filters: dict[str, str] = {}
    for value in values:
        name, sep, content = value.partition(":")
        if not sep or not name.strip():
            raise InvalidInputError(
                f"Filter {value!r} is not NAME:VALUE.",
                hint="Write filters as name:value, e.g. filter=phase:PHASE3.",
            )
        filters[name.strip()] = content.strip()
    return filters


@router.get("/{name}/search", response_model=SearchPage)
async def search_source(
    name: str,
    runtime: RuntimeDep,
    user: CurrentUser,
    q: Annotated[str, Query(min_length=1, description="The query in the source's syntax.")],
    limit: Annotated[int, Query(ge=1, le=1000)] = 20,
    page_token: str | None = None,
    date_from: dt.date | None = None,
    date_to: dt.date | None = None,
    filter: Annotated[
        list[str] | None, Query(description="name:value, repeatable; see GET /sources.")
    ] = None,
) -> SearchPage:
    try:
        query = SearchQuery(
            text=q,
            limit=limit,
            page_token=page_token,
            date_from=date_from,
            date_to=date_to,
            filters=_filters(filter or []),
        )
    except ValidationError as exc:
        raise InvalidInputError(
            f"Invalid search: {explain(exc, whole='the search')}.",
            hint="Check the dates and limit.",
        ) from exc
    return await runtime.sources.resolve(name, _local(runtime, user)).search(query)


class MultiSearchIn(BaseModel):
    sources: list[str] = Field(min_length=1, max_length=10)
    query: SearchQuery


@router.post("/search", response_model=MultiSearchResult)
async def search_sources(
    body: MultiSearchIn, runtime: RuntimeDep, user: CurrentUser
) -> MultiSearchResult:
    """Searches every named source at once; a source that fails is reported in
    ``statuses`` with its error and hint, and the others' records are still returned."""
    for name in body.sources:
        runtime.sources.resolve(name, _local(runtime, user))  # unknown names fail up front
    return await runtime.sources.search(body.sources, body.query, local=_local(runtime, user))
