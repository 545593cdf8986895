"""Multi-LLM research (seed 001): one row per research, and the outbox of its lifecycle
events."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from sqlalchemy import JSON, ForeignKey, Index, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from scholarstream.db.base import Base, CreatedAtMixin, Owned


class ResearchRow(Owned, Base):
    """A research: its ``Research`` record as JSON (``record``, the source of truth) and
    copies of the fields lists filter and sort on. ``revision`` counts the saved changes;
    a change is saved only over the revision it was computed from."""

    __tablename__ = "research"
    __table_args__ = (
        Index("ix_research_owner_created", "owner_id", "created_at"),
        # The engine's sweep looks for research runs still in flight.
        Index("ix_research_status", "status"),
    )

    status: Mapped[str] = mapped_column(String(32))
    title: Mapped[str] = mapped_column(Text)
    record: Mapped[dict[str, Any]] = mapped_column(JSON)
    revision: Mapped[int] = mapped_column(default=0)
    created_at: Mapped[datetime]
    updated_at: Mapped[datetime]


class ResearchEventRow(Owned, CreatedAtMixin, Base):
    """The outbox: each lifecycle event of a research, written in the transaction that
    changed the research. ``seq`` numbers one research's events from 1 in the order they
    happened; the SSE and webhook delivery reads from here."""

    __tablename__ = "research_events"
    __table_args__ = (UniqueConstraint("research_id", "seq"),)

    research_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("research.id", ondelete="CASCADE"))
    seq: Mapped[int]
    type: Mapped[str] = mapped_column(String(64))
    # A ResearchEvent dump (camelCase, as delivered).
    payload: Mapped[dict[str, Any]] = mapped_column(JSON)
