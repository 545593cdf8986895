"""The paper-search models (seed 003): what each skill takes and gives.

``ParsedIntent`` (IntentParser) -> ``SearchStrategy`` (QueryBuilder, from a
``QueryBuilderInput``) -> ``SearchResults`` (Searcher) -> records (Deduplicator) ->
``ScoredPaper`` (RelevanceScorer) -> ``PaperCollection`` (ResultOrganizer). The user's
answers at the result checkpoint are a ``UserFeedback``.

The seed's ``Paper`` with an ``id`` is a ``ScoredPaper`` here: a ``Record`` (paper or trial)
with the run-stable ``id`` that feedback refers to (see ``keys.paper_key``).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from scholarstream.papers import Record
from scholarstream.sources import SourceStatus


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


def _clean_terms(values: list[str]) -> list[str]:
    """Strip, drop empties and case-insensitive repeats, keep order."""
    seen: set[str] = set()
    cleaned = []
    for value in values:
        value = " ".join(value.split())
        if value and value.lower() not in seen:
            seen.add(value.lower())
            cleaned.append(value)
    return cleaned


class Concept(_Model):
    """One idea of the question, with the other words authors use for it."""

    term: str = Field(min_length=1)
    synonyms: list[str] = Field(default_factory=list)

    @field_validator("synonyms", mode="after")
    @classmethod
    def _synonyms(cls, value: list[str]) -> list[str]:
        return _clean_terms(value)

    @property
    def all_terms(self) -> list[str]:
        return _clean_terms([self.term, *self.synonyms])


class PicoElements(_Model):
    """Population, Intervention, Comparison, Outcome of a clinical question."""

    population: str | None = None
    intervention: str | None = None
    comparison: str | None = None
    outcome: str | None = None

    def present(self) -> dict[str, str]:
        return {name: value for name, value in self.model_dump().items() if value}


class ParsedIntent(_Model):
    question: str = Field(min_length=1, description="The user's words, unchanged.")
    topic: str = Field(min_length=1, description="The question as a short topic line.")
    concepts: list[Concept] = Field(default_factory=list)
    pico: PicoElements | None = Field(default=None, description="Set for clinical questions only.")
    date_from: dt.date | None = None
    date_to: dt.date | None = None
    study_types: list[str] = Field(
        default_factory=list, description="e.g. randomized controlled trial, systematic review"
    )
    languages: list[str] = Field(default_factory=list, description="ISO 639-1 codes, e.g. en")
    exclude_terms: list[str] = Field(default_factory=list)

    @model_validator(mode="after")
    def _dates_in_order(self) -> ParsedIntent:
        if self.date_from and self.date_to and self.date_from > self.date_to:
            raise ValueError("date_from is after date_to")
        return self

    @property
    def is_clinical(self) -> bool:
        return bool(self.pico and self.pico.present())

    def terms(self) -> list[str]:
        """Every concept term and synonym, for lexical matching."""
        return _clean_terms([t for concept in self.concepts for t in concept.all_terms])


class ConceptBlock(_Model):
    """How the strategy searches one concept: free-text terms OR-ed, plus MeSH headings."""

    concept: str = Field(min_length=1)
    terms: list[str] = Field(default_factory=list)
    mesh_headings: list[str] = Field(default_factory=list)
    mesh_together: bool = Field(
        default=False,
        description="The headings name parts of the concept and are searched together "
        "(AND), as one alternative beside the terms.",
    )
    mesh_unexploded: list[str] = Field(
        default_factory=list,
        description="Headings among mesh_headings searched as indexed, without the "
        "narrower headings below them (a broader heading: PubMed's [Mesh:NoExp]).",
    )


class SourceQuery(_Model):
    """One source's query, in that source's own syntax (PubMed Boolean with [MeSH]/[tiab],
    OpenAlex search plus filters, arXiv fielded query, ...)."""

    source: str = Field(min_length=1)
    query: str = Field(min_length=1)
    filters: dict[str, str] = Field(default_factory=dict)
    limit: int = Field(default=50, ge=1, le=500)

    @field_validator("query", mode="after")
    @classmethod
    def _query(cls, value: str) -> str:
        value = value.strip()
        if not value:
            raise ValueError("a query cannot be blank")
        return value


class SearchStrategy(_Model):
    queries: list[SourceQuery] = Field(min_length=1, description="One query per source.")
    date_from: dt.date | None = None
    date_to: dt.date | None = None
    concepts: list[ConceptBlock] = Field(default_factory=list)
    rationale: str = Field(default="", description="Why this strategy, in a sentence or two.")

    @model_validator(mode="after")
    def _check(self) -> SearchStrategy:
        if self.date_from and self.date_to and self.date_from > self.date_to:
            raise ValueError("date_from is after date_to")
        sources = [q.source for q in self.queries]
        repeated = sorted({s for s in sources if sources.count(s) > 1})
        if repeated:
            raise ValueError(f"one query per source; repeated: {', '.join(repeated)}")
        return self

    @property
    def sources(self) -> list[str]:
        return [q.source for q in self.queries]

    def query_for(self, source: str) -> SourceQuery | None:
        return next((q for q in self.queries if q.source == source), None)

    def fingerprint(self) -> str:
        """Equal for strategies that would run the same searches (rationale and concept
        notes aside), so a rejected strategy is recognised when it comes back."""
        searches = sorted(
            (q.source, " ".join(q.query.lower().split()), sorted(q.filters.items()))
            for q in self.queries
        )
        body = json.dumps([searches, str(self.date_from), str(self.date_to)], separators=(",", ":"))
        return hashlib.sha256(body.encode()).hexdigest()[:16]


class UserFeedback(_Model):
    """What the user said about a strategy or a result list."""

    marked_relevant: list[str] = Field(default_factory=list, description="ScoredPaper ids.")
    marked_irrelevant: list[str] = Field(default_factory=list, description="ScoredPaper ids.")
    free_text_feedback: str = ""
    direction: Literal["broaden", "narrow"] | None = Field(
        default=None, description="Ask for more results, or fewer and more precise."
    )
    add_terms: list[str] = Field(default_factory=list, description="Terms to search for too.")
    exclude_terms: list[str] = Field(default_factory=list, description="Terms to exclude.")

    @field_validator("add_terms", "exclude_terms", mode="after")
    @classmethod
    def _terms(cls, value: list[str]) -> list[str]:
        return _clean_terms(value)

    @model_validator(mode="after")
    def _no_contradiction(self) -> UserFeedback:
        both = sorted(set(self.marked_relevant) & set(self.marked_irrelevant))
        if both:
            raise ValueError(f"marked both relevant and irrelevant: {', '.join(both)}")
        return self

    @property
    def is_empty(self) -> bool:
        return self == UserFeedback()


ChangeKind = Literal[
    "direction",
    "dates",
    "study_types",
    "languages",
    "humans",
    "title",
    "concepts",
    "terms",
    "exclusions",
    "filters",
    "fields",
]


class StrategyChange(_Model):
    """One change a new strategy makes to the one before, and the user's words it answers.

    A change made in answer to feedback always has a ``phrase``; a change with none behind
    it is not made (it is listed among the changes not made, with its ``reason``)."""

    kind: ChangeKind
    description: str = Field(description="What changed, in plain words.")
    phrase: str | None = Field(
        default=None, description="The words of the user's feedback this change answers."
    )
    sources: list[str] = Field(default_factory=list, description="Sources whose query changed.")
    reason: str | None = Field(
        default=None, description="For a change not made or undone: why, in plain words."
    )


class QueryBuilderInput(_Model):
    intent: ParsedIntent
    previous_strategies: list[SearchStrategy] = Field(default_factory=list)
    user_feedback: UserFeedback | None = None
    rejected_strategies: list[SearchStrategy] = Field(
        default_factory=list, description="Never to be proposed again."
    )


class SearchResults(_Model):
    """What the Searcher found: every source's records, and how each source fared."""

    records: list[Record] = Field(default_factory=list)
    statuses: list[SourceStatus] = Field(default_factory=list)
    notices: list[str] = Field(
        default_factory=list,
        description="Plain sentences for the user about the search as a whole (offline).",
    )


