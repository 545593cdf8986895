"""Literature tools: search PubMed, search every source at once (the user's library
included), and read one article in full by its identifier."""

from __future__ import annotations

import asyncio
import datetime as dt
from collections.abc import AsyncIterator, Mapping, Sequence
from itertools import zip_longest
from typing import Any

from pydantic import Field, model_validator

from scholarstream.chat._builtin_payloads import (
    ARTICLE_DETAILS,
    LITERATURE_SEARCH_RESULTS,
    PUBMED_SEARCH_RESULTS,
    ArticleDetails,
    LiteratureSearchResults,
    PubMedArticle,
    PubMedSearchResults,
    SourceOutcome,
)
from scholarstream.chat.continuity import QuerySent
from scholarstream.chat.tools._registry import (
    ToolConfig,
    ToolContext,
    ToolProgress,
    ToolResult,
    register_tool,
)
from scholarstream.chat.tools.builtin._arguments import ToolArguments, input_schema, parse_arguments
from scholarstream.chat.tools.builtin._lookup import ACCEPTED, lookup
from scholarstream.chat.tools.builtin._records import (
    author_names,
    first_listing,
    list_entry,
    literature_article,
    record_detail,
    record_text,
    snippet,
)
from scholarstream.chat.tools.builtin._user_words import (
    NOTHING_FOUND,
    counted,
    failure,
    failures,
    listed,
    quoted,
    source_label,
)
from scholarstream.errors import (
    InvalidInputError,
    NotFoundError,
    SourceCredentialsError,
    SourceError,
    SourceQueryError,
    SourceUnavailableError,
)
from scholarstream.papers import Paper, Record, record_sources
from scholarstream.papers.dedup import RecordDeduplicator
from scholarstream.sources import (
    MultiSearchResult,
    SearchQuery,
    SourceStatus,
    connectivity_scope,
    source_names,
)
from scholarstream.sources.library import LibrarySource

LIBRARY = "library"
PUBMED = "pubmed"


class _YearRange(ToolArguments):
    year_from: int | None = Field(
        default=None, ge=1000, le=2999, description="Only works published in or after this year."
    )
    year_to: int | None = Field(
        default=None, ge=1000, le=2999, description="Only works published in or before this year."
    )

    @model_validator(mode="after")
    def _in_order(self) -> _YearRange:
        if self.year_from and self.year_to and self.year_from > self.year_to:
            raise ValueError("year_from is after year_to; swap them")
        return self

    def dates(self) -> dict[str, dt.date | None]:
        return {
            "date_from": dt.date(self.year_from, 1, 1) if self.year_from else None,
            "date_to": dt.date(self.year_to, 12, 31) if self.year_to else None,
        }


# --- search_pubmed -----------------------------------------------------------------------


class PubMedArgs(_YearRange):
    query: str = Field(
        min_length=1,
        max_length=4000,
        description="A PubMed query: Boolean AND/OR/NOT, quoted phrases, field tags such as "
        '[tiab], [mh], [pt], [au]; e.g. (EGFR[mh] OR "epidermal growth factor receptor"'
        "[tiab]) AND resistan*[tiab]",
    )
    max_results: int = Field(default=10, ge=1, le=50, description="Articles to return.")


