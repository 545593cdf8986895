"""Announcing a finished run through the owner's notification targets (the stream's own
and the user's): what is new, what failed, and a link to the report. A complete run with
nothing new is not announced (its report is still listed); a partial or failed run is,
so a source that stays down does not go unnoticed."""

from __future__ import annotations

import uuid

from scholarstream.notify import (
    Delivery,
    Level,
    Notification,
    NotificationKind,
    NotificationTargetStore,
    Notifier,
)
from scholarstream.settings import ServerSettings
from scholarstream.streams.monitoring._report import StoredReport

KIND: NotificationKind = "stream_report"
_TOP_ITEMS = 5
_MAX_TITLE = 120  # of one item's title in the body


def report_path(stream_id: uuid.UUID, report_id: uuid.UUID) -> str:
    return f"/streams/{stream_id}/reports/{report_id}"


def _cut(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rsplit(" ", 1)[0] + "…"


def report_notification(stored: StoredReport, stream_name: str, link: str) -> Notification | None:
    """The notification for ``stored``, or ``None`` when there is nothing to say."""
    report = stored.report
    new = report.counts.new if report else 0
    failed = [s.source for s in stored.sources if not s.ok]
    if stored.status == "complete" and new == 0:
        return None
    level: Level
    if stored.status == "failed":
        level = "failure"
        title = f"{stream_name}: the run failed"
        lines = [
            f"No source could be searched ({', '.join(failed) or stored.error or 'unknown'}).",
            "The next run searches the same period again.",
        ]
    else:
        level = "warning" if stored.status == "partial" else "success"
        title = f"{stream_name}: {new} new item{'s' if new != 1 else ''}"
        lines = []
        if failed:
            lines.append(
                f"Partial report: {', '.join(failed)} failed; the others' items are listed."
            )
        for item in (report.items if report else [])[:_TOP_ITEMS]:
            lines.append(
                f"- **{_cut(item.record.title or '(untitled)', _MAX_TITLE)}**: {item.reason}"
            )
        if new > _TOP_ITEMS:
            lines.append(f"- and {new - _TOP_ITEMS} more in the report.")
    return Notification(
        kind=KIND, title=_cut(title, 250), body="\n".join(lines), url=link, level=level
    )


async def announce(
    server: ServerSettings,
    targets: NotificationTargetStore,
    notifier: Notifier,
    owner_id: uuid.UUID,
    stored: StoredReport,
    stream_name: str,
) -> list[Delivery]:
    """Sends the run's notification to every target of the stream and the owner (none:
    nothing sent) and returns each target's outcome."""
    # No request to read an address from: ``server.public_url``, else the address the server
    # was started on (``serve --host/--port`` reach it through the runtime's settings).
    link = server.base_url + report_path(stored.stream_id, stored.id)
    notification = report_notification(stored, stream_name, link)
    if notification is None:
        return []
    found = await targets.urls_for(owner_id, stored.stream_id, kind=KIND)
    if not found:
        return []
    return await notifier.send(notification, found)
