"""What the screening view shows: one record (title and abstract, the review's keywords
marked), why it comes now, your decision on it if you had one, and your progress."""

from __future__ import annotations

import datetime as dt
import uuid
from collections.abc import Sequence
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from scholarstream.papers import Paper
from scholarstream.screening.core._decisions import OutcomeKind, ReviewerDecision
from scholarstream.screening.core._highlight import Span, keyword_spans, keywords_found
from scholarstream.screening.core._models import DecisionEvent, ScreeningRecord
from scholarstream.screening.core._progress import Progress
from scholarstream.screening.core._ranking import Basis, abstract_of

MAX_AUTHORS = 8


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class RecordView(_Model):
    id: uuid.UUID
    position: int = Field(description="Its place among the project's records, from 1.")
    title: str
    abstract: str | None
    authors: list[str]
    more_authors: int = Field(description="Authors not listed.")
    year: int | None
    venue: str | None
    doi: str | None
    pmid: str | None
    publication_types: list[str]
    title_marks: list[Span] = Field(description="Where the review's keywords are in the title.")
    abstract_marks: list[Span] = Field(description="Where they are in the abstract.")
    keywords_found: list[str]


def record_view(item: ScreeningRecord, keywords: Sequence[str]) -> RecordView:
    record = item.record
    abstract = abstract_of(record) or None
    names = [author.name for author in record.authors] if isinstance(record, Paper) else []
    return RecordView(
        id=item.id,
        position=item.position + 1,
        title=record.title,
        abstract=abstract,
        authors=names[:MAX_AUTHORS],
        more_authors=max(0, len(names) - MAX_AUTHORS),
        year=record.year,
        venue=record.venue if isinstance(record, Paper) else None,
        doi=record.ids.doi,
        pmid=record.ids.pmid,
        publication_types=list(record.publication_types) if isinstance(record, Paper) else [],
        title_marks=keyword_spans(record.title, keywords),
        abstract_marks=keyword_spans(abstract or "", keywords),
        keywords_found=keywords_found(f"{record.title}\n{abstract or ''}", keywords),
    )


class YourDecision(_Model):
    decision: str
    reason: str | None
    decided_at: dt.datetime
    accepted_suggestion: str | None = None

    @classmethod
    def of(cls, event: DecisionEvent) -> YourDecision:
        return cls(
            decision=event.decision,
            reason=event.reason,
            decided_at=event.decided_at,
            accepted_suggestion=event.accepted_suggestion,
        )


class ScreeningStep(_Model):
    """The screening view's state: the record to screen (None when you have screened
    every record), and your progress."""

    project_id: uuid.UUID
    record: RecordView | None
    score: float | None = Field(description="The score that chose the record (0-1).")
    basis: Basis | None = Field(description="What chose the record.")
    basis_note: str
    your_decision: YourDecision | None = Field(
        default=None, description="Your decision on this record, when you had one (after undo)."
    )
    message: str | None = Field(default=None, description="What just happened, in words.")
    progress: Progress


class ConflictView(_Model):
    record_id: uuid.UUID
    title: str
    year: int | None
    decisions: list[ReviewerDecision]
    reviewers: dict[str, str] = Field(description="Reviewer id -> username.")


class ConflictList(_Model):
    conflicts: list[ConflictView]
    resolved: int = Field(description="Conflicts settled so far.")


class FullTextItem(_Model):
    record_id: uuid.UUID
    title: str
    year: int | None
    doi: str | None
    pmid: str | None
    decision: str | None
    reason: str | None


class FullTextList(_Model):
    """Records included on title and abstract: reports sought for retrieval."""

    items: list[FullTextItem]


class RecordRow(_Model):
    record_id: uuid.UUID = Field(
        description="The record's id in this project: what GET …/records/{record_id}, a "
        "decision's record_id and the export's record_id column (RIS note 'Screening record "
        "id', BibTeX screening_record_id) hold."
    )
    source_record_id: str | None = Field(
        default=None,
        description="The record's own id where it came from (an imported file's RIS ID, "
        "BibTeX key, EndNote rec-number or CSV ID; a PubMed record's PMID; a trial's NCT "
        "number): the export's source_record_id column. None when it had none.",
    )
    position: int = Field(description="Its place among the project's records, from 1.")
    title: str
    year: int | None
    outcome: OutcomeKind | None = Field(
        default=None, description="The project's outcome (owner only; None for a reviewer)."
    )
    your_decision: str | None
    your_reason: str | None


RecordFilter = Literal["include", "exclude", "maybe", "unscreened"]
"""The records list's ``decision`` filter: your decision on the record, or none yet."""
RECORDS_PAGE = 50
"""Records one page of the list holds unless ``limit`` says otherwise."""
MAX_RECORDS_PAGE = 500
"""The most records one page holds (``limit``)."""


class RecordList(_Model):
    """One page of the project's records, in the project's order."""

    total: int = Field(description="Records listed for the filter (all of them without one).")
    offset: int = Field(description="How many of them come before this page.")
    limit: int = Field(description="The most records this page holds.")
    decision: RecordFilter | None = Field(
        default=None, description="The filter on your decision, when one was given."
    )
    records: list[RecordRow]
