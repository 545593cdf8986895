"""Research streams (seed 000): the streams users created, and the AI-guided creation
sessions that lead to one."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from sqlalchemy import JSON, ForeignKey, Index, String, Text, UniqueConstraint, text
from sqlalchemy.orm import Mapped, mapped_column

from scholarstream.db._base import Base, CreatedAtMixin, Owned, utcnow


class StreamRow(Owned, CreatedAtMixin, Base):
    """One research stream: every field of its ``StreamConfig``, and what monitoring needs."""

    __tablename__ = "streams"
    __table_args__ = (Index("ix_streams_owner_created", "owner_id", "created_at"),)

    stream_name: Mapped[str] = mapped_column(String(120))
    purpose: Mapped[str] = mapped_column(Text)
    business_goals: Mapped[list[str]] = mapped_column(JSON)
    expected_outcomes: Mapped[str] = mapped_column(Text)
    stream_type: Mapped[str] = mapped_column(String(16))
    focus_areas: Mapped[list[str]] = mapped_column(JSON)
    keywords: Mapped[list[str]] = mapped_column(JSON)
    competitors: Mapped[list[str]] = mapped_column(JSON)
    report_frequency: Mapped[str] = mapped_column(String(16))
    chat_instructions: Mapped[str] = mapped_column(Text)
    # A RetrievalConfig dump: one query per source.
    retrieval: Mapped[dict[str, Any]] = mapped_column(JSON)
    enabled: Mapped[bool] = mapped_column(default=True)
    # When monitoring last ran the stream (None: never).
    last_run_at: Mapped[datetime | None] = mapped_column(default=None)
    updated_at: Mapped[datetime] = mapped_column(default=utcnow, onupdate=utcnow)


class StreamCreationRow(Owned, CreatedAtMixin, Base):
    """A creation in progress (or finished): the ``CreationSession`` as JSON, saved after
    each successful turn. ``revision`` counts the saved turns, so a turn that started from
    an older state cannot overwrite a newer one."""

    __tablename__ = "stream_creation_sessions"

    # open | completed | abandoned
    status: Mapped[str] = mapped_column(String(16))
    state: Mapped[dict[str, Any]] = mapped_column(JSON)
    revision: Mapped[int] = mapped_column(default=0)
    # The stream the completed session created (None again if that stream is deleted).
    stream_id: Mapped[uuid.UUID | None] = mapped_column(
        ForeignKey("streams.id", ondelete="SET NULL"), default=None
    )
    updated_at: Mapped[datetime] = mapped_column(default=utcnow, onupdate=utcnow)


class StreamReportRow(Owned, Base):
    """One monitoring run of a stream and the report it wrote. ``status`` is ``running``
    while the run searches (at most one per stream: a partial unique index), then
    ``complete``, ``partial`` (a source failed) or ``failed`` (nothing could be searched)."""

    __tablename__ = "stream_reports"
    __table_args__ = (
        Index("ix_stream_reports_stream_started", "stream_id", "started_at"),
        Index(
            "uq_stream_reports_one_running",
            "stream_id",
            unique=True,
            sqlite_where=text("status = 'running'"),
            postgresql_where=text("status = 'running'"),
        ),
    )

    stream_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("streams.id", ondelete="CASCADE"))
    # running | complete | partial | failed
    status: Mapped[str] = mapped_column(String(16))
    started_at: Mapped[datetime] = mapped_column(default=utcnow)
    finished_at: Mapped[datetime | None] = mapped_column(default=None)
    # The start of the window searched (the previous run, or the first run's default window).
    since: Mapped[datetime]
    # A Report dump (None while running, or when the run broke before writing one).
    report: Mapped[dict[str, Any] | None] = mapped_column(JSON, default=None)
    # One SourceOutcome dump per source searched.
    sources: Mapped[list[dict[str, Any]]] = mapped_column(JSON, default=list)
    error: Mapped[str | None] = mapped_column(Text, default=None)
    # One notify.Delivery dump per notification target the finished run was announced to.
    notifications: Mapped[list[dict[str, Any]]] = mapped_column(JSON, default=list)


class StreamReportedItemRow(Owned, Base):
    """A record key a stream has reported, and the report that first did: later runs leave
    out every item with a key here."""

    __tablename__ = "stream_reported_items"
    __table_args__ = (UniqueConstraint("stream_id", "key"),)

    stream_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("streams.id", ondelete="CASCADE"))
    key: Mapped[str] = mapped_column(String(300))
    report_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("stream_reports.id", ondelete="CASCADE")
    )


class StreamItemFeedbackRow(Owned, Base):
    """The user's judgement of one reported item (relevant or not), with the item's record
    so later runs can learn from its text whatever happens to the report."""

    __tablename__ = "stream_item_feedback"
    __table_args__ = (UniqueConstraint("stream_id", "key"),)

    stream_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("streams.id", ondelete="CASCADE"))
    key: Mapped[str] = mapped_column(String(300))
    report_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("stream_reports.id", ondelete="CASCADE")
    )
    relevant: Mapped[bool]
    # A papers.Record dump.
    record: Mapped[dict[str, Any]] = mapped_column(JSON)
    judged_at: Mapped[datetime] = mapped_column(default=utcnow, onupdate=utcnow)
