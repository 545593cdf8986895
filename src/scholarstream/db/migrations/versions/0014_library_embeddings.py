"""library embeddings: the dense vectors of each record's passages per embedding model,
for hybrid search

Revision ID: 0014
Revises: 0013
Create Date: 2026-11-28 04:20:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0014"
down_revision: str | None = "0013"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "library_embeddings",
        sa.Column("record_id", sa.Uuid(), nullable=False),
        sa.Column("model", sa.String(length=100), nullable=False),
        sa.Column("passage", sa.Integer(), nullable=False),
        sa.Column("owner_id", sa.Uuid(), nullable=False),
        sa.Column("vector", sa.LargeBinary(), nullable=False),
        sa.ForeignKeyConstraint(
            ["owner_id"],
            ["users.id"],
            name=op.f("fk_library_embeddings_owner_id_users"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["record_id"],
            ["library_records.id"],
            name=op.f("fk_library_embeddings_record_id_library_records"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint(
            "record_id", "model", "passage", name=op.f("pk_library_embeddings")
        ),
    )
    op.create_index(
        "ix_library_embeddings_owner_model",
        "library_embeddings",
        ["owner_id", "model"],
        unique=False,
    )


def downgrade() -> None:
    op.drop_index("ix_library_embeddings_owner_model", table_name="library_embeddings")
    op.drop_table("library_embeddings")