async def search_pubmed(params: dict[str, Any], ctx: ToolContext) -> ToolResult:
    args = parse_arguments("search_pubmed", PubMedArgs, params)
    with connectivity_scope():  # offline: one attempt, not four
        page = await ctx.services.sources.get(PUBMED).search(
            SearchQuery(text=args.query, limit=args.max_results, **args.dates())
        )
    papers = [r for r in page.records if isinstance(r, Paper) and r.ids.pmid]
    papers = papers[: args.max_results]
    data = PubMedSearchResults(
        query=args.query,
        total=page.total,
        articles=[
            PubMedArticle(
                pmid=paper.ids.pmid or "",
                doi=paper.ids.doi,
                title=paper.title,
                authors=author_names(paper),
                journal=paper.venue,
                year=paper.year,
                abstract_snippet=snippet(paper.abstract),
                url=f"https://pubmed.ncbi.nlm.nih.gov/{paper.ids.pmid}/",
            )
            for paper in papers
        ],
    )
    total = "an unknown number of" if page.total is None else f"{page.total:,}"
    lines = [f"PubMed: {total} articles match {args.query!r}; the first {len(papers)}:"]
    lines += [list_entry(ctx.evidence.key_for(paper, "pubmed"), paper) for paper in papers]
    if not papers:
        lines.append("No articles. Suggest a broader query (fewer AND terms, synonyms, MeSH).")
    lines.append("get_article_details reads one article in full (by PMID).")
    return ToolResult(
        text="\n".join(lines),
        for_user=_pubmed_for_user(ctx, args.query, page.total, len(papers)),
        payload=PUBMED_SEARCH_RESULTS.payload(data.model_dump(mode="json")),
        queries=[
            QuerySent(
                tool="search_pubmed",
                query=args.query,
                source=PUBMED,
                results=page.total if page.total is not None else len(papers),
            )
        ],
    )


def _pubmed_for_user(ctx: ToolContext, query: str, total: int | None, shown: int) -> str:
    if not shown:
        return NOTHING_FOUND.format(query=quoted(query))
    where = source_label(ctx, PUBMED)
    if total is None or total <= shown:
        return f"Found {counted(shown, 'article')} in {where}."
    return f"Found {counted(total, 'article')} in {where}; the first {shown} are listed."


def _pubmed_failed(error: Exception, arguments: Mapping[str, Any], ctx: ToolContext) -> str:
    return failure([source_label(ctx, PUBMED)], error)


# --- search_literature -------------------------------------------------------------------

SEARCHABLE = sorted({*source_names(), LIBRARY})


class LiteratureArgs(_YearRange):
    query: str = Field(
        min_length=1,
        max_length=2000,
        description="Plain words (each source reads them in its own syntax; the library "
        "has no Boolean operators).",
    )
    sources: list[str] | None = Field(
        default=None,
        min_length=1,
        description="Sources to search; default: the server's default sources. 'library' "
        "is the user's own imported records.",
        json_schema_extra={"items": {"type": "string", "enum": [*SEARCHABLE]}, "uniqueItems": True},
    )
    max_results: int = Field(default=5, ge=1, le=25, description="Articles per source.")

    @model_validator(mode="after")
    def _known_sources(self) -> LiteratureArgs:
        unknown = sorted(set(self.sources or ()) - set(SEARCHABLE))
        if unknown:
            raise ValueError(f"unknown sources {unknown}; sources: {', '.join(SEARCHABLE)}")
        return self


_FAILURES: dict[str, type[SourceError]] = {
    SourceUnavailableError.code: SourceUnavailableError,
    SourceCredentialsError.code: SourceCredentialsError,
    SourceQueryError.code: SourceQueryError,
}


def _everything_failed(statuses: Sequence[SourceStatus]) -> SourceError:
    codes = {status.error_code or "" for status in statuses}
    kind = _FAILURES.get(codes.pop(), SourceError) if len(codes) == 1 else SourceError
    # Each source's message names it ("PubMed could not connect, ...").
    reasons = "; ".join((s.error or f"{s.source} failed").rstrip(".") for s in statuses)
    return kind(
        ", ".join(s.source for s in statuses),
        f"Every source failed ({reasons}).",
        hint="Try again in a few minutes, search other sources, or search the library "
        "(sources=['library']), which works offline.",
    )


