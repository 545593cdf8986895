"""stream monitoring: the user's relevance judgements of reported items, and each report's
notification outcomes

Revision ID: 0009
Revises: 0008
Create Date: 2026-11-22 10:00:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0009"
down_revision: str | None = "0008"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("stream_reports", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("notifications", sa.JSON(), nullable=False, server_default="[]")
        )

    op.create_table(
        "stream_item_feedback",
        sa.Column("stream_id", sa.Uuid(), nullable=False),
        sa.Column("key", sa.String(length=300), nullable=False),
        sa.Column("report_id", sa.Uuid(), nullable=False),
        sa.Column("relevant", sa.Boolean(), nullable=False),
        sa.Column("record", sa.JSON(), nullable=False),
        sa.Column("judged_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("owner_id", sa.Uuid(), nullable=False),
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.ForeignKeyConstraint(
            ["owner_id"],
            ["users.id"],
            name=op.f("fk_stream_item_feedback_owner_id_users"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["report_id"],
            ["stream_reports.id"],
            name=op.f("fk_stream_item_feedback_report_id_stream_reports"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["stream_id"],
            ["streams.id"],
            name=op.f("fk_stream_item_feedback_stream_id_streams"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_stream_item_feedback")),
        sa.UniqueConstraint("stream_id", "key", name=op.f("uq_stream_item_feedback_stream_id")),
    )
    with op.batch_alter_table("stream_item_feedback", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_stream_item_feedback_owner_id"), ["owner_id"], unique=False
        )


def downgrade() -> None:
    with op.batch_alter_table("stream_item_feedback", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_stream_item_feedback_owner_id"))
    op.drop_table("stream_item_feedback")
    with op.batch_alter_table("stream_reports", schema=None) as batch_op:
        batch_op.drop_column("notifications")
