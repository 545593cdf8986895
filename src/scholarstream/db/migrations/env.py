"""Alembic environment: migrations always run on a connection handed in by ``db.migrate``."""

from __future__ import annotations

from alembic import context

import scholarstream.db.tables  # noqa: F401  (registers every table on the metadata)
from scholarstream.db._base import Base

connection = context.config.attributes.get("connection")
if connection is None:
    raise RuntimeError("Run migrations with 'scholarstream db upgrade', not the alembic CLI.")

context.configure(
    connection=connection,
    target_metadata=Base.metadata,
    render_as_batch=connection.dialect.name == "sqlite",
    compare_type=True,
)
with context.begin_transaction():
    context.run_migrations()
