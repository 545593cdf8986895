"""The shareable report of a completed research (seed 001, "Post-Synthesis Actions"): once
the HTML is stored, its ``share_info`` is kept on the research and ``research.shared``
tells the notifier which URL to send."""

from __future__ import annotations

from datetime import datetime

from scholarstream.research._base import utc_now
from scholarstream.research.changes import ResearchChange, changed
from scholarstream.research.events import ResearchShared
from scholarstream.research.lifecycle import ResearchStatus, conflict
from scholarstream.research.records import Research, ShareInfo

__all__ = ["attach_share_info"]


def attach_share_info(
    research: Research, share_info: ShareInfo, *, now: datetime | None = None
) -> ResearchChange:
    if research.status != ResearchStatus.COMPLETED:
        raise conflict(
            research.status,
            f"Only a completed research can be shared; this one is {research.status}.",
        )
    moment = utc_now(now)
    shared = research.model_copy(update={"share_info": share_info, "updated_at": moment})
    event = ResearchShared(
        research_id=research.id, occurred_at=moment, share_url=share_info.share_url
    )
    return changed(research, shared, now=moment, events=[event])
