"""Screening projects (systematic reviews): the records to screen, who screens them, every
decision (append-only, so undo and the history are exact), the model's suggestions, and
the numbers a PRISMA 2020 flow needs that the tool cannot count itself."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from sqlalchemy import JSON, Float, ForeignKey, Index, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from scholarstream.db._base import Base, CreatedAtMixin, Owned, utcnow


class ScreeningProjectRow(Owned, CreatedAtMixin, Base):
    """One screening project, owned by the user who created it (its first reviewer and its
    resolver). Criteria and keywords are written once and shared by every reviewer."""

    __tablename__ = "screening_projects"
    __table_args__ = (Index("ix_screening_projects_owner_created", "owner_id", "created_at"),)

    name: Mapped[str] = mapped_column(String(200))
    question: Mapped[str] = mapped_column(Text, default="")
    keywords: Mapped[list[str]] = mapped_column(JSON, default=list)
    inclusion_criteria: Mapped[list[str]] = mapped_column(JSON, default=list)
    exclusion_criteria: Mapped[list[str]] = mapped_column(JSON, default=list)
    # Where the records came from: an Origin dump (kind, reference, label).
    origin: Mapped[dict[str, Any]] = mapped_column(JSON)
    # Identification counts: records per source and duplicates removed before screening.
    identification: Mapped[dict[str, Any]] = mapped_column(JSON)
    # Numbers for the PRISMA flow the reviewer entered (a PrismaEntries dump).
    prisma_entries: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    updated_at: Mapped[datetime] = mapped_column(default=utcnow, onupdate=utcnow)


class ScreeningReviewerRow(Owned, CreatedAtMixin, Base):
    """A second (third, ...) reviewer of a project: ``owner_id`` is the reviewer, so the
    projects a user screens are found in their own scope."""

    __tablename__ = "screening_reviewers"
    __table_args__ = (UniqueConstraint("project_id", "owner_id"),)

    project_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("screening_projects.id", ondelete="CASCADE"), index=True
    )
    # The project owner who added the reviewer.
    added_by: Mapped[uuid.UUID] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))


class ScreeningRecordRow(Owned, Base):
    """One record to screen (owned by the project's owner), in the order it was added."""

    __tablename__ = "screening_records"
    __table_args__ = (
        UniqueConstraint("project_id", "position"),
        Index("ix_screening_records_project_key", "project_id", "key"),
    )

    project_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("screening_projects.id", ondelete="CASCADE")
    )
    position: Mapped[int]
    # The record's identity key (papers.record_key), for matching and exports.
    key: Mapped[str] = mapped_column(String(300))
    # A papers.Record dump.
    record: Mapped[dict[str, Any]] = mapped_column(JSON)


class ScreeningDecisionRow(Owned, Base):
    """One decision of one reviewer (``owner_id``) on one record at one stage (title and
    abstract, resolution of a conflict, full text). Rows are never updated but to mark
    them undone: the current decision is the reviewer's latest row that is not undone."""

    __tablename__ = "screening_decisions"
    __table_args__ = (
        UniqueConstraint("project_id", "owner_id", "seq"),
        Index("ix_screening_decisions_project_record", "project_id", "record_id"),
    )

    project_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("screening_projects.id", ondelete="CASCADE")
    )
    record_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("screening_records.id", ondelete="CASCADE")
    )
    # screen | resolve | fulltext
    stage: Mapped[str] = mapped_column(String(16))
    # include | exclude | maybe (screen); include | exclude (resolve);
    # include | exclude | not_retrieved (fulltext)
    decision: Mapped[str] = mapped_column(String(16))
    reason: Mapped[str | None] = mapped_column(Text, default=None)
    # The ranker's score of the record when it was decided (None: not ranked).
    score: Mapped[float | None] = mapped_column(Float, default=None)
    # The suggestion the reviewer accepted (include/exclude/unsure), None when decided alone.
    accepted_suggestion: Mapped[str | None] = mapped_column(String(16), default=None)
    # The reviewer's running number, for "undo the last decision" and a stable order.
    seq: Mapped[int]
    decided_at: Mapped[datetime] = mapped_column(default=utcnow)
    undone_at: Mapped[datetime | None] = mapped_column(default=None)


class ScreeningSuggestionRow(Owned, Base):
    """A model's suggestion for one record against the project's criteria (owned by the
    project's owner; shared by every reviewer, never a decision)."""

    __tablename__ = "screening_suggestions"
    __table_args__ = (UniqueConstraint("project_id", "record_id"),)

    project_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("screening_projects.id", ondelete="CASCADE")
    )
    record_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("screening_records.id", ondelete="CASCADE")
    )
    # A Suggestion dump (label, criterion, rationale, quote, source, note).
    suggestion: Mapped[dict[str, Any]] = mapped_column(JSON)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