async def _searching(
    ctx: ToolContext, names: Sequence[str], query: SearchQuery
) -> AsyncIterator[SourceStatus | MultiSearchResult]:
    """Each source's status as it finishes, then the whole result."""
    done: asyncio.Queue[SourceStatus] = asyncio.Queue()
    task = asyncio.create_task(
        ctx.services.sources.search_each(
            [(name, query) for name in names],
            local={LIBRARY: LibrarySource(ctx.services.library, ctx.owner_id)},
            on_done=done.put_nowait,
            # Offline, the library answers even when it was not asked for.
            when_offline=[] if LIBRARY in names else [(LIBRARY, query)],
        )
    )
    getter: asyncio.Future[SourceStatus] | None = None
    try:
        while not task.done():
            getter = asyncio.ensure_future(done.get())
            await asyncio.wait({getter, task}, return_when=asyncio.FIRST_COMPLETED)
            if not getter.done():
                break
            yield getter.result()
        while not done.empty():
            yield done.get_nowait()
        yield await task
    finally:
        # The caller may stop listening early (the chat was cancelled): stop searching too.
        for pending in (getter, task):
            if pending is not None and not pending.done():
                pending.cancel()


def _by_source(result: MultiSearchResult) -> list[list[Record]]:
    """The records of each source that worked (they come concatenated in status order)."""
    lists: list[list[Record]] = []
    start = 0
    for status in result.statuses:
        if status.ok:
            lists.append(result.records[start : start + status.returned])
            start += status.returned
    return lists


def _interleaved(lists: list[list[Record]], limit: int) -> list[Record]:
    """Rank 1 of every source, then rank 2 ...: no source crowds out the others."""
    rows = zip_longest(*(records[:limit] for records in lists))
    return [record for row in rows for record in row if record is not None]


def _status_line(status: SourceStatus) -> str:
    if status.unreachable:
        return f"- {status.source}: not reached (offline)"
    if not status.ok:
        hint = f" {status.hint}" if status.hint else ""
        return f"- {status.source}: FAILED ({status.error_code}): {status.error}{hint}"
    total = "?" if status.total is None else f"{status.total:,}"
    return f"- {status.source}: {total} matches, {status.returned} returned"


async def search_literature(
    params: dict[str, Any], ctx: ToolContext
) -> AsyncIterator[ToolProgress | ToolResult]:
    args = parse_arguments("search_literature", LiteratureArgs, params)
    names = list(dict.fromkeys(args.sources or ctx.services.search.default_sources))
    query = SearchQuery(text=args.query, limit=args.max_results, **args.dates())
    labels = ", ".join(source_label(ctx, name) for name in names)
    yield ToolProgress(stage="searching", message=f"Searching {labels}", progress=0.0)
    result: MultiSearchResult | None = None
    finished = 0
    async for event in _searching(ctx, names, query):
        if isinstance(event, MultiSearchResult):
            result = event
            continue
        finished += 1
        unit = "record" if event.returned == 1 else "records"
        outcome = "failed" if not event.ok else f"{event.returned} {unit}"
        yield ToolProgress(
            stage="searching",
            message=_capitalised(f"{source_label(ctx, event.source)}: {outcome}"),
            progress=round(0.9 * min(finished, len(names)) / len(names), 3),
        )
    if result is None:
        raise RuntimeError("the multi-source search ended without its result")
    if not any(status.ok for status in result.statuses):
        raise _everything_failed(result.statuses)
    yield ToolProgress(stage="merging", message="Merging duplicates", progress=0.95)
    considered = _interleaved(_by_source(result), args.max_results)
    records = await RecordDeduplicator().deduplicate(considered)
    # What was searched: the sources asked for and, offline, the library searched instead.
    searched = {status.source for status in result.statuses}
    articles = [
        literature_article(r, sources=[s for s in record_sources(r) if s in searched])
        for r in records
    ]
    earlier = ctx.evidence.shown
    keys = [
        ctx.evidence.key_for(record, (article.sources or ["unknown"])[0])
        for record, article in zip(records, articles, strict=True)
    ]
    first = first_listing(earlier, keys)
    data = LiteratureSearchResults(
        query=args.query,
        sources=_outcomes(result),
        total_found=len(considered),
        articles=[article for article, new in zip(articles, first, strict=True) if new],
        already_listed=first.count(False),
        failures=_failure_sentences(ctx, names, result),
    )
    lines = [f"Searched {len(names)} sources for {args.query!r}:"]
    if result.notice:
        lines.insert(0, result.notice)
    lines += [_status_line(status) for status in result.statuses]
    if result.offline:
        lines.append(f"Tell the user once, in these words: {result.notice}")
    elif result.failed:
        lines.append("Tell the user which sources failed and why: these results are incomplete.")
    lines.append(
        f"{len(records)} distinct works after merging {len(considered)} records, each "
        "under its citation key:"
    )
    lines += [
        list_entry(key, record, extra=f"found in {', '.join(article.sources)}")
        for key, record, article in zip(keys, records, articles, strict=True)
    ]
    yield ToolResult(
        text="\n".join(lines),
        for_user=_literature_for_user(ctx, names, args.query, result, len(records)),
        payload=LITERATURE_SEARCH_RESULTS.payload(data.model_dump(mode="json")),
        queries=[
            QuerySent(
                tool="search_literature",
                query=args.query,
                source=status.source,
                results=status.total if status.total is not None else status.returned,
                ok=status.ok,
            )
            for status in result.statuses
        ],
    )


