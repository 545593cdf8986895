"""Multi-LLM research (seed 001): one row per research, and the outbox of its lifecycle
events."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from sqlalchemy import JSON, ForeignKey, Index, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from scholarstream.db._base import Base, CreatedAtMixin, Owned


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


class ResearchWebhookCursorRow(Owned, Base):
    """How far one webhook (``research.webhooks``, by name or URL) has got through one
    research's outbox: every event up to ``delivered_seq`` was delivered, filtered out, or
    given up. ``attempts`` counts the failed POSTs of the next event and
    ``next_attempt_at`` says when to try it again. A deliverer holds ``lease_token`` until
    ``lease_until`` while it works, so one research's events reach one webhook in order.
    The owner is the research's."""

    __tablename__ = "research_webhook_cursors"
    __table_args__ = (
        UniqueConstraint("research_id", "webhook"),
        # The engine's sweep looks for deliveries waiting for a retry.
        Index("ix_research_webhook_cursors_next_attempt_at", "next_attempt_at"),
    )

    research_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("research.id", ondelete="CASCADE"))
    webhook: Mapped[str] = mapped_column(String(64))
    delivered_seq: Mapped[int] = mapped_column(default=0)
    attempts: Mapped[int] = mapped_column(default=0)
    next_attempt_at: Mapped[datetime | None]
    last_error: Mapped[str | None] = mapped_column(Text)
    given_up: Mapped[int] = mapped_column(default=0)
    lease_token: Mapped[uuid.UUID | None]
    lease_until: Mapped[datetime | None]
    updated_at: Mapped[datetime]
