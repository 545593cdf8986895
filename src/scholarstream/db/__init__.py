"""Persistence: tables, the async database handle, owner scoping and migrations."""

from scholarstream.db.base import Base, Owned
from scholarstream.db.migrate import current_revision, upgrade, upgrade_async
from scholarstream.db.scope import OwnerScope
from scholarstream.db.session import Database

__all__ = [
    "Base",
    "Database",
    "Owned",
    "OwnerScope",
    "current_revision",
    "upgrade",
    "upgrade_async",
]
