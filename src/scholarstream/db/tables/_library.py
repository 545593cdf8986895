"""The local library: the records a user imported (or saved), one row each."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from sqlalchemy import (
    JSON,
    ForeignKey,
    Index,
    LargeBinary,
    String,
    Text,
    UniqueConstraint,
    false,
)
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
    # The files of the records merged into this one (``source_file`` is its own).
    merged_files: Mapped[list[str] | None] = mapped_column(JSON)
    # Its keys are in library_match_keys (False for rows from before duplicate matching).
    keyed: Mapped[bool] = mapped_column(default=False, server_default=false())


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


class LibraryMatchKey(Base):
    """One key a record is found by when another record may be its copy: an identifier
    (``id:doi:10.1/x``) or a blocking key of the deduplicator's kinds (title start and end,
    title words, first author and year, volume and first page). An import looks its new
    records' keys up here instead of comparing them with the whole library."""

    __tablename__ = "library_match_keys"
    __table_args__ = (Index("ix_library_match_keys_owner_key", "owner_id", "key"),)

    record_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("library_records.id", ondelete="CASCADE"), primary_key=True
    )
    key: Mapped[str] = mapped_column(String(200), primary_key=True)
    owner_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))


class LibraryMerge(Owned, CreatedAtMixin, Base):
    """One record merged into another (``kept_id``), with everything needed to undo it: the
    absorbed record's own fields, id, fingerprint and file, and the kept record as it was
    before its first merge (``kept_original``: the same in every merge into one record). A
    split sets ``split_at``: the row stays, so the pair is never merged again."""

    __tablename__ = "library_merges"
    __table_args__ = (
        Index("ix_library_merges_owner_kept", "owner_id", "kept_id"),
        Index("ix_library_merges_owner_fingerprint", "owner_id", "absorbed_fingerprint"),
    )

    kept_id: Mapped[uuid.UUID]
    absorbed_id: Mapped[uuid.UUID]
    absorbed_fingerprint: Mapped[str] = mapped_column(String(64))
    absorbed_data: Mapped[dict[str, Any]] = mapped_column(JSON)
    absorbed_source_file: Mapped[str | None] = mapped_column(String(300))
    absorbed_added_at: Mapped[datetime]
    kept_original: Mapped[dict[str, Any]] = mapped_column(JSON)
    kept_files_original: Mapped[list[str]] = mapped_column(JSON, default=list)
    origin: Mapped[str] = mapped_column(String(16))
    """``import`` (matched a record already in the library), ``file`` (a copy inside the
    imported file) or ``scan`` (found by "find duplicates")."""
    evidence: Mapped[str] = mapped_column(Text)
    split_at: Mapped[datetime | None]


class LibraryCollection(Owned, CreatedAtMixin, Base):
    """A named set of the owner's records (a record may be in many). Deleting or renaming
    it never touches the records."""

    __tablename__ = "library_collections"
    __table_args__ = (UniqueConstraint("owner_id", "name_key"),)

    name: Mapped[str] = mapped_column(String(200))
    # The name case-folded, spaces collapsed: two collections never differ only by case.
    name_key: Mapped[str] = mapped_column(String(200))
    updated_at: Mapped[datetime] = mapped_column(default=utcnow, onupdate=utcnow)


class LibraryCollectionRecord(Base):
    """A record in a collection."""

    __tablename__ = "library_collection_records"
    __table_args__ = (Index("ix_library_collection_records_owner_record", "owner_id", "record_id"),)

    collection_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("library_collections.id", ondelete="CASCADE"), primary_key=True
    )
    record_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("library_records.id", ondelete="CASCADE"), primary_key=True
    )
    owner_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    added_at: Mapped[datetime] = mapped_column(default=utcnow)
    # The order records were put in the collection (a selection keeps its order).
    position: Mapped[int] = mapped_column(default=0)


class LibraryTag(Base):
    """A tag on a record: ``name`` as the person typed it first, ``key`` case-folded (one
    tag whatever its case)."""

    __tablename__ = "library_tags"
    __table_args__ = (Index("ix_library_tags_owner_key", "owner_id", "key"),)

    record_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("library_records.id", ondelete="CASCADE"), primary_key=True
    )
    key: Mapped[str] = mapped_column(String(100), primary_key=True)
    name: Mapped[str] = mapped_column(String(100))
    owner_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class LibraryNote(Base):
    """The owner's note on a record (plain text)."""

    __tablename__ = "library_notes"

    record_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("library_records.id", ondelete="CASCADE"), primary_key=True
    )
    owner_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("users.id", ondelete="CASCADE"), index=True
    )
    text: Mapped[str] = mapped_column(Text)
    updated_at: Mapped[datetime] = mapped_column(default=utcnow, onupdate=utcnow)