def _literature_for_user(
    ctx: ToolContext, asked: Sequence[str], query: str, result: MultiSearchResult, works: int
) -> str:
    """The sources asked for, in words: what they found ("Found 12 papers in PubMed,
    OpenAlex and your library."), or that nothing was found, and each failed source with
    what to do. Offline, the notice says so once, and the library searched instead of the
    sources (when it was not asked for) is its card, not a count."""
    said = [result.notice] if result.notice else []
    answered = [s for s in result.statuses if s.ok and s.source in asked]
    where = [source_label(ctx, s.source) for s in answered if s.returned]
    if where:
        empty = [source_label(ctx, s.source) for s in answered if not s.returned]
        none = f" (none in {listed(empty, 'or')})" if empty else ""
        said.append(f"Found {counted(works, 'paper')} in {listed(where)}{none}.")
    elif answered:
        said.append(NOTHING_FOUND.format(query=quoted(query)))
    failed = [s for s in result.failed if not (result.offline and s.unreachable)]
    said += failures(
        [(source_label(ctx, s.source), s.error_code, s.cause) for s in failed],
        answered=len(answered),
    )
    return " ".join(said)


def _failure_sentences(
    ctx: ToolContext, asked: Sequence[str], result: MultiSearchResult
) -> list[str]:
    """Every failed source for the results card, grouped by what happened; "the other
    sources answered" counts only sources that were asked for (offline, the library
    searched instead is not one)."""
    answered = sum(1 for s in result.statuses if s.ok and s.source in asked)
    return failures(
        [(source_label(ctx, s.source), s.error_code, s.cause) for s in result.failed],
        answered=answered,
    )


def _literature_failed(error: Exception, arguments: Mapping[str, Any], ctx: ToolContext) -> str:
    """Every source failed (the search raised): which, and what to do."""
    names = arguments.get("sources") or ctx.services.search.default_sources
    labels = [source_label(ctx, name) for name in dict.fromkeys(names)]
    return f"None of the sources answered: {failure(labels, error)}"


def _outcomes(result: MultiSearchResult) -> list[SourceOutcome]:
    return [
        SourceOutcome(
            source=s.source,
            ok=s.ok,
            total=s.total,
            returned=s.returned,
            error_code=s.error_code,
            error=s.error,
            hint=s.hint,
        )
        for s in result.statuses
    ]


# --- get_article_details -----------------------------------------------------------------


class DetailsArgs(ToolArguments):
    identifier: str = Field(
        min_length=1,
        max_length=300,
        description=f"The article: {ACCEPTED}. Prefixes such as 'PMID:' or 'doi:' are fine.",
    )


