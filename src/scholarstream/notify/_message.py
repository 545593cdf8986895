"""What is sent (a ``Notification``) and what became of it at one target (a ``Delivery``)."""

from __future__ import annotations

import uuid
from typing import Literal, get_args

from pydantic import BaseModel, Field

NotificationKind = Literal["stream_report", "research_report", "test"]
"""What a notification is about; a target may receive only some kinds."""

NOTIFICATION_KINDS: tuple[NotificationKind, ...] = get_args(NotificationKind)

Level = Literal["info", "success", "warning", "failure"]
"""How the services show it (apprise's notify types: colour, icon, priority)."""


class Notification(BaseModel):
    kind: NotificationKind
    title: str = Field(min_length=1, max_length=250)
    # Markdown (plain text is valid markdown): services that show HTML get it converted.
    body: str = Field(min_length=1, max_length=20_000)
    # A link to the full thing in ScholarStream (a report page), added under the body.
    url: str | None = None
    level: Level = "info"


class Delivery(BaseModel):
    """One target's outcome. ``error`` is safe to show: it never contains the URL's
    secrets."""

    target_id: uuid.UUID | None
    label: str
    preview: str
    ok: bool
    error: str | None = None
