"""Chat on the home page, the user's dashboard: their streams with each one's last report,
their recent searches, their research and their library, or on a first visit only where to
start. The assistant answers about that work, guides the user to the page that does what
they want, and turns a research question into a search.

The page sends ``dashboard`` (web/_dashboard.py, ``chat_view``; times as the page shows
them): ``first_run``, ``start_actions``, ``streams`` (name, schedule, ``last_report``:
status, running, when, first, new, failed_sources, best: the titles it names),
``stream_count``, ``searches`` (question, status, when), ``research`` (title, status, when)
and ``library`` (records, when the last one was added, from which file)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from scholarstream.chat._builtin_payloads import QUERY_SUGGESTION
from scholarstream.chat.core import ChatContext
from scholarstream.chat.pages._context_text import page_context
from scholarstream.chat.pages._navigation import (
    OPEN_LIBRARY,
    OPEN_SEARCH_PAGE,
    OPEN_SETTINGS,
    OPEN_TRIALS,
)
from scholarstream.chat.pages._registry import register_page

PAGE = "home"


def _listed(value: object) -> list[Mapping[str, Any]]:
    return [item for item in value if isinstance(item, Mapping)] if isinstance(value, list) else []


def _number(value: object) -> int | None:
    """A count the page sent; None for anything else (the context is the client's)."""
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _count(n: int, one: str, many: str | None = None) -> str:
    return f"{n:,} {one if n == 1 else many or one + 's'}"


def _report_text(report: Mapping[str, Any]) -> str:
    status, when, new = report.get("status"), report.get("when"), _number(report.get("new"))
    if new is None:
        said = f"last report: {status}, {when}" + (
            " (searching now)" if report.get("running") else " (it failed: no source answered)"
        )
    elif report.get("first"):
        said = f"first report ({status}, {when}): {_count(new, 'item')}"
    else:
        said = f"last report ({status}, {when}): {new or 'nothing'} new"
    failed = _number(report.get("failed_sources"))
    if failed and new is not None:
        said += f", {_count(failed, 'source')} failed"
    listed = report.get("best")
    best = [title for title in listed if isinstance(title, str)] if isinstance(listed, list) else []
    if best:
        said += "; its best new items: " + "; ".join(f"“{title}”" for title in best)
    return said


def _streams(dashboard: Mapping[str, Any]) -> list[str]:
    streams = _listed(dashboard.get("streams"))
    if not streams:
        return ["Your streams: none yet (the panel offers Create a stream)."]
    total = _number(dashboard.get("stream_count"))
    shown = len(streams)
    of = f"{shown} shown of {total}" if total is not None and total > shown else str(shown)
    lines = [f"Your streams: {of}, the latest run first."]
    for stream in streams:
        report = stream.get("last_report")
        said = (
            _report_text(report)
            if isinstance(report, Mapping)
            else "not run yet (Run now on its page makes its first report)"
        )
        lines.append(f"Stream “{stream.get('name')}”: {stream.get('schedule')}; {said}.")
    return lines


def _dated(label: str, key: str, items: list[Mapping[str, Any]]) -> list[str]:
    """One line per item: ``label “title”: status, when.``"""
    return [
        f"{label} “{item.get(key)}”: {item.get('status')}, {item.get('when')}." for item in items
    ]


def _library(library: object) -> str:
    records = _number(library.get("records")) if isinstance(library, Mapping) else None
    if not isinstance(library, Mapping) or not records:
        return "Library: empty (the panel offers Import a file)."
    said = f"Library: {_count(records, 'record')}"
    if library.get("when"):
        said += f", the last added {library['when']}"
        if library.get("file"):
            said += f" from the file {library['file']}"
    return said + "."


def dashboard_lines(dashboard: Mapping[str, Any]) -> list[str]:
    """The dashboard as the user sees it, one line per panel (and per item in it)."""
    listed = dashboard.get("start_actions")
    actions = ", ".join(str(a) for a in listed) if isinstance(listed, list) else ""
    if dashboard.get("first_run"):
        return [
            "Nothing of the user's own yet (no stream, search, research or library record): "
            f"the page leads with Start here: {actions}."
        ]
    return [
        f"Start something new: {actions}.",
        *_streams(dashboard),
        *(
            _dated("Recent search", "question", searches)
            if (searches := _listed(dashboard.get("searches")))
            else ["Recent searches: none yet."]
        ),
        *(
            _dated("Research", "title", research)
            if (research := _listed(dashboard.get("research")))
            else ["Research: none yet."]
        ),
        _library(dashboard.get("library")),
    ]


def build_context(context: ChatContext) -> str:
    dashboard = context.extras().get("dashboard")
    return page_context(
        "Home",
        "It is the user's dashboard: their research streams with each one's last report "
        "(what is new in it), their recent paper searches with their state, their "
        "multi-model research, and the size of their library, each linked to its page; "
        "and buttons to start something new.",
        context,
        extra_lines=dashboard_lines(dashboard) if isinstance(dashboard, Mapping) else [],
        known_extras=["dashboard"],
        guidance=[
            "Answer questions about this work from what the dashboard shows (what is new in "
            "a stream's report, which search waits for the user, how big the library is); "
            "to go further, name the item the user clicks to open it (a stream's report, a "
            "search, a research).",
            "When the user describes what they are looking for, offer QUERY_SUGGESTION with "
            'target "search": Accept opens the Search page with the question filled in, '
            "where the user confirms the strategy before it searches.",
            "For a quick look, search yourself (search_literature, search_pubmed, "
            "search_trials, search_library) and summarise what you found.",
            "Point to the page that does the job: Search (systematic search with "
            "checkpoints), Library (imported records, offline), Streams (follow a field with "
            "reports on a schedule), Research (one question to several models), Trials "
            "(ClinicalTrials.gov), Settings (models and API keys); offer the matching open_* "
            "action where there is one.",
        ],
    )


register_page(
    PAGE,
    context_builder=build_context,
    payloads=[QUERY_SUGGESTION.name],
    client_actions=[OPEN_SEARCH_PAGE, OPEN_LIBRARY, OPEN_TRIALS, OPEN_SETTINGS],
)