async def get_article_details(params: dict[str, Any], ctx: ToolContext) -> ToolResult:
    args = parse_arguments("get_article_details", DetailsArgs, params)
    identifier = args.identifier.strip()
    outcome = await lookup(ctx, [identifier])
    if outcome.unrecognised:
        raise InvalidInputError(
            f"{identifier!r} is not an identifier get_article_details can read.",
            hint=f"Give {ACCEPTED}; to find an article by its title, search for it.",
        )
    if identifier in outcome.failed:
        raise outcome.failed[identifier]
    if identifier in outcome.missing:
        raise NotFoundError(
            f"No record for {identifier!r} in {outcome.missing[identifier]}.",
            hint="Check the identifier, or search for the article by its title.",
        )
    found = outcome.found[identifier]
    data = ArticleDetails(
        identifier=identifier,
        source=found.source,
        library_id=found.library_id,
        article=record_detail(found.record),
    )
    where = "the user's library" if found.library_id else found.source
    label = source_label(ctx, LIBRARY if found.library_id else found.source)
    return ToolResult(
        text=f"From {where}, citation key [{ctx.evidence.key_for(found.record, found.source)}]:\n"
        f"{record_text(found.record)}",
        for_user=f"From {label}: {quoted((found.record.title or identifier).rstrip('.'))}.",
        payload=ARTICLE_DETAILS.payload(data.model_dump(mode="json")),
    )


def _details_failed(error: Exception, arguments: Mapping[str, Any], ctx: ToolContext) -> str:
    identifier = quoted(str(arguments.get("identifier", "")))
    if isinstance(error, NotFoundError):
        return f"Nothing was found for {identifier}: check the identifier, or search by title."
    if isinstance(error, InvalidInputError):
        return f"{identifier} is not an identifier that can be looked up: give {ACCEPTED}."
    where = error.source if isinstance(error, SourceError) else "The source"
    return failure([source_label(ctx, where)], error)


# --- registration ------------------------------------------------------------------------

SEARCH_PUBMED = register_tool(
    ToolConfig(
        name="search_pubmed",
        description="Search PubMed (biomedical literature, MEDLINE) with PubMed's own query "
        "syntax. Returns the total number of matches and the first articles: PMID, DOI, "
        "title, authors, journal, year and the start of the abstract.",
        input_schema=input_schema(PubMedArgs),
        executor=search_pubmed,
        category="research",
        payload_type=PUBMED_SEARCH_RESULTS.name,
        command="pubmed",
        command_argument="query",
        query_argument="query",
        command_summary="Search PubMed (its query syntax works: AND, OR, [mh], [tiab])",
        failure_for_user=_pubmed_failed,
        label="Search PubMed",
    )
)

SEARCH_LITERATURE = register_tool(
    ToolConfig(
        name="search_literature",
        description="Search several literature sources at once (by default the server's "
        f"default sources; available: {', '.join(SEARCHABLE)}), the user's own library "
        "included. Duplicates are merged, each article lists the sources that returned "
        "it, and failed sources are reported with their error: tell the user about them.",
        input_schema=input_schema(LiteratureArgs),
        executor=search_literature,
        category="research",
        payload_type=LITERATURE_SEARCH_RESULTS.name,
        command="search",
        command_argument="query",
        query_argument="query",
        command_summary="Search the literature sources and your library at once",
        failure_for_user=_literature_failed,
    )
)

GET_ARTICLE_DETAILS = register_tool(
    ToolConfig(
        name="get_article_details",
        description=f"Read one article in full (abstract, authors, venue, MeSH terms, "
        f"links, retraction notice) by its identifier: {ACCEPTED}.",
        input_schema=input_schema(DetailsArgs),
        executor=get_article_details,
        category="research",
        payload_type=ARTICLE_DETAILS.name,
        command="details",
        command_argument="identifier",
        command_summary="Show one article in full, by its PMID, DOI, arXiv id, NCT id or "
        "library record id",
        failure_for_user=_details_failed,
    )
)


def _capitalised(text: str) -> str:
    return text[:1].upper() + text[1:]
