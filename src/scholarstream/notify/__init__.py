"""Notifications through apprise URLs (ntfy, e-mail, Slack, webhooks...): a user's own
targets receive all their notifications, a stream's targets that stream's.

``NotificationTargetStore`` keeps the targets (URLs encrypted); ``urls_for`` gives the
``Target`` list for a stream (or the user alone), which a ``Notifier`` (``AppriseNotifier``,
on ``Runtime.notifier``) sends a ``Notification`` to, one ``Delivery`` per target."""

from scholarstream.notify.message import (
    NOTIFICATION_KINDS,
    Delivery,
    Level,
    Notification,
    NotificationKind,
)
from scholarstream.notify.sender import AppriseNotifier, Notifier
from scholarstream.notify.store import MAX_TARGETS, NotificationTargetStore
from scholarstream.notify.target import Target, TargetInfo
from scholarstream.notify.urls import URL_HINT, CheckedUrl, check_url, preview, redact

__all__ = [
    "MAX_TARGETS",
    "NOTIFICATION_KINDS",
    "URL_HINT",
    "AppriseNotifier",
    "CheckedUrl",
    "Delivery",
    "Level",
    "Notification",
    "NotificationKind",
    "NotificationTargetStore",
    "Notifier",
    "Target",
    "TargetInfo",
    "check_url",
    "preview",
    "redact",
]
