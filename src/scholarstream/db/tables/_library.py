"""The local library: the records a user imported (or saved), one row each."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from sqlalchemy import JSON, ForeignKey, Index, LargeBinary, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from scholarstream.db._base import Base, CreatedAtMixin, Owned, utcnow


class LibraryRecord(Owned, CreatedAtMixin, Base):
    """The full record lives in ``data`` (a ``Paper``/``Trial`` dump); the columns beside it
    are what filtering, de-duplication and listing need without decoding JSON."""

    __tablename__ = "library_records"
    __table_args__ = (
        UniqueConstraint("owner_id", "fingerprint"),
        Index("ix_library_records_owner_year", "owner_id", "year"),
        Index("ix_library_records_owner_doi", "owner_id", "doi"),
        # Makes the revision check (count, newest change) an index-only lookup.
        Index("ix_library_records_owner_updated", "owner_id", "updated_at"),
    )

    kind: Mapped[str] = mapped_column(String(16))
    # Same file record -> same fingerprint, so re-importing a file adds nothing.
    fingerprint: Mapped[str] = mapped_column(String(64))
    record_id: Mapped[str | None] = mapped_column(String(200))
    title: Mapped[str] = mapped_column(Text)
    year: Mapped[int | None]
    doi: Mapped[str | None] = mapped_column(String(300))
    pmid: Mapped[str | None] = mapped_column(String(20))
    # "|Journal Article|Review|": a LIKE-able list for filtering on every backend.
    publication_types: Mapped[str] = mapped_column(Text, default="")
    source_file: Mapped[str | None] = mapped_column(String(300))
    data: Mapped[dict[str, Any]] = mapped_column(JSON)
    updated_at: Mapped[datetime] = mapped_column(default=utcnow, onupdate=utcnow)


class LibraryEmbedding(Base):
    """The dense vector of one passage of a record from one embedding model (float16
    bytes, unit length). A record has one passage or more (``passage`` 0, 1, ...).

    Keyed by record, model and passage, so changing the model keeps the old vectors until
    the new ones are built.
    """

    __tablename__ = "library_embeddings"
    __table_args__ = (Index("ix_library_embeddings_owner_model", "owner_id", "model"),)

    record_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("library_records.id", ondelete="CASCADE"), primary_key=True
    )
    model: Mapped[str] = mapped_column(String(100), primary_key=True)
    passage: Mapped[int] = mapped_column(primary_key=True)
    owner_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    vector: Mapped[bytes] = mapped_column(LargeBinary)