class LabelledPaper(_Model):
    """A paper the user judged; trains the relevance-feedback model."""

    id: str
    record: Record
    relevant: bool


class ScoredPaper(_Model):
    id: str = Field(description="Stable across iterations of a run; feedback refers to it.")
    record: Record
    score: float = Field(ge=0.0, le=1.0)
    reason: str | None = Field(default=None, description="One sentence: why this score.")
    sources: list[str] = Field(
        default_factory=list, description="The sources of this search that returned it."
    )
    origins: list[str] = Field(
        default_factory=list,
        description="Where a paper found in your library was before: the file formats it was "
        "imported from (ris, csv, bibtex, pubmed for PubMed XML, ...) or the sources it was "
        "saved from. Not sources of this search.",
    )
    label: Literal["relevant", "irrelevant"] | None = Field(
        default=None, description="The user's own judgement, when given."
    )


class PaperGroup(_Model):
    key: str
    label: str
    paper_ids: list[str]


GroupDimension = Literal["theme", "year", "study_type", "source"]


class Grouping(_Model):
    dimension: GroupDimension
    groups: list[PaperGroup]


class CollectionStats(_Model):
    total: int = 0
    found: int = Field(default=0, description="Records returned before deduplication.")
    duplicates_removed: int = 0
    by_source: dict[str, int] = Field(
        default_factory=dict, description="Papers each source of this search returned."
    )
    by_origin: dict[str, int] = Field(
        default_factory=dict,
        description="Papers found in your library, by where they came from before (the "
        "papers' ``origins``).",
    )
    origin_labels: dict[str, str] = Field(
        default_factory=dict,
        description="How to name each origin that is a file format (e.g. ris: RIS file); "
        "other origins are sources, named as the sources are.",
    )
    by_year: dict[str, int] = Field(default_factory=dict)
    year_min: int | None = None
    year_max: int | None = None
    with_abstract: int = 0
    mean_score: float | None = None
    sources_failed: list[str] = Field(default_factory=list)


class PaperCollection(_Model):
    question: str
    strategy: SearchStrategy | None = None
    papers: list[ScoredPaper] = Field(default_factory=list, description="Best first.")
    groupings: list[Grouping] = Field(default_factory=list)
    stats: CollectionStats = Field(default_factory=CollectionStats)
    source_statuses: list[SourceStatus] = Field(default_factory=list)
    notices: list[str] = Field(
        default_factory=list,
        description="Plain sentences for the user, each once: that the machine appears to "
        "be offline, that the query would leave out papers marked relevant.",
    )

    def paper(self, paper_id: str) -> ScoredPaper | None:
        return next((p for p in self.papers if p.id == paper_id), None)
