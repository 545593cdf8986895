"""Persistence: tables, the async database handle, owner scoping and migrations."""

from scholarstream.db._base import Base, Owned, utcnow
from scholarstream.db._migrate import alembic_config, current_revision, upgrade, upgrade_async
from scholarstream.db._scope import OwnerScope
from scholarstream.db._session import BUSY_TIMEOUT_SECONDS, Database

__all__ = [
    "BUSY_TIMEOUT_SECONDS",
    "Base",
    "Database",
    "Owned",
    "OwnerScope",
    "alembic_config",
    "current_revision",
    "upgrade",
    "upgrade_async",
    "utcnow",
]
