"""paper-search runs

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-22 10:05:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0003"
down_revision: str | None = "0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "search_runs",
        sa.Column("question", sa.Text(), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("stage", sa.String(length=32), nullable=True),
        sa.Column("iteration", sa.Integer(), nullable=False),
        sa.Column("workflow_id", sa.String(length=64), nullable=False),
        sa.Column("options", sa.JSON(), nullable=False),
        sa.Column("pending", sa.JSON(), nullable=True),
        sa.Column("collection", sa.JSON(), nullable=True),
        sa.Column("state", sa.JSON(), nullable=True),
        sa.Column("error", sa.JSON(), nullable=True),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("owner_id", sa.Uuid(), nullable=False),
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["owner_id"],
            ["users.id"],
            name=op.f("fk_search_runs_owner_id_users"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_search_runs")),
    )
    with op.batch_alter_table("search_runs", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_search_runs_owner_id"), ["owner_id"], unique=False)
        batch_op.create_index(
            "ix_search_runs_owner_created", ["owner_id", "created_at"], unique=False
        )


def downgrade() -> None:
    with op.batch_alter_table("search_runs", schema=None) as batch_op:
        batch_op.drop_index("ix_search_runs_owner_created")
        batch_op.drop_index(batch_op.f("ix_search_runs_owner_id"))

    op.drop_table("search_runs")
