"""local library records

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-22 08:36:18.629942
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0002"
down_revision: str | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "library_records",
        sa.Column("kind", sa.String(length=16), nullable=False),
        sa.Column("fingerprint", sa.String(length=64), nullable=False),
        sa.Column("record_id", sa.String(length=200), nullable=True),
        sa.Column("title", sa.Text(), nullable=False),
        sa.Column("year", sa.Integer(), nullable=True),
        sa.Column("doi", sa.String(length=300), nullable=True),
        sa.Column("pmid", sa.String(length=20), nullable=True),
        sa.Column("publication_types", sa.Text(), nullable=False),
        sa.Column("source_file", sa.String(length=300), nullable=True),
        sa.Column("data", sa.JSON(), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("owner_id", sa.Uuid(), nullable=False),
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["owner_id"],
            ["users.id"],
            name=op.f("fk_library_records_owner_id_users"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_library_records")),
        sa.UniqueConstraint("owner_id", "fingerprint", name=op.f("uq_library_records_owner_id")),
    )
    with op.batch_alter_table("library_records", schema=None) as batch_op:
        batch_op.create_index("ix_library_records_owner_doi", ["owner_id", "doi"], unique=False)
        batch_op.create_index(batch_op.f("ix_library_records_owner_id"), ["owner_id"], unique=False)
        batch_op.create_index("ix_library_records_owner_year", ["owner_id", "year"], unique=False)
        batch_op.create_index(
            "ix_library_records_owner_updated", ["owner_id", "updated_at"], unique=False
        )


def downgrade() -> None:
    with op.batch_alter_table("library_records", schema=None) as batch_op:
        batch_op.drop_index("ix_library_records_owner_updated")
        batch_op.drop_index("ix_library_records_owner_year")
        batch_op.drop_index(batch_op.f("ix_library_records_owner_id"))
        batch_op.drop_index("ix_library_records_owner_doi")

    op.drop_table("library_records")
