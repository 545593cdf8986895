"""research streams and their creation sessions

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-23 09:00:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0006"
down_revision: str | None = "0005"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:

    op.create_table(
        "streams",
        sa.Column("stream_name", sa.String(length=120), nullable=False),
        sa.Column("purpose", sa.Text(), nullable=False),
        sa.Column("business_goals", sa.JSON(), nullable=False),
        sa.Column("expected_outcomes", sa.Text(), nullable=False),
        sa.Column("stream_type", sa.String(length=16), nullable=False),
        sa.Column("focus_areas", sa.JSON(), nullable=False),
        sa.Column("keywords", sa.JSON(), nullable=False),
        sa.Column("competitors", sa.JSON(), nullable=False),
        sa.Column("report_frequency", sa.String(length=16), nullable=False),
        sa.Column("chat_instructions", sa.Text(), nullable=False),
        sa.Column("retrieval", sa.JSON(), nullable=False),
        sa.Column("enabled", sa.Boolean(), nullable=False),
        sa.Column("last_run_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("owner_id", sa.Uuid(), nullable=False),
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["owner_id"],
            ["users.id"],
            name=op.f("fk_streams_owner_id_users"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_streams")),
    )
    with op.batch_alter_table("streams", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_streams_owner_id"), ["owner_id"], unique=False)
        batch_op.create_index("ix_streams_owner_created", ["owner_id", "created_at"], unique=False)

    op.create_table(
        "stream_creation_sessions",
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("state", sa.JSON(), nullable=False),
        sa.Column("revision", sa.Integer(), nullable=False),
        sa.Column("stream_id", sa.Uuid(), nullable=True),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("owner_id", sa.Uuid(), nullable=False),
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["owner_id"],
            ["users.id"],
            name=op.f("fk_stream_creation_sessions_owner_id_users"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["stream_id"],
            ["streams.id"],
            name=op.f("fk_stream_creation_sessions_stream_id_streams"),
            ondelete="SET NULL",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_stream_creation_sessions")),
    )
    with op.batch_alter_table("stream_creation_sessions", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_stream_creation_sessions_owner_id"), ["owner_id"], unique=False
        )


def downgrade() -> None:

    with op.batch_alter_table("stream_creation_sessions", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_stream_creation_sessions_owner_id"))

    op.drop_table("stream_creation_sessions")
    with op.batch_alter_table("streams", schema=None) as batch_op:
        batch_op.drop_index("ix_streams_owner_created")
        batch_op.drop_index(batch_op.f("ix_streams_owner_id"))

    op.drop_table("streams")
