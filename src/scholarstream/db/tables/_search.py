"""Paper-search runs: one row per run, holding what the user sees of it."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, Index, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from scholarstream.db._base import Base, CreatedAtMixin, Owned, utcnow


class SearchRunRow(Owned, CreatedAtMixin, Base):
    """The durable workflow (id ``workflow_id``) owns the run's progress; this row is its
    published state: status, the checkpoint awaiting a decision, the latest results."""

    __tablename__ = "search_runs"
    __table_args__ = (Index("ix_search_runs_owner_created", "owner_id", "created_at"),)

    question: Mapped[str] = mapped_column(Text)
    status: Mapped[str] = mapped_column(String(16))
    stage: Mapped[str | None] = mapped_column(String(32))
    iteration: Mapped[int] = mapped_column(default=0)
    workflow_id: Mapped[str] = mapped_column(String(64))
    options: Mapped[dict[str, Any]] = mapped_column(JSON)
    pending: Mapped[dict[str, Any] | None] = mapped_column(JSON)
    collection: Mapped[dict[str, Any] | None] = mapped_column(JSON)
    state: Mapped[dict[str, Any] | None] = mapped_column(JSON)
    error: Mapped[dict[str, Any] | None] = mapped_column(JSON)
    updated_at: Mapped[datetime] = mapped_column(default=utcnow, onupdate=utcnow)
