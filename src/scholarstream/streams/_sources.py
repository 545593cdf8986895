"""Which literature sources a stream can search on this server. A source that cannot run
here (Google Scholar without a SerpAPI key) is not enabled in a new stream, so its
reports are not "partial" forever, and the stream page shows why and how to enable it."""

from __future__ import annotations

from collections.abc import Iterable

from pydantic import BaseModel, Field

from scholarstream.search.query import syntax_sources
from scholarstream.sources import SourceInfo


class StreamSource(BaseModel):
    name: str
    label: str
    available: bool = Field(description="The source can run on this server.")
    reason: str | None = Field(
        default=None, description="Why it cannot run here (null when it can)."
    )
    how_to_enable: str | None = Field(
        default=None, description="What makes it available (null when it is)."
    )
    query_syntax: str


class StreamSourceList(BaseModel):
    sources: list[StreamSource] = Field(description="Every source a stream can search.")


def _source(info: SourceInfo) -> StreamSource:
    if info.configured:
        return StreamSource(
            name=info.name, label=info.label, available=True, query_syntax=info.query_syntax
        )
    setting = info.api_key_setting
    return StreamSource(
        name=info.name,
        label=info.label,
        available=False,
        reason=info.problem or f"{info.label} is not set up on this server.",
        how_to_enable=(
            f"Set {setting} in the server's environment, restart the server, then turn "
            "the source on here."
            if setting
            else "Ask the server's administrator to set it up, then turn it on here."
        ),
        query_syntax=info.query_syntax,
    )


def stream_sources(infos: Iterable[SourceInfo]) -> StreamSourceList:
    """The sources a stream's queries are written for, each available or not (and why)."""
    searchable = set(syntax_sources())
    return StreamSourceList(sources=[_source(i) for i in infos if i.name in searchable])


def unavailable_sources(infos: Iterable[SourceInfo]) -> frozenset[str]:
    """The names of the sources that cannot run on this server."""
    return frozenset(s.name for s in stream_sources(infos).sources if not s.available)
