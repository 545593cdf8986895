"""The shareable report of a completed research (seed 001, "Post-Synthesis Actions"): once
the HTML is stored, its ``share_info`` is kept on the research and ``research.shared``
tells the notifier which URL to send.

==========================  ===============================================================
function                    effect
==========================  ===============================================================
``attach_share_info``       ``share_info`` kept, ``research.shared`` announced; the same
                            share (same token) attached again changes nothing
``record_share_failed``     ``share_error`` kept; the research stays ``completed``
``record_notification``     how sending the link went, on ``share_info``
``shared_at``               the research with its link on the address people reach the
                            server at (``server.public_url``, else the request's own)
==========================  ===============================================================

Every step of sharing may run again after a crash; each of these is safe to repeat.
"""

from __future__ import annotations

from datetime import datetime
from urllib.parse import urlsplit

from scholarstream.research.core._base import utc_now
from scholarstream.research.core._changes import ResearchChange, changed, unchanged
from scholarstream.research.core._events import ResearchShared
from scholarstream.research.core._lifecycle import ResearchStatus, conflict
from scholarstream.research.core._records import Research, ShareInfo

__all__ = [
    "SHARED_PATH",
    "attach_share_info",
    "record_notification",
    "record_share_failed",
    "shared_at",
]

SHARED_PATH = "/shared/research/"
"""Where the server serves a shared report: ``SHARED_PATH + token``."""


def _require_completed(research: Research) -> None:
    if research.status != ResearchStatus.COMPLETED:
        raise conflict(
            research.status,
            f"Only a completed research can be shared; this one is {research.status}.",
        )


def attach_share_info(
    research: Research, share_info: ShareInfo, *, now: datetime | None = None
) -> ResearchChange:
    _require_completed(research)
    current = research.share_info
    moment = utc_now(now)
    if current is not None and share_info.token is not None and current.token == share_info.token:
        if research.share_error is None:
            return unchanged(research)  # already attached: a repeated step, or a new edition
        # A new edition of the page was stored where the previous one could not be.
        cleared = research.model_copy(update={"share_error": None, "updated_at": moment})
        return ResearchChange(research=cleared)
    shared = research.model_copy(
        update={"share_info": share_info, "share_error": None, "updated_at": moment}
    )
    event = ResearchShared(
        research_id=research.id, occurred_at=moment, share_url=share_info.share_url
    )
    return changed(research, shared, now=moment, events=[event])


def record_share_failed(
    research: Research, error: str, *, now: datetime | None = None
) -> ResearchChange:
    """The report could not be stored: ``share_error`` says why; nothing else changes."""
    _require_completed(research)
    if research.share_error == error:
        return unchanged(research)
    moment = utc_now(now)
    return ResearchChange(
        research=research.model_copy(update={"share_error": error, "updated_at": moment})
    )


def record_notification(
    research: Research,
    *,
    delivered: int,
    error: str | None,
    now: datetime | None = None,
) -> ResearchChange:
    """How sending the share link went: ``delivered`` targets took it, ``error`` says what
    failed (``None``: nothing did)."""
    _require_completed(research)
    if research.share_info is None:
        raise conflict(research.status, "This research has no shareable report to announce.")
    moment = utc_now(now)
    info = research.share_info.model_copy(
        update={"notified_at": moment, "notified_targets": delivered, "notification_error": error}
    )
    return ResearchChange(
        research=research.model_copy(update={"share_info": info, "updated_at": moment})
    )


def shared_at(research: Research, base_url: str) -> Research:
    """``research`` with its share link on ``base_url`` (``https://host:port``, with any
    path prefix). The link is stored with the address the server knew when it shared the
    report; a reader is given it on the address they reached the server at, unless
    ``server.public_url`` names the one address to send people (the caller decides)."""
    info = research.share_info
    if info is None:
        return research
    if info.token is not None:
        path = SHARED_PATH + info.token
    else:  # shared before tokens were kept: the stored link's path
        stored = urlsplit(info.share_url)
        path = stored.path + (f"?{stored.query}" if stored.query else "")
    link = base_url.rstrip("/") + path
    if link == info.share_url:
        return research
    return research.model_copy(update={"share_info": info.model_copy(update={"share_url": link})})
