"""Searching the user's own library (the records they imported); works offline."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import Field, model_validator

from scholarstream.chat._builtin_payloads import (
    LITERATURE_SEARCH_RESULTS,
    LiteratureSearchResults,
    SourceOutcome,
)
from scholarstream.chat.continuity import QuerySent
from scholarstream.chat.tools._registry import ToolConfig, ToolContext, ToolResult, register_tool
from scholarstream.chat.tools.builtin._arguments import ToolArguments, input_schema, parse_arguments
from scholarstream.chat.tools.builtin._records import (
    first_listing,
    list_entry,
    literature_article,
)
from scholarstream.chat.tools.builtin._user_words import YOUR_LIBRARY, counted, failure, quoted
from scholarstream.sources.library import LibraryQuery

SOURCE = "library"


class LibraryArgs(ToolArguments):
    query: str = Field(
        default="",
        max_length=2000,
        description="Plain words or a question, ranked by words (BM25 over title, abstract, "
        "keywords and MeSH terms) and meaning together (no Boolean operators). Empty: the "
        "newest records.",
    )
    year_from: int | None = Field(default=None, ge=1000, le=2999)
    year_to: int | None = Field(default=None, ge=1000, le=2999)
    publication_type: str | None = Field(
        default=None, min_length=1, max_length=200, description='e.g. "Review".'
    )
    max_results: int = Field(default=10, ge=1, le=50, description="Records to return.")
    offset: int = Field(default=0, ge=0, description="Records to skip (for the next page).")

    @model_validator(mode="after")
    def _in_order(self) -> LibraryArgs:
        if self.year_from and self.year_to and self.year_from > self.year_to:
            raise ValueError("year_from is after year_to; swap them")
        return self


async def search_library(params: dict[str, Any], ctx: ToolContext) -> ToolResult:
    args = parse_arguments("search_library", LibraryArgs, params)
    page = await ctx.services.library.search(
        ctx.owner_id,
        LibraryQuery(
            text=args.query,
            year_from=args.year_from,
            year_to=args.year_to,
            publication_type=args.publication_type,
            offset=args.offset,
            limit=args.max_results,
        ),
    )
    earlier = ctx.evidence.shown
    keys = [ctx.evidence.key_for(item.record, "library") for item in page.items]
    listed_first = first_listing(earlier, keys)
    data = LiteratureSearchResults(
        query=args.query,
        sources=[
            SourceOutcome(
                source=SOURCE,
                ok=True,
                total=page.total,
                returned=len(page.items),
                error_code=None,
                error=None,
                hint=None,
            )
        ],
        total_found=len(page.items),
        articles=[
            literature_article(item.record, sources=[SOURCE], library_id=str(item.id))
            for item, new in zip(page.items, listed_first, strict=True)
            if new
        ],
        already_listed=listed_first.count(False),
    )
    what = f"match {args.query!r}" if args.query.strip() else "are in it (newest first)"
    lines = [f"The user's library: {page.total:,} records {what}."]
    if page.items:
        first = args.offset + 1
        lines.append(f"Records {first} to {args.offset + len(page.items)}:")
        lines += [
            list_entry(key, item.record, extra=f"library id {item.id}")
            for key, item in zip(keys, page.items, strict=True)
        ]
        lines.append("get_article_details with a library id reads that record in full.")
    elif page.total == 0:
        lines.append(
            "Nothing found. The library holds only what the user imported (Library page): "
            "try other words, or search_literature for the live sources."
        )
    return ToolResult(
        text="\n".join(lines),
        for_user=_for_user(args, page.total, len(page.items)),
        payload=LITERATURE_SEARCH_RESULTS.payload(data.model_dump(mode="json")),
        queries=[
            QuerySent(tool="search_library", query=args.query, source=SOURCE, results=page.total)
        ],
    )


def _for_user(args: LibraryArgs, total: int, shown: int) -> str:
    records = counted(total, "record")
    if not args.query.strip():
        if not total:
            return "Your library is empty: import records on the Library page."
        return f"Your library holds {records}; the newest are listed."
    if not total:
        return f"Nothing in your library matches {quoted(args.query)}."
    if not shown:
        return f"Your library has {records} matching; none after the first {args.offset:,}."
    if args.offset or shown < total:
        span = f"{args.offset + 1} to {args.offset + shown}"
        return f"Found {records} in your library; records {span} are listed."
    return f"Found {records} in your library."


def _failed(error: Exception, arguments: Mapping[str, Any], ctx: ToolContext) -> str:
    return failure([YOUR_LIBRARY], error)


SEARCH_LIBRARY = register_tool(
    ToolConfig(
        name="search_library",
        description="Search the user's own library: the records they imported (PubMed, "
        "RIS, BibTeX, EndNote, CSV files). Works offline. Returns each record's library id, "
        "title, authors, venue, year and the start of the abstract.",
        input_schema=input_schema(LibraryArgs),
        executor=search_library,
        category="library",
        payload_type=LITERATURE_SEARCH_RESULTS.name,
        command="library",
        command_argument="query",
        query_argument="query",
        command_summary="Search your library (the records you imported)",
        failure_for_user=_failed,
    )
)
