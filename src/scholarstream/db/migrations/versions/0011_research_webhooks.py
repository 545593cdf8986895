"""multi-LLM research: each webhook's delivery cursor through each research's outbox

Revision ID: 0011
Revises: 0010
Create Date: 2026-12-08 09:00:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0011"
down_revision: str | None = "0010"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "research_webhook_cursors",
        sa.Column("research_id", sa.Uuid(), nullable=False),
        sa.Column("webhook", sa.String(length=64), nullable=False),
        sa.Column("delivered_seq", sa.Integer(), nullable=False),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("next_attempt_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("last_error", sa.Text(), nullable=True),
        sa.Column("given_up", sa.Integer(), nullable=False),
        sa.Column("lease_token", sa.Uuid(), nullable=True),
        sa.Column("lease_until", sa.DateTime(timezone=True), nullable=True),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("owner_id", sa.Uuid(), nullable=False),
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.ForeignKeyConstraint(
            ["owner_id"],
            ["users.id"],
            name=op.f("fk_research_webhook_cursors_owner_id_users"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["research_id"],
            ["research.id"],
            name=op.f("fk_research_webhook_cursors_research_id_research"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_research_webhook_cursors")),
        sa.UniqueConstraint(
            "research_id", "webhook", name=op.f("uq_research_webhook_cursors_research_id")
        ),
    )
    with op.batch_alter_table("research_webhook_cursors", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_research_webhook_cursors_owner_id"), ["owner_id"], unique=False
        )
        batch_op.create_index(
            "ix_research_webhook_cursors_next_attempt_at", ["next_attempt_at"], unique=False
        )


def downgrade() -> None:
    with op.batch_alter_table("research_webhook_cursors", schema=None) as batch_op:
        batch_op.drop_index("ix_research_webhook_cursors_next_attempt_at")
        batch_op.drop_index(batch_op.f("ix_research_webhook_cursors_owner_id"))
    op.drop_table("research_webhook_cursors")
