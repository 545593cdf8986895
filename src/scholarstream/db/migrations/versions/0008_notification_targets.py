"""notification targets: apprise URLs (encrypted) per user or per research stream

Revision ID: 0008
Revises: 0007
Create Date: 2026-12-07 09:00:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0008"
down_revision: str | None = "0007"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:

    op.create_table(
        "notification_targets",
        sa.Column("stream_id", sa.Uuid(), nullable=True),
        sa.Column("label", sa.String(length=120), nullable=False),
        sa.Column("url_encrypted", sa.Text(), nullable=False),
        sa.Column("preview", sa.String(length=300), nullable=False),
        sa.Column("kinds", sa.JSON(), nullable=False),
        sa.Column("owner_id", sa.Uuid(), nullable=False),
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["owner_id"],
            ["users.id"],
            name=op.f("fk_notification_targets_owner_id_users"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["stream_id"],
            ["streams.id"],
            name=op.f("fk_notification_targets_stream_id_streams"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_notification_targets")),
    )
    with op.batch_alter_table("notification_targets", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_notification_targets_owner_id"), ["owner_id"], unique=False
        )
        batch_op.create_index(
            batch_op.f("ix_notification_targets_stream_id"), ["stream_id"], unique=False
        )


def downgrade() -> None:

    with op.batch_alter_table("notification_targets", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_notification_targets_stream_id"))
        batch_op.drop_index(batch_op.f("ix_notification_targets_owner_id"))

    op.drop_table("notification_targets")
