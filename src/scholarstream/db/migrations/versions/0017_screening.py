"""screening projects: records to screen, reviewers, decisions (append-only, for undo and
history) and the model's suggestions

Revision ID: 0017
Revises: 0016
Create Date: 2026-11-29 13:00:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0017"
down_revision: str | None = "0016"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "screening_projects",
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("question", sa.Text(), nullable=False),
        sa.Column("keywords", sa.JSON(), nullable=False),
        sa.Column("inclusion_criteria", sa.JSON(), nullable=False),
        sa.Column("exclusion_criteria", sa.JSON(), nullable=False),
        sa.Column("origin", sa.JSON(), nullable=False),
        sa.Column("identification", sa.JSON(), nullable=False),
        sa.Column("prisma_entries", sa.JSON(), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("owner_id", sa.Uuid(), nullable=False),
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["owner_id"],
            ["users.id"],
            name=op.f("fk_screening_projects_owner_id_users"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_screening_projects")),
    )
    op.create_index(
        "ix_screening_projects_owner_created",
        "screening_projects",
        ["owner_id", "created_at"],
        unique=False,
    )
    op.create_index(
        op.f("ix_screening_projects_owner_id"), "screening_projects", ["owner_id"], unique=False
    )
    op.create_table(
        "screening_records",
        sa.Column("project_id", sa.Uuid(), nullable=False),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column("key", sa.String(length=300), nullable=False),
        sa.Column("record", sa.JSON(), nullable=False),
        sa.Column("owner_id", sa.Uuid(), nullable=False),
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.ForeignKeyConstraint(
            ["owner_id"],
            ["users.id"],
            name=op.f("fk_screening_records_owner_id_users"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["project_id"],
            ["screening_projects.id"],
            name=op.f("fk_screening_records_project_id_screening_projects"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_screening_records")),
        sa.UniqueConstraint("project_id", "position", name=op.f("uq_screening_records_project_id")),
    )
    op.create_index(
        op.f("ix_screening_records_owner_id"), "screening_records", ["owner_id"], unique=False
    )
    op.create_index(
        "ix_screening_records_project_key", "screening_records", ["project_id", "key"], unique=False
    )
    op.create_table(
        "screening_reviewers",
        sa.Column("project_id", sa.Uuid(), nullable=False),
        sa.Column("added_by", sa.Uuid(), nullable=False),
        sa.Column("owner_id", sa.Uuid(), nullable=False),
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["added_by"],
            ["users.id"],
            name=op.f("fk_screening_reviewers_added_by_users"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["owner_id"],
            ["users.id"],
            name=op.f("fk_screening_reviewers_owner_id_users"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["project_id"],
            ["screening_projects.id"],
            name=op.f("fk_screening_reviewers_project_id_screening_projects"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_screening_reviewers")),
        sa.UniqueConstraint(
            "project_id", "owner_id", name=op.f("uq_screening_reviewers_project_id")
        ),
    )
    op.create_index(
        op.f("ix_screening_reviewers_owner_id"), "screening_reviewers", ["owner_id"], unique=False
    )
    op.create_index(
        op.f("ix_screening_reviewers_project_id"),
        "screening_reviewers",
        ["project_id"],
        unique=False,
    )
    op.create_table(
        "screening_decisions",
        sa.Column("project_id", sa.Uuid(), nullable=False),
        sa.Column("record_id", sa.Uuid(), nullable=False),
        sa.Column("stage", sa.String(length=16), nullable=False),
        sa.Column("decision", sa.String(length=16), nullable=False),
        sa.Column("reason", sa.Text(), nullable=True),
        sa.Column("score", sa.Float(), nullable=True),
        sa.Column("accepted_suggestion", sa.String(length=16), nullable=True),
        sa.Column("seq", sa.Integer(), nullable=False),
        sa.Column("decided_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("undone_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("owner_id", sa.Uuid(), nullable=False),
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.ForeignKeyConstraint(
            ["owner_id"],
            ["users.id"],
            name=op.f("fk_screening_decisions_owner_id_users"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["project_id"],
            ["screening_projects.id"],
            name=op.f("fk_screening_decisions_project_id_screening_projects"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["record_id"],
            ["screening_records.id"],
            name=op.f("fk_screening_decisions_record_id_screening_records"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_screening_decisions")),
        sa.UniqueConstraint(
            "project_id", "owner_id", "seq", name=op.f("uq_screening_decisions_project_id")
        ),
    )
    op.create_index(
        op.f("ix_screening_decisions_owner_id"), "screening_decisions", ["owner_id"], unique=False
    )
    op.create_index(
        "ix_screening_decisions_project_record",
        "screening_decisions",
        ["project_id", "record_id"],
        unique=False,
    )
    op.create_table(
        "screening_suggestions",
        sa.Column("project_id", sa.Uuid(), nullable=False),
        sa.Column("record_id", sa.Uuid(), nullable=False),
        sa.Column("suggestion", sa.JSON(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("owner_id", sa.Uuid(), nullable=False),
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.ForeignKeyConstraint(
            ["owner_id"],
            ["users.id"],
            name=op.f("fk_screening_suggestions_owner_id_users"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["project_id"],
            ["screening_projects.id"],
            name=op.f("fk_screening_suggestions_project_id_screening_projects"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["record_id"],
            ["screening_records.id"],
            name=op.f("fk_screening_suggestions_record_id_screening_records"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_screening_suggestions")),
        sa.UniqueConstraint(
            "project_id", "record_id", name=op.f("uq_screening_suggestions_project_id")
        ),
    )
    op.create_index(
        op.f("ix_screening_suggestions_owner_id"),
        "screening_suggestions",
        ["owner_id"],
        unique=False,
    )


def downgrade() -> None:
    op.drop_index(op.f("ix_screening_suggestions_owner_id"), table_name="screening_suggestions")
    op.drop_table("screening_suggestions")
    op.drop_index("ix_screening_decisions_project_record", table_name="screening_decisions")
    op.drop_index(op.f("ix_screening_decisions_owner_id"), table_name="screening_decisions")
    op.drop_table("screening_decisions")
    op.drop_index(op.f("ix_screening_reviewers_project_id"), table_name="screening_reviewers")
    op.drop_index(op.f("ix_screening_reviewers_owner_id"), table_name="screening_reviewers")
    op.drop_table("screening_reviewers")
    op.drop_index("ix_screening_records_project_key", table_name="screening_records")
    op.drop_index(op.f("ix_screening_records_owner_id"), table_name="screening_records")
    op.drop_table("screening_records")
    op.drop_index(op.f("ix_screening_projects_owner_id"), table_name="screening_projects")
    op.drop_index("ix_screening_projects_owner_created", table_name="screening_projects")
    op.drop_table("screening_projects")
