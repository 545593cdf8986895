"""AI columns: a named criterion the model evaluates per item of a results table, and the
cache of its values per item."""

from __future__ import annotations

import uuid
from typing import Any

from sqlalchemy import JSON, ForeignKey, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from scholarstream.db._base import Base, CreatedAtMixin, Owned


class AIColumnRow(Owned, CreatedAtMixin, Base):
    __tablename__ = "ai_columns"
    __table_args__ = (UniqueConstraint("owner_id", "table_key", "name"),)

    # Which results table the column belongs to: "library", "search", "trials", "report".
    table_key: Mapped[str] = mapped_column(String(120))
    name: Mapped[str] = mapped_column(String(120))
    criteria: Mapped[str] = mapped_column(Text)
    # yes_no | text | number | category
    output_type: Mapped[str] = mapped_column(String(16))
    options: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)


class AIColumnValueRow(Owned, CreatedAtMixin, Base):
    """One item's value. ``content_hash`` covers the criteria and the item text it was
    computed from, so an edited column or item is evaluated again."""

    __tablename__ = "ai_column_values"
    __table_args__ = (UniqueConstraint("column_id", "item_key"),)

    column_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("ai_columns.id", ondelete="CASCADE"))
    item_key: Mapped[str] = mapped_column(String(300))
    content_hash: Mapped[str] = mapped_column(String(64))
    value: Mapped[Any] = mapped_column(JSON)
    reason: Mapped[str] = mapped_column(Text)
    model: Mapped[str] = mapped_column(String(200))
