"""Users, their API tokens and their web sessions."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import String
from sqlalchemy.orm import Mapped, mapped_column

from scholarstream.db._base import Base, CreatedAtMixin, IdMixin, Owned


class User(IdMixin, CreatedAtMixin, Base):
    __tablename__ = "users"

    username: Mapped[str] = mapped_column(String(64), unique=True)
    display_name: Mapped[str] = mapped_column(String(200), default="")
    # None for the built-in local user of single-user mode, who never logs in.
    password_hash: Mapped[str | None] = mapped_column(String(200), default=None)
    is_admin: Mapped[bool] = mapped_column(default=False)
    is_active: Mapped[bool] = mapped_column(default=True)


class ApiToken(Owned, CreatedAtMixin, Base):
    """Bearer token for the API and CLI; only its SHA-256 is stored."""

    __tablename__ = "api_tokens"

    name: Mapped[str] = mapped_column(String(100))
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    prefix: Mapped[str] = mapped_column(String(16))
    last_used_at: Mapped[datetime | None] = mapped_column(default=None)
    expires_at: Mapped[datetime | None] = mapped_column(default=None)
    revoked_at: Mapped[datetime | None] = mapped_column(default=None)


class WebSession(Owned, CreatedAtMixin, Base):
    """Login session behind the web UI's cookie; only the token's SHA-256 is stored."""

    __tablename__ = "web_sessions"

    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    expires_at: Mapped[datetime] = mapped_column(index=True)
