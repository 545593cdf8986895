"""Where a user's notifications go: apprise URLs, per user or per research stream."""

from __future__ import annotations

import uuid

from sqlalchemy import JSON, ForeignKey, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from scholarstream.db._base import Base, CreatedAtMixin, Owned


class NotificationTargetRow(Owned, CreatedAtMixin, Base):
    """One apprise URL. A target without a stream is the user's own: it receives every
    notification of the user (of the kinds it lists)."""

    __tablename__ = "notification_targets"

    # None: user level. A stream's targets go with the stream.
    stream_id: Mapped[uuid.UUID | None] = mapped_column(
        ForeignKey("streams.id", ondelete="CASCADE"), index=True, default=None
    )
    label: Mapped[str] = mapped_column(String(120))
    # Fernet token made with the server secret: the URL holds passwords and tokens and is
    # never returned by the API.
    url_encrypted: Mapped[str] = mapped_column(Text)
    # The URL with its secrets masked, computed once when it is saved.
    preview: Mapped[str] = mapped_column(String(300))
    # The notification kinds it receives; empty means every kind (also ones added later).
    kinds: Mapped[list[str]] = mapped_column(JSON, default=list)
