"""The screening project's typed models: what a project is made of (criteria, keywords,
where its records came from), the decisions reviewers take, and what the API returns."""

from __future__ import annotations

import datetime as dt
import uuid
from typing import Annotated, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field

from scholarstream.papers import Record

ScreenLabel = Literal["include", "exclude", "maybe"]
"""A title-and-abstract decision."""
ResolveLabel = Literal["include", "exclude"]
"""A resolver's settlement of a conflict."""
FullTextLabel = Literal["include", "exclude", "not_retrieved"]
"""A full-text decision on a record sought for retrieval."""
Stage = Literal["screen", "resolve", "fulltext"]
OriginKind = Literal["search_run", "stream_report", "library"]
Role = Literal["owner", "reviewer"]

MAX_CRITERIA = 30
MAX_KEYWORDS = 60
MAX_CRITERION_CHARS = 300
MAX_KEYWORD_CHARS = 80
MAX_NAME_CHARS = 200
MAX_QUESTION_CHARS = 2000
MAX_REASON_CHARS = 300

LABEL_WORDS: dict[str, str] = {
    "include": "Include",
    "exclude": "Exclude",
    "maybe": "Maybe",
    "not_retrieved": "Not retrieved",
}


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


def _clean_lines(values: list[str], what: str, most: int, chars: int) -> list[str]:
    """Blank entries dropped, spaces collapsed, each once (first wins, case-insensitive)."""
    seen: set[str] = set()
    cleaned: list[str] = []
    for value in values:
        text = " ".join(value.split())
        if not text or text.lower() in seen:
            continue
        if len(text) > chars:
            raise ValueError(
                f"each {what} must be at most {chars} characters: shorten '{text[:40]}…'"
            )
        seen.add(text.lower())
        cleaned.append(text)
    if len(cleaned) > most:
        raise ValueError(f"give at most {most} {what}s (you gave {len(cleaned)})")
    return cleaned


def _name(value: str) -> str:
    value = " ".join(value.split())
    if not value:
        raise ValueError("it is empty: the project needs a name")
    if len(value) > MAX_NAME_CHARS:
        raise ValueError(f"the name must be at most {MAX_NAME_CHARS} characters")
    return value


def _question(value: str) -> str:
    value = value.strip()
    if len(value) > MAX_QUESTION_CHARS:
        raise ValueError(f"the question must be at most {MAX_QUESTION_CHARS} characters")
    return value


def _keywords(value: list[str]) -> list[str]:
    return _clean_lines(value, "keyword", MAX_KEYWORDS, MAX_KEYWORD_CHARS)


def _inclusion(value: list[str]) -> list[str]:
    return _clean_lines(value, "inclusion criterion", MAX_CRITERIA, MAX_CRITERION_CHARS)


def _exclusion(value: list[str]) -> list[str]:
    return _clean_lines(value, "exclusion criterion", MAX_CRITERIA, MAX_CRITERION_CHARS)


Name = Annotated[str, AfterValidator(_name)]
Question = Annotated[str, AfterValidator(_question)]
Keywords = Annotated[list[str], AfterValidator(_keywords)]
Inclusion = Annotated[list[str], AfterValidator(_inclusion)]
Exclusion = Annotated[list[str], AfterValidator(_exclusion)]


class ProjectSettings(_Model):
    """What a reviewer writes once per project: its name, the review question, the
    keywords highlighted in abstracts, and the criteria (one per line)."""

    name: Name = Field(description="The project's name, e.g. the review's short title.")
    question: Question = Field(default="", description="The review question, in plain words.")
    keywords: Keywords = Field(
        default_factory=list,
        description="Words and phrases highlighted in titles and abstracts; end one with * "
        "to match every word starting with it (random* matches randomised).",
    )
    inclusion_criteria: Inclusion = Field(default_factory=list)
    exclusion_criteria: Exclusion = Field(
        default_factory=list,
        description="An exclusion takes one of these as its reason; a project without any "
        "excludes without a reason.",
    )


class ProjectUpdate(_Model):
    """The fields sent are changed; the others stay."""

    name: Name | None = None
    question: Question | None = None
    keywords: Keywords | None = None
    inclusion_criteria: Inclusion | None = None
    exclusion_criteria: Exclusion | None = None

    def applied_to(self, current: ProjectSettings) -> ProjectSettings:
        changes = self.model_dump(exclude_none=True)
        return ProjectSettings.model_validate(current.model_dump() | changes)


class Origin(_Model):
    """Where a project's records came from."""

    kind: OriginKind
    reference: str | None = Field(
        default=None, description="The search run, the stream report, or the library query."
    )
    label: str = Field(description="What the records are, in words.")


class SourceCount(_Model):
    source: str = Field(description="The database or file the records came from.")
    records: int = Field(ge=0)


class Identification(_Model):
    """PRISMA's identification: records per source before duplicates were removed."""

    sources: list[SourceCount] = Field(default_factory=list)
    duplicates_removed: int | None = Field(
        default=None, ge=0, description="None when the origin does not know it."
    )
    other_removed: int | None = Field(
        default=None, ge=0, description="Records removed before screening for another reason."
    )
    other_removed_reason: str | None = None


class Reviewer(_Model):
    id: uuid.UUID
    username: str
    display_name: str | None = None
    role: Role


class Project(ProjectSettings):
    id: uuid.UUID
    origin: Origin
    identification: Identification
    record_count: int
    reviewers: list[Reviewer] = Field(description="The owner first.")
    your_role: Role
    created_at: dt.datetime
    updated_at: dt.datetime

    @property
    def settings(self) -> ProjectSettings:
        return ProjectSettings.model_validate(
            self.model_dump(include=set(ProjectSettings.model_fields))
        )

    @property
    def blind(self) -> bool:
        """More than one reviewer: each sees only their own decisions."""
        return len(self.reviewers) > 1


class ProjectSummary(_Model):
    id: uuid.UUID
    name: str
    origin: Origin
    record_count: int
    screened: int = Field(default=0, description="Records you have screened on title and abstract.")
    your_role: Role
    created_at: dt.datetime


class ProjectList(_Model):
    projects: list[ProjectSummary]


class DecisionEvent(_Model):
    """One stored decision (append-only history; ``undone`` ones no longer count)."""

    id: uuid.UUID
    record_id: uuid.UUID
    reviewer_id: uuid.UUID
    stage: Stage
    decision: str
    reason: str | None = None
    score: float | None = None
    accepted_suggestion: str | None = None
    seq: int
    decided_at: dt.datetime
    undone: bool = False


class ScreeningRecord(_Model):
    """One record of a project, as stored."""

    id: uuid.UUID
    position: int
    key: str
    record: Record


class DecisionIn(_Model):
    """A title-and-abstract decision on one record."""

    record_id: uuid.UUID
    decision: ScreenLabel
    reason: Annotated[
        str | None,
        Field(
            description="To exclude: one of the project's exclusion criteria (required when "
            "it has any; none when it has none)."
        ),
    ] = None
    accepted_suggestion: bool = Field(
        default=False, description="True when the decision takes the suggestion shown."
    )


class ResolutionIn(_Model):
    decision: ResolveLabel
    reason: str | None = Field(
        default=None,
        description="To exclude: one of the project's exclusion criteria (required when it "
        "has any; none when it has none).",
    )


class FullTextIn(_Model):
    decision: FullTextLabel
    reason: str | None = Field(
        default=None,
        description="Required to exclude after reading the full text: one exclusion criterion "
        "or your own words.",
    )
