"""multi-LLM research: the research records and the outbox of their lifecycle events

Revision ID: 0010
Revises: 0009
Create Date: 2026-12-01 09:00:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0010"
down_revision: str | None = "0009"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "research",
        sa.Column("status", sa.String(length=32), nullable=False),
        sa.Column("title", sa.Text(), nullable=False),
        sa.Column("record", sa.JSON(), nullable=False),
        sa.Column("revision", sa.Integer(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("owner_id", sa.Uuid(), nullable=False),
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.ForeignKeyConstraint(
            ["owner_id"],
            ["users.id"],
            name=op.f("fk_research_owner_id_users"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_research")),
    )
    with op.batch_alter_table("research", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_research_owner_id"), ["owner_id"], unique=False)
        batch_op.create_index("ix_research_owner_created", ["owner_id", "created_at"], unique=False)
        batch_op.create_index("ix_research_status", ["status"], unique=False)

    op.create_table(
        "research_events",
        sa.Column("research_id", sa.Uuid(), nullable=False),
        sa.Column("seq", sa.Integer(), nullable=False),
        sa.Column("type", sa.String(length=64), nullable=False),
        sa.Column("payload", sa.JSON(), nullable=False),
        sa.Column("owner_id", sa.Uuid(), nullable=False),
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["owner_id"],
            ["users.id"],
            name=op.f("fk_research_events_owner_id_users"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["research_id"],
            ["research.id"],
            name=op.f("fk_research_events_research_id_research"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_research_events")),
        sa.UniqueConstraint("research_id", "seq", name=op.f("uq_research_events_research_id")),
    )
    with op.batch_alter_table("research_events", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_research_events_owner_id"), ["owner_id"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("research_events", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_research_events_owner_id"))
    op.drop_table("research_events")

    with op.batch_alter_table("research", schema=None) as batch_op:
        batch_op.drop_index("ix_research_status")
        batch_op.drop_index("ix_research_owner_created")
        batch_op.drop_index(batch_op.f("ix_research_owner_id"))
    op.drop_table("research")
