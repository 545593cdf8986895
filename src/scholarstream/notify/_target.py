"""A notification target: where to send (the secret URL), and what may be shown of it."""

from __future__ import annotations

import uuid
from datetime import datetime

from pydantic import BaseModel, ConfigDict, SecretStr

from scholarstream.notify._message import NotificationKind
from scholarstream.notify._urls import check_url


class Target(BaseModel):
    """What a ``Notifier`` sends to. ``url`` is a ``SecretStr`` so that a repr or a log
    line of a target never shows it; ``preview`` is the masked form."""

    model_config = ConfigDict(frozen=True)

    id: uuid.UUID | None = None
    label: str
    url: SecretStr
    preview: str

    @classmethod
    def from_url(
        cls, url: str, *, label: str | None = None, target_id: uuid.UUID | None = None
    ) -> Target:
        """A target for ``url`` (checked: ``InvalidInputError`` if apprise cannot send to
        it), labelled with the service's name unless ``label`` is given."""
        checked = check_url(url)
        return cls(
            id=target_id,
            label=label or checked.service,
            url=SecretStr(checked.url),
            preview=checked.preview,
        )


class TargetInfo(BaseModel):
    """A stored target as the API shows it: never its URL."""

    id: uuid.UUID
    label: str
    preview: str
    # None: the user's own target (every notification of the user).
    stream_id: uuid.UUID | None
    # None: every kind, also kinds added later.
    kinds: list[NotificationKind] | None
    created_at: datetime
