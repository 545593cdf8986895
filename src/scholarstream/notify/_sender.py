"""Sending a notification to targets: the ``Notifier`` protocol the product calls, and its
apprise implementation.

Each target is sent separately, so each has its own outcome; a failing target is a
``Delivery`` with ``ok=False``, never an exception, and never stops the others: the
caller (a stream run, a research job) decides what a failed notification means.

Unless private hosts are allowed (``TargetHosts.allow_private``), apprise runs inside
``only_public_connections()``: every connection any plugin opens (HTTP, SMTP, UDP ...) is
checked on the address it is about to reach, so a plugin that builds its server's name
from other parts of the URL, a redirect, or a name that now points inside reaches
nothing."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from typing import Protocol

from apprise import Apprise, AppriseAsset, AppriseResultStatus, NotifyFormat, NotifyType

from scholarstream.notify._message import Delivery, Notification
from scholarstream.notify._target import Target
from scholarstream.notify._target_hosts import PRIVATE_HINT, TargetHosts
from scholarstream.notify._urls import redact
from scholarstream.public_connections import only_public_connections

log = logging.getLogger(__name__)

_MAX_ERROR = 500
_REPORTED_LEVELS = frozenset({"WARNING", "ERROR", "CRITICAL"})
# apprise stops at the deadline on its own; this is only for a thread that does not.
_BACKSTOP_SECONDS = 2.0


class Notifier(Protocol):
    async def send(self, notification: Notification, targets: Sequence[Target]) -> list[Delivery]:
        """One ``Delivery`` per target, in the order of ``targets``; never raises for a
        target that fails."""
        ...


class AppriseNotifier:
    """Sends through apprise, whose calls block: each runs in a worker thread, at most
    ``max_parallel`` at a time, all within ``timeout_seconds``."""

    def __init__(
        self,
        *,
        timeout_seconds: float = 30.0,
        max_parallel: int = 4,
        hosts: TargetHosts | None = None,
    ) -> None:
        self.timeout_seconds = timeout_seconds
        self._limit = max_parallel
        self._hosts = hosts if hosts is not None else TargetHosts(allow_private=True)
        self._asset = AppriseAsset(app_id="ScholarStream", app_desc="ScholarStream")

    async def send(self, notification: Notification, targets: Sequence[Target]) -> list[Delivery]:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.timeout_seconds
        # Per call: a semaphore belongs to the event loop it is first used in.
        limit = asyncio.Semaphore(self._limit)

        async def one(target: Target) -> Delivery:
            async with limit:
                left = deadline - loop.time()
                if left <= 0:
                    return self._timed_out(target)
                try:
                    return await asyncio.wait_for(
                        asyncio.to_thread(self._deliver, notification, target, left),
                        left + _BACKSTOP_SECONDS,
                    )
                except TimeoutError:
                    return self._timed_out(target)

        deliveries = list(await asyncio.gather(*(one(target) for target in targets)))
        for delivery in deliveries:
            if not delivery.ok:
                log.warning(
                    "%s notification to %r (%s) failed: %s",
                    notification.kind,
                    delivery.label,
                    delivery.preview,
                    delivery.error,
                )
        return deliveries

    def _deliver(self, notification: Notification, target: Target, timeout: float) -> Delivery:
        """One target, in a worker thread (apprise's calls block)."""
        url = target.url.get_secret_value()
        # The rule goes with the context into apprise's worker threads: a plugin that
        # outlives the timeout stays held to it.
        with only_public_connections(enforce=not self._hosts.allow_private) as guard:
            delivery = self._notify(notification, target, url, timeout)
        if guard.refused:  # whatever apprise made of it, even if a first connection passed
            return _outcome(target, redact(f"Not sent: {guard.refused[0]}. {PRIVATE_HINT}", url))
        return delivery

    def _notify(
        self, notification: Notification, target: Target, url: str, timeout: float
    ) -> Delivery:
        try:
            apobj = Apprise(asset=self._asset)
            if not apobj.add(url):
                return _outcome(target, "apprise cannot send to this URL; save it again.")
            with apobj.notify(
                body=_body(notification),
                title=notification.title,
                notify_type=NotifyType(notification.level),
                body_format=NotifyFormat.MARKDOWN,
                timeout=timeout,
            ) as result:
                if result:
                    return _outcome(target, None)
                if result.status == AppriseResultStatus.TIMEOUT:
                    return self._timed_out(target)
                problems = [e.message for e in result.logs() if e.level in _REPORTED_LEVELS]
                error = "; ".join(dict.fromkeys(problems)) or "The service refused it."
                return _outcome(target, redact(error, url))
        except Exception as exc:  # a broken plugin must not stop the other targets
            return _outcome(
                target,
                redact(
                    f"The notification service's plugin failed ({exc}). Check the target's "
                    "URL, or send a test notification again later.",
                    url,
                ),
            )

    def _timed_out(self, target: Target) -> Delivery:
        return _outcome(target, f"No answer within {self.timeout_seconds:g} s.")


def _body(notification: Notification) -> str:
    if notification.url is None:
        return notification.body
    return f"{notification.body}\n\n{notification.url}"


def _outcome(target: Target, error: str | None) -> Delivery:
    if error is not None and len(error) > _MAX_ERROR:
        error = error[: _MAX_ERROR - 1] + "…"
    return Delivery(
        target_id=target.id,
        label=target.label,
        preview=target.preview,
        ok=error is None,
        error=error,
    )
