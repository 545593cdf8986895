"""chat and ai columns

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-22 12:00:08.191556
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0004"
down_revision: str | None = "0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:

    op.create_table(
        "ai_columns",
        sa.Column("table_key", sa.String(length=120), nullable=False),
        sa.Column("name", sa.String(length=120), nullable=False),
        sa.Column("criteria", sa.Text(), nullable=False),
        sa.Column("output_type", sa.String(length=16), nullable=False),
        sa.Column("options", sa.JSON(), nullable=False),
        sa.Column("owner_id", sa.Uuid(), nullable=False),
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["owner_id"],
            ["users.id"],
            name=op.f("fk_ai_columns_owner_id_users"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_ai_columns")),
        sa.UniqueConstraint("owner_id", "table_key", "name", name=op.f("uq_ai_columns_owner_id")),
    )
    with op.batch_alter_table("ai_columns", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_ai_columns_owner_id"), ["owner_id"], unique=False)

    op.create_table(
        "chat_conversations",
        sa.Column("title", sa.String(length=200), nullable=False),
        sa.Column("page", sa.String(length=80), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("owner_id", sa.Uuid(), nullable=False),
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["owner_id"],
            ["users.id"],
            name=op.f("fk_chat_conversations_owner_id_users"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_chat_conversations")),
    )
    with op.batch_alter_table("chat_conversations", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_chat_conversations_owner_id"), ["owner_id"], unique=False
        )
        batch_op.create_index(
            "ix_chat_conversations_owner_updated", ["owner_id", "updated_at"], unique=False
        )

    op.create_table(
        "ai_column_values",
        sa.Column("column_id", sa.Uuid(), nullable=False),
        sa.Column("item_key", sa.String(length=300), nullable=False),
        sa.Column("content_hash", sa.String(length=64), nullable=False),
        sa.Column("value", sa.JSON(), nullable=False),
        sa.Column("reason", sa.Text(), nullable=False),
        sa.Column("model", sa.String(length=200), nullable=False),
        sa.Column("owner_id", sa.Uuid(), nullable=False),
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["column_id"],
            ["ai_columns.id"],
            name=op.f("fk_ai_column_values_column_id_ai_columns"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["owner_id"],
            ["users.id"],
            name=op.f("fk_ai_column_values_owner_id_users"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_ai_column_values")),
        sa.UniqueConstraint("column_id", "item_key", name=op.f("uq_ai_column_values_column_id")),
    )
    with op.batch_alter_table("ai_column_values", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_ai_column_values_owner_id"), ["owner_id"], unique=False
        )

    op.create_table(
        "chat_messages",
        sa.Column("conversation_id", sa.Uuid(), nullable=False),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column("role", sa.String(length=16), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("content", sa.Text(), nullable=False),
        sa.Column("turn_id", sa.String(length=64), nullable=True),
        sa.Column("context", sa.JSON(), nullable=True),
        sa.Column("response", sa.JSON(), nullable=True),
        sa.Column("model_messages", sa.JSON(), nullable=True),
        sa.Column("error", sa.JSON(), nullable=True),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("owner_id", sa.Uuid(), nullable=False),
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["conversation_id"],
            ["chat_conversations.id"],
            name=op.f("fk_chat_messages_conversation_id_chat_conversations"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["owner_id"],
            ["users.id"],
            name=op.f("fk_chat_messages_owner_id_users"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_chat_messages")),
    )
    with op.batch_alter_table("chat_messages", schema=None) as batch_op:
        batch_op.create_index(
            "ix_chat_messages_conversation_position", ["conversation_id", "position"], unique=False
        )
        batch_op.create_index(batch_op.f("ix_chat_messages_owner_id"), ["owner_id"], unique=False)
        batch_op.create_index(batch_op.f("ix_chat_messages_turn_id"), ["turn_id"], unique=False)


def downgrade() -> None:

    with op.batch_alter_table("chat_messages", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_chat_messages_turn_id"))
        batch_op.drop_index(batch_op.f("ix_chat_messages_owner_id"))
        batch_op.drop_index("ix_chat_messages_conversation_position")

    op.drop_table("chat_messages")
    with op.batch_alter_table("ai_column_values", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_ai_column_values_owner_id"))

    op.drop_table("ai_column_values")
    with op.batch_alter_table("chat_conversations", schema=None) as batch_op:
        batch_op.drop_index("ix_chat_conversations_owner_updated")
        batch_op.drop_index(batch_op.f("ix_chat_conversations_owner_id"))

    op.drop_table("chat_conversations")
    with op.batch_alter_table("ai_columns", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_ai_columns_owner_id"))

    op.drop_table("ai_columns")
