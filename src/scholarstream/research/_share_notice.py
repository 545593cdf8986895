"""The notification that tells a research's owner it is done, with the link to its
shareable report (the seed's "Send notification (WhatsApp/push) with share URL"). It goes
to the owner's targets that receive ``research_report`` notifications."""

from __future__ import annotations

from scholarstream.notify import Level, Notification, NotificationKind
from scholarstream.research.core import SHARED_PATH, Research, synthesis_notice

__all__ = ["KIND", "research_notification", "shared_path"]

KIND: NotificationKind = "research_report"
_MAX_TITLE = 250
_MAX_EXCERPT = 400


def shared_path(token: str) -> str:
    return f"{SHARED_PATH}{token}"


def _cut(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rsplit(" ", 1)[0] + "…"


def research_notification(research: Research, link: str) -> Notification:
    answered = len(research.successful_results)
    failed = research.failed_models
    total = len(research.llm_results)
    lines = [f"{answered} of {total} model{'s' if total != 1 else ''} answered."]
    if failed:
        lines.append(f"Failed: {', '.join(failed)}.")
    notice = synthesis_notice(research)
    if research.synthesized_result:
        lines.append(f"Synthesis: {_cut(research.synthesized_result, _MAX_EXCERPT)}")
    elif notice and research.synthesis_error:
        lines.append(_cut(notice, _MAX_EXCERPT))
    else:
        lines.append("No synthesis: the report has the models' answers.")
    level: Level = "warning" if failed or research.synthesis_error else "success"
    return Notification(
        kind=KIND,
        title=_cut(f"Research ready: {research.title}", _MAX_TITLE),
        body="\n\n".join(lines),
        url=link,
        level=level,
    )
