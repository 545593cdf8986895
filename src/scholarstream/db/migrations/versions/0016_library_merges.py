"""library merges: duplicates merged on import or on demand, each merge kept so it can be
split again, and the keys records are matched by

Revision ID: 0016
Revises: 0015
Create Date: 2026-11-29 12:00:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0016"
down_revision: str | None = "0015"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("library_records", schema=None) as batch_op:
        batch_op.add_column(sa.Column("merged_files", sa.JSON(), nullable=True))
        batch_op.add_column(
            sa.Column("keyed", sa.Boolean(), server_default=sa.false(), nullable=False)
        )
    op.create_table(
        "library_match_keys",
        sa.Column("record_id", sa.Uuid(), nullable=False),
        sa.Column("key", sa.String(length=200), nullable=False),
        sa.Column("owner_id", sa.Uuid(), nullable=False),
        sa.ForeignKeyConstraint(
            ["owner_id"],
            ["users.id"],
            name=op.f("fk_library_match_keys_owner_id_users"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["record_id"],
            ["library_records.id"],
            name=op.f("fk_library_match_keys_record_id_library_records"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("record_id", "key", name=op.f("pk_library_match_keys")),
    )
    op.create_index(
        "ix_library_match_keys_owner_key", "library_match_keys", ["owner_id", "key"], unique=False
    )
    op.create_table(
        "library_merges",
        sa.Column("kept_id", sa.Uuid(), nullable=False),
        sa.Column("absorbed_id", sa.Uuid(), nullable=False),
        sa.Column("absorbed_fingerprint", sa.String(length=64), nullable=False),
        sa.Column("absorbed_data", sa.JSON(), nullable=False),
        sa.Column("absorbed_source_file", sa.String(length=300), nullable=True),
        sa.Column("absorbed_added_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("kept_original", sa.JSON(), nullable=False),
        sa.Column("kept_files_original", sa.JSON(), nullable=False),
        sa.Column("origin", sa.String(length=16), nullable=False),
        sa.Column("evidence", sa.Text(), nullable=False),
        sa.Column("split_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("owner_id", sa.Uuid(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["owner_id"],
            ["users.id"],
            name=op.f("fk_library_merges_owner_id_users"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_library_merges")),
    )
    op.create_index(
        "ix_library_merges_owner_fingerprint",
        "library_merges",
        ["owner_id", "absorbed_fingerprint"],
        unique=False,
    )
    op.create_index(
        "ix_library_merges_owner_kept", "library_merges", ["owner_id", "kept_id"], unique=False
    )
    op.create_index(
        op.f("ix_library_merges_owner_id"), "library_merges", ["owner_id"], unique=False
    )


def downgrade() -> None:
    op.drop_index(op.f("ix_library_merges_owner_id"), table_name="library_merges")
    op.drop_index("ix_library_merges_owner_kept", table_name="library_merges")
    op.drop_index("ix_library_merges_owner_fingerprint", table_name="library_merges")
    op.drop_table("library_merges")
    op.drop_index("ix_library_match_keys_owner_key", table_name="library_match_keys")
    op.drop_table("library_match_keys")
    with op.batch_alter_table("library_records", schema=None) as batch_op:
        batch_op.drop_column("keyed")
        batch_op.drop_column("merged_files")
