"""A stream's retrieval configuration: one query per literature source, derived
deterministically from the stream's keywords, competitors and focus areas, then the
user's to edit. Monitoring runs it as a paper-search ``SearchStrategy``.

The derivation builds one query plan and lets each source's registered syntax write it
(``scholarstream.search.query.render``): the keywords OR-ed as the topic, AND-ed with the
focus areas OR-ed (a trial registry gets those as its condition field).

The organisations (``competitors``) are never a topic term of their own: the user's
affiliation, or an organisation named beside the topic, would narrow every query to it.
Only a stream that follows organisations (``follow_organisations``: an organisations and
competitors stream) OR-s them in beside the keywords; any other stream uses them only to
group its reports.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Collection, Sequence

from pydantic import BaseModel, ConfigDict, Field, field_validator

from scholarstream.errors import InvalidInputError
from scholarstream.search.core import ConceptBlock, SearchStrategy, SourceQuery
from scholarstream.search.query import QueryPlan, render, syntax_sources

DEFAULT_LIMIT = 50


class StreamQuery(BaseModel):
    """One source's query, in that source's own syntax."""

    model_config = ConfigDict(extra="forbid")

    query: str = Field(min_length=1, description="The query in the source's syntax.")
    filters: dict[str, str] = Field(default_factory=dict)
    limit: int = Field(default=DEFAULT_LIMIT, ge=1, le=500)
    enabled: bool = True

    @field_validator("query", mode="after")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        value = value.strip()
        if not value:
            raise ValueError("a query cannot be blank")
        return value


class RetrievalConfig(BaseModel):
    """Source name -> that source's query."""

    model_config = ConfigDict(extra="forbid")

    queries: dict[str, StreamQuery] = Field(min_length=1)

    @field_validator("queries", mode="after")
    @classmethod
    def _known_sources(cls, value: dict[str, StreamQuery]) -> dict[str, StreamQuery]:
        unknown = sorted(set(value) - set(syntax_sources()))
        if unknown:
            raise ValueError(
                f"unknown source {', '.join(map(repr, unknown))}; "
                f"sources: {', '.join(syntax_sources())}"
            )
        return value

    def strategy(
        self, *, date_from: dt.date | None = None, date_to: dt.date | None = None
    ) -> SearchStrategy:
        """The enabled queries as a paper-search strategy (what a monitoring run searches)."""
        queries = [
            SourceQuery(source=name, query=q.query, filters=q.filters, limit=q.limit)
            for name, q in self.queries.items()
            if q.enabled
        ]
        if not queries:
            raise InvalidInputError(
                "Every source of this stream is disabled.",
                hint="Enable at least one source in the stream's retrieval settings.",
            )
        return SearchStrategy(
            queries=queries,
            date_from=date_from,
            date_to=date_to,
            rationale="The research stream's retrieval configuration.",
        )


def topic_terms(
    keywords: Sequence[str], competitors: Sequence[str] = (), *, follow_organisations: bool
) -> list[str]:
    """The terms of the topic concept: the keywords, and the organisations only when the
    stream follows organisations (then any of them is enough, never all)."""
    return list(dict.fromkeys([*keywords, *(competitors if follow_organisations else ())]))


def build_retrieval_config(
    *,
    keywords: Sequence[str],
    focus_areas: Sequence[str] = (),
    competitors: Sequence[str] = (),
    follow_organisations: bool = False,
    sources: Sequence[str] | None = None,
    limit: int = DEFAULT_LIMIT,
    unavailable: Collection[str] = (),
) -> RetrievalConfig:
    """The derived configuration; the same fields always give the same queries. A source
    in ``unavailable`` (one that cannot run here, such as Google Scholar without its key)
    gets its query but is not enabled, so the stream's runs do not fail on it. The
    ``competitors`` join the topic only with ``follow_organisations`` (see the module)."""
    topic = topic_terms(keywords, competitors, follow_organisations=follow_organisations)
    if not topic:
        raise InvalidInputError(
            "A stream needs at least one keyword to search with.",
            hint="Add keywords to the stream.",
        )
    blocks = [ConceptBlock(concept=topic[0], terms=topic)]
    areas = list(dict.fromkeys(focus_areas))
    if areas:
        blocks.append(ConceptBlock(concept=areas[0], terms=areas))
    plan = QueryPlan(
        blocks=tuple(blocks), condition_block=1 if areas else None, limit=min(limit, 500)
    )
    queries: dict[str, StreamQuery] = {}
    for name in sources if sources is not None else syntax_sources():
        rendered = render(name, plan)
        queries[name] = StreamQuery(
            query=rendered.query,
            filters=rendered.filters,
            limit=rendered.limit,
            enabled=name not in unavailable,
        )
    return RetrievalConfig(queries=queries)
