"""library collections, tags and notes: named sets of records (a record in many), tags on
records and one note per record, each the owner's

Revision ID: 0018
Revises: 0017
Create Date: 2026-11-29 14:00:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0018"
down_revision: str | None = "0017"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def _owner(table: str) -> sa.ForeignKeyConstraint:
    return sa.ForeignKeyConstraint(
        ["owner_id"], ["users.id"], name=op.f(f"fk_{table}_owner_id_users"), ondelete="CASCADE"
    )


def _record(table: str) -> sa.ForeignKeyConstraint:
    return sa.ForeignKeyConstraint(
        ["record_id"],
        ["library_records.id"],
        name=op.f(f"fk_{table}_record_id_library_records"),
        ondelete="CASCADE",
    )


def upgrade() -> None:
    op.create_table(
        "library_collections",
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("name_key", sa.String(length=200), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("owner_id", sa.Uuid(), nullable=False),
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        _owner("library_collections"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_library_collections")),
        sa.UniqueConstraint("owner_id", "name_key", name=op.f("uq_library_collections_owner_id")),
    )
    op.create_index(
        op.f("ix_library_collections_owner_id"), "library_collections", ["owner_id"], unique=False
    )
    op.create_table(
        "library_collection_records",
        sa.Column("collection_id", sa.Uuid(), nullable=False),
        sa.Column("record_id", sa.Uuid(), nullable=False),
        sa.Column("owner_id", sa.Uuid(), nullable=False),
        sa.Column("added_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(
            ["collection_id"],
            ["library_collections.id"],
            name=op.f("fk_library_collection_records_collection_id_library_collections"),
            ondelete="CASCADE",
        ),
        _owner("library_collection_records"),
        _record("library_collection_records"),
        sa.PrimaryKeyConstraint(
            "collection_id", "record_id", name=op.f("pk_library_collection_records")
        ),
    )
    op.create_index(
        "ix_library_collection_records_owner_record",
        "library_collection_records",
        ["owner_id", "record_id"],
        unique=False,
    )
    op.create_table(
        "library_notes",
        sa.Column("record_id", sa.Uuid(), nullable=False),
        sa.Column("owner_id", sa.Uuid(), nullable=False),
        sa.Column("text", sa.Text(), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        _owner("library_notes"),
        _record("library_notes"),
        sa.PrimaryKeyConstraint("record_id", name=op.f("pk_library_notes")),
    )
    op.create_index(op.f("ix_library_notes_owner_id"), "library_notes", ["owner_id"], unique=False)
    op.create_table(
        "library_tags",
        sa.Column("record_id", sa.Uuid(), nullable=False),
        sa.Column("key", sa.String(length=100), nullable=False),
        sa.Column("name", sa.String(length=100), nullable=False),
        sa.Column("owner_id", sa.Uuid(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        _owner("library_tags"),
        _record("library_tags"),
        sa.PrimaryKeyConstraint("record_id", "key", name=op.f("pk_library_tags")),
    )
    op.create_index("ix_library_tags_owner_key", "library_tags", ["owner_id", "key"], unique=False)


def downgrade() -> None:
    op.drop_index("ix_library_tags_owner_key", table_name="library_tags")
    op.drop_table("library_tags")
    op.drop_index(op.f("ix_library_notes_owner_id"), table_name="library_notes")
    op.drop_table("library_notes")
    op.drop_index(
        "ix_library_collection_records_owner_record", table_name="library_collection_records"
    )
    op.drop_table("library_collection_records")
    op.drop_index(op.f("ix_library_collections_owner_id"), table_name="library_collections")
    op.drop_table("library_collections")
