"""chat evidence: the records a conversation's answers may cite, under the citation keys
they keep for the whole conversation

Revision ID: 0015
Revises: 0014
Create Date: 2026-11-29 10:00:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0015"
down_revision: str | None = "0014"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("chat_conversations", schema=None) as batch_op:
        batch_op.add_column(sa.Column("evidence", sa.JSON(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("chat_conversations", schema=None) as batch_op:
        batch_op.drop_column("evidence")
