"""The research stream's configuration (seed 000): every field the creation workflow
collects, the partial form it has while the guide collects it, and the finished form a
stream is created from.

Field values are cleaned the same way wherever they come from (a clicked suggestion, an
inline edit, data the model extracted): text is stripped and must not be empty; lists are
stripped, emptied items and case-insensitive repeats dropped, and must keep one item.
"""

from __future__ import annotations

from collections.abc import Collection
from enum import StrEnum
from typing import Annotated

from pydantic import AfterValidator, BaseModel, ConfigDict, Field

from scholarstream.errors import InvalidInputError
from scholarstream.streams.core._retrieval import (
    RetrievalConfig,
    build_retrieval_config,
    topic_terms,
)

MAX_TEXT_CHARS = 2000
MAX_NAME_CHARS = 120
MAX_TERM_CHARS = 200
MAX_TERMS = 50
MAX_INSTRUCTIONS_CHARS = 4000


COLLECTED_FIELDS: tuple[str, ...] = (
    "purpose",
    "business_goals",
    "expected_outcomes",
    "stream_name",
    "stream_type",
    "focus_areas",
    "keywords",
    "competitors",
    "report_frequency",
)
"""The fields the workflow collects, one data step each, in the seed's order."""
OPTIONAL_FIELDS: frozenset[str] = frozenset({"competitors"})
REQUIRED_FIELDS: tuple[str, ...] = tuple(f for f in COLLECTED_FIELDS if f not in OPTIONAL_FIELDS)


class StreamType(StrEnum):
    COMPETITIVE = "competitive"
    REGULATORY = "regulatory"
    CLINICAL = "clinical"
    MARKET = "market"
    SCIENTIFIC = "scientific"
    MIXED = "mixed"


class ReportFrequency(StrEnum):
    DAILY = "daily"
    WEEKLY = "weekly"
    BIWEEKLY = "biweekly"
    MONTHLY = "monthly"


STREAM_TYPE_LABELS: dict[str, str] = {
    StreamType.COMPETITIVE: "Organisations and competitors",
    StreamType.REGULATORY: "Regulation and policy",
    StreamType.CLINICAL: "Clinical research",
    StreamType.MARKET: "Market and products",
    StreamType.SCIENTIFIC: "Scientific research",
    StreamType.MIXED: "A mix of these",
}
"""How each stream type is shown to a user (the value stays the seed's)."""
REPORT_FREQUENCY_LABELS: dict[str, str] = {
    ReportFrequency.DAILY: "Daily",
    ReportFrequency.WEEKLY: "Weekly",
    ReportFrequency.BIWEEKLY: "Every two weeks",
    ReportFrequency.MONTHLY: "Monthly",
}


def _text(value: str) -> str:
    value = value.strip()
    if not value:
        raise ValueError("must not be empty")
    return value


def _terms(values: list[str]) -> list[str]:
    seen: set[str] = set()
    cleaned: list[str] = []
    for value in values:
        term = " ".join(value.split())
        if len(term) > MAX_TERM_CHARS:
            raise ValueError(f"each item must be at most {MAX_TERM_CHARS} characters")
        if term and term.lower() not in seen:
            seen.add(term.lower())
            cleaned.append(term)
    if not cleaned:
        raise ValueError("must have at least one item")
    if len(cleaned) > MAX_TERMS:
        raise ValueError(f"must have at most {MAX_TERMS} items")
    return cleaned


Text = Annotated[str, Field(max_length=MAX_TEXT_CHARS), AfterValidator(_text)]
Name = Annotated[str, Field(max_length=MAX_NAME_CHARS), AfterValidator(_text)]
Terms = Annotated[list[str], AfterValidator(_terms)]


class PartialStreamConfig(BaseModel):
    """The configuration while it is being built: any field may still be missing."""

    model_config = ConfigDict(extra="forbid")

    purpose: Text | None = None
    business_goals: Terms | None = None
    expected_outcomes: Text | None = None
    stream_name: Name | None = None
    stream_type: StreamType | None = None
    focus_areas: Terms | None = None
    keywords: Terms | None = None
    competitors: Terms | None = None
    report_frequency: ReportFrequency | None = None
    chat_instructions: str | None = Field(default=None, max_length=MAX_INSTRUCTIONS_CHARS)

    def filled(self) -> set[str]:
        """The names of the fields that have a value."""
        return {name for name, value in self if value is not None}


class StreamConfig(BaseModel):
    """A finished configuration: what a research stream is created from."""

    model_config = ConfigDict(extra="forbid")

    stream_name: Name
    purpose: Text
    business_goals: Terms
    expected_outcomes: Text
    stream_type: StreamType
    focus_areas: Terms
    keywords: Terms
    competitors: list[str] = Field(default_factory=list)
    report_frequency: ReportFrequency
    chat_instructions: str = Field(
        default="",
        max_length=MAX_INSTRUCTIONS_CHARS,
        description="Added to the chat's system prompt on this stream's pages (seed 002).",
    )
    retrieval: RetrievalConfig = Field(
        description="One query per source, derived from keywords, competitors and focus "
        "areas; the user may edit it."
    )

    def topic_terms(self) -> list[str]:
        """The terms of the stream's topic, as its derived queries search them: the
        keywords, and the organisations only when the stream follows organisations."""
        return topic_terms(
            self.keywords,
            self.competitors,
            follow_organisations=follows_organisations(self.stream_type),
        )


def follows_organisations(stream_type: StreamType | str | None) -> bool:
    """Whether a stream of this type searches for its organisations (beside its keywords);
    any other stream only groups its reports by them."""
    return stream_type == StreamType.COMPETITIVE


def default_chat_instructions(config: PartialStreamConfig) -> str:
    """What the chat is told about a stream whose user wrote no instructions of their own."""
    lines = [f"This research stream is {config.stream_name!r}."]
    if config.purpose:
        lines.append(f"Its purpose: {config.purpose}")
    if config.focus_areas:
        lines.append(f"Focus areas: {', '.join(config.focus_areas)}.")
    if config.competitors:
        lines.append(f"Organisations followed: {', '.join(config.competitors)}.")
    if config.expected_outcomes:
        lines.append(f"The reports should support: {config.expected_outcomes}")
    return "\n".join(lines)


def finish_config(
    config: PartialStreamConfig, *, unavailable: Collection[str] = ()
) -> StreamConfig:
    """The finished configuration, with its retrieval configuration derived (the sources
    in ``unavailable`` not enabled) and default chat instructions; ``InvalidInputError``
    naming every required field still missing."""
    missing = [name for name in REQUIRED_FIELDS if getattr(config, name) is None]
    if missing:
        raise InvalidInputError(
            f"The stream cannot be created yet: {', '.join(missing)} "
            f"{'is' if len(missing) == 1 else 'are'} still missing.",
            hint="Answer the guide's questions, or fill the fields in the preview.",
        )
    assert config.keywords is not None
    retrieval = build_retrieval_config(
        keywords=config.keywords,
        focus_areas=config.focus_areas or [],
        competitors=config.competitors or [],
        follow_organisations=follows_organisations(config.stream_type),
        unavailable=unavailable,
    )
    values = config.model_dump(exclude_none=True)
    values.setdefault("chat_instructions", default_chat_instructions(config))
    # The partial configuration's values passed the same validators: this cannot fail.
    return StreamConfig.model_validate({**values, "retrieval": retrieval})
