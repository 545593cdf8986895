"""What the evidence phase is asked, and what it answers: the pack and what was searched."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictInt, field_validator

from scholarstream.grounding.core import EvidencePack
from scholarstream.search.core import ModelFallback

MAX_PACK_SIZE = 100
MAX_QUESTION_CHARS = 2000


class EvidenceOptions(BaseModel):
    """How to look for evidence (a research draft's prompt is its question)."""

    model_config = ConfigDict(extra="forbid")

    size: StrictInt | None = Field(
        default=None,
        ge=1,
        le=MAX_PACK_SIZE,
        description="Records in the pack; default: the grounding.pack_size setting (20).",
    )
    sources: list[str] | None = Field(
        default=None,
        min_length=1,
        max_length=10,
        description="Sources to search; default: the configured default sources. "
        "'library' is your own imported records.",
    )
    library: StrictBool = Field(
        default=True, description="Search your library too (false: only the sources)."
    )
    offline: StrictBool = Field(
        default=False,
        description="Use the deterministic search skills even when a model is set up.",
    )

    @field_validator("sources", mode="after")
    @classmethod
    def _sources(cls, value: list[str] | None) -> list[str] | None:
        if value is None:
            return None
        names = [name.strip().lower() for name in value if name.strip()]
        if not names:
            raise ValueError("no source is named: name one, or leave sources out")
        return list(dict.fromkeys(names))


class EvidenceRequest(EvidenceOptions):
    """A question to find the evidence for, and how to look."""

    question: str = Field(
        min_length=1,
        max_length=MAX_QUESTION_CHARS,
        description="The research question, in your words.",
    )

    @field_validator("question", mode="after")
    @classmethod
    def _question(cls, value: str) -> str:
        value = " ".join(value.split())
        if not value:
            raise ValueError("the question is empty: say what you want the evidence for")
        return value

    @classmethod
    def for_question(cls, question: str, options: EvidenceOptions) -> EvidenceRequest:
        """``options`` for ``question``, cut to the longest question the phase reads."""
        return cls(question=question[:MAX_QUESTION_CHARS], **options.model_dump())


class QueryUsed(BaseModel):
    """One query the question was turned into, as it was sent to its source."""

    model_config = ConfigDict(extra="forbid")

    source: str
    query: str
    filters: dict[str, str] = Field(default_factory=dict)


class SourceSearched(BaseModel):
    """How one source fared: how many records it found, or why it failed."""

    model_config = ConfigDict(extra="forbid")

    source: str
    label: str = Field(description="The source's name as people write it ('PubMed').")
    ok: bool
    total: int | None = Field(default=None, description="Matches the source reported.")
    returned: int = Field(default=0, description="Records it returned for ranking.")
    in_pack: int = Field(default=0, description="Records of the pack it returned.")
    unreachable: bool = Field(
        default=False, description="Not reached at all: the machine appears to be offline."
    )
    error_code: str | None = None
    error: str | None = Field(default=None, description="What went wrong, in plain words.")
    hint: str | None = Field(default=None, description="What to do about it.")


class EvidenceSearch(BaseModel):
    """What was searched to build a pack, and how its records were chosen."""

    model_config = ConfigDict(extra="forbid")

    queries: list[QueryUsed] = Field(default_factory=list)
    sources: list[SourceSearched] = Field(default_factory=list)
    found: int = Field(default=0, description="Records returned, duplicates included.")
    distinct: int = Field(default=0, description="Works after merging duplicates.")
    related: int = Field(
        default=0,
        description="Works that share words or meaning with the question (the pack is the "
        "best of them).",
    )
    scored_by: Literal["rules", "model"] = Field(
        default="rules",
        description="rules: the offline relevance score (BM25 and concept coverage); "
        "model: the configured model's.",
    )
    by_meaning: bool = Field(
        default=False,
        description="The ranking also used meaning (embeddings), not only the score.",
    )
    notices: list[str] = Field(
        default_factory=list, description="Plain sentences about the search as a whole."
    )
    fallbacks: list[ModelFallback] = Field(
        default_factory=list, description="AI steps that used their offline counterpart."
    )

    @property
    def failed(self) -> list[SourceSearched]:
        return [source for source in self.sources if not source.ok]


class FoundIn(BaseModel):
    """The sources that returned one record of the pack."""

    model_config = ConfigDict(extra="forbid")

    key: int
    sources: list[str]


class EvidenceResult(BaseModel):
    """The evidence pack for a question, and what was searched to build it."""

    model_config = ConfigDict(extra="forbid")

    pack: EvidencePack
    search: EvidenceSearch
    found_in: list[FoundIn] = Field(
        default_factory=list, description="For each key of the pack, the sources that had it."
    )

    def sources_of(self, key: int) -> list[str]:
        return next((f.sources for f in self.found_in if f.key == key), [])
