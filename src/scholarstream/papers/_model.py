"""The literature record: ``Paper`` for publications, ``Trial`` for registered clinical trials.

Sources, file formats and the local library all produce these models; everything downstream
(search, streams, chat tools) consumes them. ``Record`` is the discriminated union of both.
"""

from __future__ import annotations

import datetime as dt
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from scholarstream.papers._identifiers import (
    normalize_arxiv_id,
    normalize_doi,
    normalize_nct_id,
    normalize_openalex_id,
    normalize_orcid,
    normalize_pmcid,
    normalize_pmid,
    normalize_s2_id,
)


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Author(_Model):
    """A person; ``family``/``given`` when the source splits the name, else ``name`` only."""

    name: str
    family: str | None = None
    given: str | None = None
    orcid: str | None = None
    affiliations: list[str] = Field(default_factory=list)

    @field_validator("orcid", mode="before")
    @classmethod
    def _orcid(cls, value: str | None) -> str | None:
        return normalize_orcid(value)

    @classmethod
    def from_parts(cls, family: str | None, given: str | None, **extra: object) -> Author | None:
        family = (family or "").strip() or None
        given = (given or "").strip() or None
        if family is None and given is None:
            return None
        name = ", ".join(part for part in (family, given) if part)
        return cls.model_validate({"name": name, "family": family, "given": given, **extra})

    @classmethod
    def parse(cls, text: str) -> Author | None:
        """``"Smith, John A"`` or ``"John A Smith"`` -> an Author with family and given."""
        text = " ".join(text.split()).strip(" ,;")
        if not text:
            return None
        if "," in text:
            family, _, given = text.partition(",")
            return cls.from_parts(family, given)
        parts = text.split(" ")
        if len(parts) == 1:
            return cls(name=text, family=text)
        return cls(name=text, family=parts[-1], given=" ".join(parts[:-1]))


class Identifiers(_Model):
    """Every identifier is stored normalised (see ``normalize_doi`` and its kin)."""

    doi: str | None = None
    pmid: str | None = None
    pmcid: str | None = None
    arxiv_id: str | None = None
    openalex_id: str | None = None
    s2_id: str | None = None
    nct_id: str | None = None

    @field_validator("doi", mode="before")
    @classmethod
    def _doi(cls, value: str | None) -> str | None:
        return normalize_doi(value)

    @field_validator("pmid", mode="before")
    @classmethod
    def _pmid(cls, value: str | int | None) -> str | None:
        return normalize_pmid(value)

    @field_validator("pmcid", mode="before")
    @classmethod
    def _pmcid(cls, value: str | None) -> str | None:
        return normalize_pmcid(value)

    @field_validator("arxiv_id", mode="before")
    @classmethod
    def _arxiv(cls, value: str | None) -> str | None:
        return normalize_arxiv_id(value)

    @field_validator("openalex_id", mode="before")
    @classmethod
    def _openalex(cls, value: str | None) -> str | None:
        return normalize_openalex_id(value)

    @field_validator("s2_id", mode="before")
    @classmethod
    def _s2(cls, value: str | None) -> str | None:
        return normalize_s2_id(value)

    @field_validator("nct_id", mode="before")
    @classmethod
    def _nct(cls, value: str | None) -> str | None:
        return normalize_nct_id(value)

    def present(self) -> dict[str, str]:
        return {name: value for name, value in self.model_dump().items() if value}


LinkKind = Literal["landing", "pdf", "full_text", "doi", "source", "other"]


class Link(_Model):
    url: str
    kind: LinkKind = "landing"


class Provenance(_Model):
    """One source (or imported file format) that returned the record, with its own id."""

    source: str
    source_id: str | None = None
    origin: bool = Field(
        default=False,
        description="Where the record was before a search found it (the file format a "
        "library record was imported from, or the source it was first found at), not a "
        "source that returned it in that search (``record_sources`` / ``record_origins``).",
    )


class Retraction(_Model):
    """A retraction (or expression of concern) notice given by the source."""

    notice: str
    doi: str | None = None
    date: dt.date | None = None


class Paper(_Model):
    kind: Literal["paper"] = "paper"
    record_id: str | None = Field(
        default=None,
        description="The record's own identifier in the file it came from (RIS ID, BibTeX "
        "key, EndNote rec-number, CSV ID, PMID), kept for round trips.",
    )
    ids: Identifiers = Field(default_factory=Identifiers)
    title: str
    abstract: str | None = None
    authors: list[Author] = Field(default_factory=list)
    venue: str | None = None
    volume: str | None = None
    issue: str | None = None
    pages: str | None = None
    publisher: str | None = None
    issn: str | None = None
    language: str | None = None
    published: dt.date | None = None
    year: int | None = Field(default=None, ge=1000, le=2999)
    publication_types: list[str] = Field(default_factory=list)
    mesh_terms: list[str] = Field(default_factory=list)
    keywords: list[str] = Field(default_factory=list)
    links: list[Link] = Field(default_factory=list)
    citation_count: int | None = Field(default=None, ge=0)
    retraction: Retraction | None = None
    provenance: list[Provenance] = Field(default_factory=list)

    @field_validator("title", mode="after")
    @classmethod
    def _title(cls, value: str) -> str:
        value = " ".join(value.split())
        if not value:
            raise ValueError("a record needs a title")
        return value

    def model_post_init(self, _context: object) -> None:
        if self.year is None and self.published is not None:
            self.year = self.published.year

    @property
    def first_author(self) -> str | None:
        if not self.authors:
            return None
        return self.authors[0].family or self.authors[0].name


class Intervention(_Model):
    name: str
    type: str | None = None


class Outcome(_Model):
    measure: str
    time_frame: str | None = None
    description: str | None = None


class Trial(_Model):
    """A registered clinical trial (ClinicalTrials.gov)."""

    kind: Literal["trial"] = "trial"
    record_id: str | None = None
    ids: Identifiers = Field(default_factory=Identifiers)
    title: str
    official_title: str | None = None
    summary: str | None = None
    status: str | None = None
    phases: list[str] = Field(default_factory=list)
    study_type: str | None = None
    conditions: list[str] = Field(default_factory=list)
    interventions: list[Intervention] = Field(default_factory=list)
    sponsor: str | None = None
    collaborators: list[str] = Field(default_factory=list)
    enrollment: int | None = None
    start_date: dt.date | None = None
    primary_completion_date: dt.date | None = None
    completion_date: dt.date | None = None
    first_posted: dt.date | None = None
    last_updated: dt.date | None = None
    primary_outcomes: list[Outcome] = Field(default_factory=list)
    keywords: list[str] = Field(default_factory=list)
    mesh_terms: list[str] = Field(default_factory=list)
    has_results: bool = False
    links: list[Link] = Field(default_factory=list)
    provenance: list[Provenance] = Field(default_factory=list)

    @property
    def year(self) -> int | None:
        return self.start_date.year if self.start_date else None


Record = Annotated[Paper | Trial, Field(discriminator="kind")]
