"""Editing a created stream (``PATCH /streams/{id}``): each field sent is checked by the
same field validators as the creation workflow (``parse_field_value``), the retrieval
configuration is edited per source, and nothing changes unless the whole edit is valid.

The retrieval queries are derived from the keywords, focus areas and competitors. When
those change, queries the user never edited are derived again; queries the user edited are
kept unless ``derive_retrieval`` asks for fresh ones."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from scholarstream.errors import InvalidInputError
from scholarstream.streams.core._config import (
    StreamConfig,
    follows_organisations,
)
from scholarstream.streams.core._fields import (
    EDITABLE_FIELDS,
    FieldValue,
    empties_optional,
    field_spec,
    parse_field_value,
)
from scholarstream.streams.core._retrieval import RetrievalConfig, build_retrieval_config
from scholarstream.validation_messages import explain

TOPIC_FIELDS = ("keywords", "focus_areas", "competitors", "stream_type")
"""The fields the retrieval queries are derived from (the type says whether the
organisations are searched for)."""


class StreamQueryUpdate(BaseModel):
    """Changes to one source's query; the fields not sent stay as they are."""

    model_config = ConfigDict(extra="forbid")

    query: str | None = None
    filters: dict[str, str] | None = None
    limit: int | None = None
    enabled: bool | None = None


class RetrievalUpdate(BaseModel):
    model_config = ConfigDict(extra="forbid")

    queries: dict[str, StreamQueryUpdate] = Field(
        min_length=1, description="Source name -> changes to its query (a new source needs one)."
    )


class StreamUpdate(BaseModel):
    """The fields sent change; the others stay. List fields take a list or comma-separated
    text; choices are matched ignoring case; ``competitors`` (optional) is cleared with
    ``null``, ``[]`` or blank text; ``chat_instructions`` with ``null`` or ``""``."""

    model_config = ConfigDict(extra="forbid")

    purpose: str | None = None
    business_goals: list[str] | str | None = None
    expected_outcomes: str | None = None
    stream_name: str | None = None
    stream_type: str | None = Field(default=None, description="competitive, regulatory, ...")
    focus_areas: list[str] | str | None = None
    keywords: list[str] | str | None = None
    competitors: list[str] | str | None = None
    report_frequency: str | None = Field(default=None, description="daily, weekly, ...")
    chat_instructions: str | None = None
    retrieval: RetrievalUpdate | None = None
    derive_retrieval: bool = Field(
        default=False,
        description="Derive every source's query again from the keywords, focus areas and "
        "competitors, replacing edited queries (applied before the retrieval changes sent).",
    )
    enabled: bool | None = None


def apply_update(config: StreamConfig, update: StreamUpdate) -> StreamConfig:
    """``config`` with ``update`` applied; ``InvalidInputError`` names what is wrong."""
    values = config.model_dump(exclude={"retrieval"})
    for name in EDITABLE_FIELDS:
        if name in update.model_fields_set:
            values[name] = _field_value(name, getattr(update, name))
    retrieval = config.retrieval
    topic_changed = any(values[name] != getattr(config, name) for name in TOPIC_FIELDS)
    derived = _derived(config)
    if update.derive_retrieval or (topic_changed and _queries(retrieval) == _queries(derived)):
        retrieval = _switched_like(_derive(values), retrieval)
    if update.retrieval is not None:
        retrieval = _edit_queries(retrieval, update.retrieval)
    # Every value passed the field validators already: this cannot fail.
    return StreamConfig.model_validate({**values, "retrieval": retrieval})


def _field_value(name: str, raw: object) -> FieldValue:
    if name == "chat_instructions":
        return parse_field_value(name, raw if raw is not None else "")
    if empties_optional(name, raw):
        return []
    if raw is None:
        raise InvalidInputError(
            f"The {field_spec(name).label} is required and cannot be cleared.",
            hint=f"Send a new value for {name}, or leave it out of the request.",
        )
    return parse_field_value(name, raw, split_text=True)


def _derived(config: StreamConfig) -> RetrievalConfig:
    return build_retrieval_config(
        keywords=config.keywords,
        focus_areas=config.focus_areas,
        competitors=config.competitors,
        follow_organisations=follows_organisations(config.stream_type),
    )


def _queries(retrieval: RetrievalConfig) -> dict[str, tuple[str, dict[str, str], int]]:
    """What a source searches with, leaving out whether it is searched at all."""
    return {name: (q.query, q.filters, q.limit) for name, q in retrieval.queries.items()}


def _switched_like(derived: RetrievalConfig, current: RetrievalConfig) -> RetrievalConfig:
    """Queries derived again keep which sources are on: deriving changes what a source
    searches for, not whether it is searched."""
    queries = {
        name: query.model_copy(update={"enabled": current.queries[name].enabled})
        if name in current.queries
        else query
        for name, query in derived.queries.items()
    }
    return RetrievalConfig(queries=queries)


def _derive(values: dict[str, object]) -> RetrievalConfig:
    keywords, focus_areas, competitors, stream_type = (values[name] for name in TOPIC_FIELDS)
    assert isinstance(keywords, list)
    assert isinstance(focus_areas, list)
    assert isinstance(competitors, list)
    assert isinstance(stream_type, str)
    return build_retrieval_config(
        keywords=keywords,
        focus_areas=focus_areas,
        competitors=competitors,
        follow_organisations=follows_organisations(stream_type),
    )


def _edit_queries(retrieval: RetrievalConfig, update: RetrievalUpdate) -> RetrievalConfig:
    queries = {name: query.model_dump() for name, query in retrieval.queries.items()}
    for source, change in update.queries.items():
        queries[source] = {**queries.get(source, {}), **change.model_dump(exclude_unset=True)}
    try:
        return RetrievalConfig.model_validate({"queries": queries})
    except ValidationError as exc:
        raise InvalidInputError(
            f"The retrieval configuration is not valid: {explain(exc, whole='it')}.",
            hint="Send retrieval.queries.<source> (a known source) with a non-blank query "
            "and a limit from 1 to 500.",
        ) from exc
