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
from scholarstream.chat.tools import ToolConfig, ToolContext, ToolResult, register_tool
from scholarstream.chat.tools.builtin import ToolArguments, input_schema, parse_arguments
from scholarstream.errors import InvalidInputError
from scholarstream.streams.monitoring import ReportStore, compare_text, load_pair, parse_id

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


async def compare_reports(params: dict[str, Any], ctx: ToolContext) -> ToolResult:
    args = parse_arguments("compare_reports", CompareArgs, params)
    if ctx.chat.stream_id is None:
        raise InvalidInputError(
            "No stream is open, so there are no reports to compare.",
            hint="Open a report of a stream (Streams → a stream → a report).",
        )
    report = args.report_id or ctx.chat.report_id
    if report is None:
        raise InvalidInputError(
            "No report is named and none is open.", hint="Give report_id, or open a report."
        )
    stream_id = parse_id(ctx.chat.stream_id, "Stream")
    other: uuid.UUID | None = None
    if args.other_report_id is not None:
        other = parse_id(args.other_report_id, "other_report_id")
    this, that = await load_pair(
        ReportStore(ctx.services.database),
        ctx.owner_id,
        stream_id,
        parse_id(report, "report_id"),
        other,
    )
    return ToolResult(text=compare_text(this, that))


COMPARE_REPORTS = register_tool(
    ToolConfig(
        name="compare_reports",
        description="Compare two reports of the stream on the page: counts side by side, "
        "each source's outcome (one that failed in either run), items in one report and not "
        "the other, focus-area and competitor group counts, and the publication timeline. "
        "Defaults: the report on the page against the stream's previous report.",
        input_schema=input_schema(CompareArgs),
        executor=compare_reports,
        category="streams",
        is_global=False,
        command="compare",
        command_argument="other_report_id",
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
        "items ranked with a one-line reason or grouped by focus area and competitor.",
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
