"""models users bring: each user's model per role (and an admin's server defaults), and
users' own OpenAI-compatible endpoints with what their last check found

Revision ID: 0013
Revises: 0012
Create Date: 2026-12-12 09:00:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0013"
down_revision: str | None = "0012"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "model_choices",
        sa.Column("role", sa.String(length=64), nullable=False),
        sa.Column("model", sa.String(length=200), nullable=False),
        sa.Column("server_default", sa.Boolean(), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("checked_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("check_ok", sa.Boolean(), nullable=True),
        sa.Column("check_detail", sa.Text(), nullable=True),
        sa.Column("owner_id", sa.Uuid(), nullable=False),
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["owner_id"],
            ["users.id"],
            name=op.f("fk_model_choices_owner_id_users"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_model_choices")),
        sa.UniqueConstraint(
            "owner_id", "role", "server_default", name=op.f("uq_model_choices_owner_id")
        ),
    )
    with op.batch_alter_table("model_choices", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_model_choices_owner_id"), ["owner_id"], unique=False)
        batch_op.create_index(
            batch_op.f("ix_model_choices_server_default"), ["server_default"], unique=False
        )

    op.create_table(
        "model_endpoints",
        sa.Column("name", sa.String(length=40), nullable=False),
        sa.Column("base_url", sa.String(length=500), nullable=False),
        sa.Column("key_ciphertext", sa.Text(), nullable=True),
        sa.Column("structured_output", sa.String(length=16), nullable=True),
        sa.Column("supports_tools", sa.Boolean(), nullable=True),
        sa.Column("compact_prompt", sa.Boolean(), nullable=True),
        sa.Column("detected_structured_output", sa.String(length=16), nullable=True),
        sa.Column("detected_supports_tools", sa.Boolean(), nullable=True),
        sa.Column("checked_model", sa.String(length=200), nullable=True),
        sa.Column("checked_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("check_ok", sa.Boolean(), nullable=True),
        sa.Column("check_detail", sa.Text(), nullable=True),
        sa.Column("owner_id", sa.Uuid(), nullable=False),
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["owner_id"],
            ["users.id"],
            name=op.f("fk_model_endpoints_owner_id_users"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_model_endpoints")),
        sa.UniqueConstraint("owner_id", "name", name=op.f("uq_model_endpoints_owner_id")),
    )
    with op.batch_alter_table("model_endpoints", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_model_endpoints_owner_id"), ["owner_id"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("model_endpoints", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_model_endpoints_owner_id"))

    op.drop_table("model_endpoints")
    with op.batch_alter_table("model_choices", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_model_choices_server_default"))
        batch_op.drop_index(batch_op.f("ix_model_choices_owner_id"))

    op.drop_table("model_choices")
