"""Notifications through apprise URLs (ntfy, e-mail, Slack, webhooks...): a user's own
targets receive all their notifications, a stream's targets that stream's.

``NotificationTargetStore`` keeps the targets (URLs encrypted); ``urls_for`` gives the
``Target`` list for a stream (or the user alone), which a ``Notifier`` (``AppriseNotifier``,
on ``Runtime.notifier``) sends a ``Notification`` to, one ``Delivery`` per target."""

from scholarstream.notify._message import (
    NOTIFICATION_KINDS,
    Delivery,
    Level,
    Notification,
    NotificationKind,
)
from scholarstream.notify._sender import AppriseNotifier, Notifier
from scholarstream.notify._store import MAX_TARGETS, NotificationTargetStore
from scholarstream.notify._target import Target, TargetInfo
from scholarstream.notify._target_hosts import PRIVATE_HINT, TargetHosts, named_hosts
from scholarstream.notify._urls import URL_HINT, CheckedUrl, check_url, preview, redact

__all__ = [
    "MAX_TARGETS",
    "NOTIFICATION_KINDS",
    "PRIVATE_HINT",
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
    "TargetHosts",
    "TargetInfo",
    "check_url",
    "named_hosts",
    "preview",
    "redact",
]
