"""stream monitoring runs: reports and the record keys each stream has reported

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-30 09:00:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0007"
down_revision: str | None = "0006"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_RUNNING = "status = 'running'"


def upgrade() -> None:

    op.create_table(
        "stream_reports",
        sa.Column("stream_id", sa.Uuid(), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("started_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("finished_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("since", sa.DateTime(timezone=True), nullable=False),
        sa.Column("report", sa.JSON(), nullable=True),
        sa.Column("sources", sa.JSON(), nullable=False),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("owner_id", sa.Uuid(), nullable=False),
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.ForeignKeyConstraint(
            ["owner_id"],
            ["users.id"],
            name=op.f("fk_stream_reports_owner_id_users"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["stream_id"],
            ["streams.id"],
            name=op.f("fk_stream_reports_stream_id_streams"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_stream_reports")),
    )
    with op.batch_alter_table("stream_reports", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_stream_reports_owner_id"), ["owner_id"], unique=False)
        batch_op.create_index(
            "ix_stream_reports_stream_started", ["stream_id", "started_at"], unique=False
        )
        batch_op.create_index(
            "uq_stream_reports_one_running",
            ["stream_id"],
            unique=True,
            sqlite_where=sa.text(_RUNNING),
            postgresql_where=sa.text(_RUNNING),
        )

    op.create_table(
        "stream_reported_items",
        sa.Column("stream_id", sa.Uuid(), nullable=False),
        sa.Column("key", sa.String(length=300), nullable=False),
        sa.Column("report_id", sa.Uuid(), nullable=False),
        sa.Column("owner_id", sa.Uuid(), nullable=False),
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.ForeignKeyConstraint(
            ["owner_id"],
            ["users.id"],
            name=op.f("fk_stream_reported_items_owner_id_users"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["report_id"],
            ["stream_reports.id"],
            name=op.f("fk_stream_reported_items_report_id_stream_reports"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["stream_id"],
            ["streams.id"],
            name=op.f("fk_stream_reported_items_stream_id_streams"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_stream_reported_items")),
        sa.UniqueConstraint("stream_id", "key", name=op.f("uq_stream_reported_items_stream_id")),
    )
    with op.batch_alter_table("stream_reported_items", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_stream_reported_items_owner_id"), ["owner_id"], unique=False
        )


def downgrade() -> None:

    with op.batch_alter_table("stream_reported_items", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_stream_reported_items_owner_id"))

    op.drop_table("stream_reported_items")
    with op.batch_alter_table("stream_reports", schema=None) as batch_op:
        batch_op.drop_index("uq_stream_reports_one_running")
        batch_op.drop_index("ix_stream_reports_stream_started")
        batch_op.drop_index(batch_op.f("ix_stream_reports_owner_id"))

    op.drop_table("stream_reports")
