"""Chat on one monitoring report's page (``stream_report``), with the ``compare_reports``
tool: what changed between this report and another of the same stream.

The page sends ``stream_id`` and ``report_id`` (the ChatContext's own fields, so the
stream's ``chat_instructions`` join the system prompt) and ``report``: the report as shown
(stream name, status, run time, counts, failed sources)."""

from __future__ import annotations

import uuid
from typing import Any

from pydantic import Field

from scholarstream.chat.core import ChatContext
from scholarstream.chat.pages._context_text import page_context, pairs
from scholarstream.chat.pages._navigation import OPEN_LIBRARY, OPEN_SEARCH_PAGE, OPEN_TRIALS
from scholarstream.chat.pages._registry import register_page
from scholarstream.chat.tools import (
    ToolConfig,
    ToolContext,
    ToolFailedError,
    ToolNotFoundError,
    ToolResult,
    register_tool,
)
from scholarstream.chat.tools.builtin import (
    ToolArguments,
    counted,
    input_schema,
    listed,
    parse_arguments,
    source_label,
)
from scholarstream.errors import InvalidInputError, NotFoundError
from scholarstream.streams.monitoring import (
    ReportStore,
    StoredReport,
    compare_text,
    load_pair,
    parse_id,
)

PAGE = "stream_report"


class CompareArgs(ToolArguments):
    report_id: str | None = Field(
        default=None, description="The report to compare; default: the report on the page."
    )
    other_report_id: str | None = Field(
        default=None,
        description="The report to compare it with (same stream); default: the stream's "
        "previous report.",
    )


NO_REPORT = "Open a report of one of your streams to compare it with another."
NOT_THIS_STREAMS = "That report is not one of this stream's reports."
FIRST_REPORT = "This is the stream's first report: there is no earlier one to compare it with."
ITSELF = "A report cannot be compared with itself."
NO_CONTENT = (
    "One of the two runs has no report (it failed or is still running): compare finished runs."
)


async def compare_reports(params: dict[str, Any], ctx: ToolContext) -> ToolResult:
    args = parse_arguments("compare_reports", CompareArgs, params)
    report = args.report_id or ctx.chat.report_id
    if ctx.chat.stream_id is None or report is None:
        raise ToolFailedError(
            "No stream report is open, so there are no reports to compare.",
            hint="Open a report of a stream (Streams → a stream → a report).",
            for_user=NO_REPORT,
        )
    store = ReportStore(ctx.services.database)
    try:
        stream_id = parse_id(ctx.chat.stream_id, "Stream")
        report_id = parse_id(report, "report_id")
        other = None if args.other_report_id is None else parse_id(args.other_report_id, "other")
        this, that = await load_pair(store, ctx.owner_id, stream_id, report_id, other)
    except NotFoundError as exc:
        raise ToolNotFoundError(exc.message, hint=exc.hint, for_user=NOT_THIS_STREAMS) from exc
    except InvalidInputError as exc:
        why = await _why_not(store, ctx, args, report)
        raise ToolFailedError(exc.message, hint=exc.hint, for_user=why) from exc
    return ToolResult(text=compare_text(this, that), for_user=_compared(this, that, ctx))


async def _why_not(store: ReportStore, ctx: ToolContext, args: CompareArgs, report: str) -> str:
    """Why two reports could not be compared, in a person's words (the error's message
    names them by id, for the model)."""
    if args.other_report_id is None:
        stream, this = uuid.UUID(str(ctx.chat.stream_id)), _uuid(report)
        summaries = await store.list(ctx.owner_id, stream)  # newest first
        later = [s.id for s in summaries]
        if this in later and not any(s.counts for s in summaries[later.index(this) + 1 :]):
            return FIRST_REPORT
    elif args.other_report_id == report:
        return ITSELF
    if _uuid(report) is None or (args.other_report_id and _uuid(args.other_report_id) is None):
        return NOT_THIS_STREAMS
    return NO_CONTENT


def _uuid(value: str) -> uuid.UUID | None:
    try:
        return uuid.UUID(value)
    except ValueError:
        return None


def _when(stored: StoredReport) -> str:
    return f"{stored.started_at:%-d %b %Y, %H:%M} UTC"


def _change(now: int, before: int) -> str:
    return f"{now} ({now - before:+d})" if now != before else f"{now} (the same)"


def _compared(this: StoredReport, that: StoredReport, ctx: ToolContext) -> str:
    """The comparison in a few sentences: the other report by its date, the new items,
    the sources whose outcome changed and what is in one report only. No ids."""
    a, b = this.report, that.report
    assert a is not None  # load_pair checks both
    assert b is not None
    said = [
        f"Compared with the report of {_when(that)}: new items "
        f"{_change(a.counts.new, b.counts.new)}, works found "
        f"{_change(a.counts.distinct, b.counts.distinct)}."
    ]
    mine = {o.source: o.ok for o in this.sources}
    theirs = {o.source: o.ok for o in that.sources}
    failed_now = [source_label(ctx, s) for s, ok in mine.items() if not ok and theirs.get(s, True)]
    back = [source_label(ctx, s) for s, ok in mine.items() if ok and theirs.get(s) is False]
    if failed_now:
        said.append(f"{listed(failed_now)} failed in this run but not in the other.")
    if back:
        said.append(f"{listed(back)} answered again after failing in the other run.")
    only_here = len({i.key for i in a.items} - {i.key for i in b.items})
    only_there = len({i.key for i in b.items} - {i.key for i in a.items})
    said.append(
        f"{counted(only_here, 'item')} in this report only, {counted(only_there, 'item')} in "
        "the other only."
    )
    return " ".join(said)


COMPARE_REPORTS = register_tool(
    ToolConfig(
        name="compare_reports",
        description="Compare two reports of the stream on the page: counts side by side, "
        "each source's outcome (one that failed in either run), items in one report and not "
        "the other, focus-area and organisation group counts, and the publication timeline. "
        "Defaults: the report on the page against the stream's previous report.",
        input_schema=input_schema(CompareArgs),
        executor=compare_reports,
        category="streams",
        is_global=False,
        command="compare",
        command_summary="Compare this report with the stream's previous report",
    )
)


def build_context(context: ChatContext) -> str:
    report = context.extras().get("report")
    ids = [f"Stream id: {context.stream_id}; report id: {context.report_id}."]
    shown = [f"The report: {pairs(report)}."] if isinstance(report, dict) and report else []
    return page_context(
        "stream report",
        "It shows one monitoring run's report of a research stream: counts, each source's "
        "outcome (a failed source with its message), the publication timeline, and the new "
        "items ranked with a one-line reason or grouped by focus area and organisation.",
        context,
        extra_lines=[*ids, *shown],
        known_extras=["report"],
        guidance=[
            "Asked what changed since the last run, or how two reports differ, call "
            "compare_reports (by default this report against the previous one) and explain "
            "the differences: a source that failed, new items, groups that grew or shrank.",
            "The user can export the items as RIS, BibTeX or CSV from the links on the page.",
        ],
    )


register_page(
    PAGE,
    context_builder=build_context,
    tools=[COMPARE_REPORTS.name],
    client_actions=[OPEN_SEARCH_PAGE, OPEN_LIBRARY, OPEN_TRIALS],
)
