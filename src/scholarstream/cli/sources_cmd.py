"""``sources list`` and ``sources search SOURCE QUERY``: the literature sources, live."""

import datetime as dt
import json
from typing import TYPE_CHECKING, Annotated

import typer
from rich.table import Table

from scholarstream.cli.context import UserOption, console, resolve_user, run_with_runtime
from scholarstream.errors import InvalidInputError

if TYPE_CHECKING:
    from scholarstream.papers import Record
    from scholarstream.runtime import Runtime
    from scholarstream.sources import SearchPage, SourceInfo

sources_app = typer.Typer(help="Literature sources.", no_args_is_help=True)


@sources_app.command("list")
def sources_list(
    ctx: typer.Context,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Which sources exist, whether they are configured, and their API-key settings."""
    from scholarstream.sources.library import LIBRARY_INFO

    async def collect(runtime: "Runtime") -> "list[SourceInfo]":
        return [LIBRARY_INFO, *runtime.sources.infos()]

    infos = run_with_runtime(ctx, collect)
    if as_json:
        typer.echo(json.dumps([info.model_dump() for info in infos], indent=2))
        return
    table = Table()
    for column in ("source", "records", "ready", "API key", "rate limit", "filters"):
        table.add_column(column, overflow="fold")
    for info in infos:
        key = info.api_key if info.api_key == "none" else f"{info.api_key}: {info.api_key_setting}"
        table.add_row(
            info.name,
            info.record_kind,
            "yes" if info.configured else f"no: {info.problem or 'not configured'}",
            key,
            info.rate_limit,
            ", ".join(info.filters),
        )
    console.print(table)


def _parse_filters(values: list[str]) -> dict[str, str]:
    filters: dict[str, str] = {}
    for value in values:
        name, sep, content = value.partition("=")
        if not sep or not name:
            raise InvalidInputError(
                f"--filter {value!r} is not NAME=VALUE.", hint="e.g. --filter phase=PHASE3"
            )
        filters[name] = content
    return filters


def _row(record: "Record") -> tuple[str, str, str, str]:
    from scholarstream.papers import Paper

    if isinstance(record, Paper):
        ident = record.ids.doi or record.ids.pmid or record.ids.arxiv_id or ""
        first = record.authors[0].family or record.authors[0].name if record.authors else ""
        return ident, str(record.year or ""), first, record.title
    return record.ids.nct_id or "", record.status or "", record.sponsor or "", record.title


@sources_app.command("search")
def sources_search(
    ctx: typer.Context,
    source: Annotated[str, typer.Argument(help="A name from 'scholarstream sources list'.")],
    text: Annotated[str, typer.Argument(help="The query, in the source's own syntax.")],
    limit: Annotated[int, typer.Option(min=1, max=1000)] = 20,
    page_token: Annotated[str | None, typer.Option("--page", help="next_page_token.")] = None,
    date_from: Annotated[
        dt.datetime | None, typer.Option("--from", formats=["%Y-%m-%d"], help="YYYY-MM-DD")
    ] = None,
    date_to: Annotated[
        dt.datetime | None, typer.Option("--to", formats=["%Y-%m-%d"], help="YYYY-MM-DD")
    ] = None,
    filters: Annotated[
        list[str] | None, typer.Option("--filter", help="NAME=VALUE, repeatable.")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the page as JSON.")] = False,
    user: UserOption = "local",
) -> None:
    """Search one source live (the network), or 'library' offline."""
    from scholarstream.sources import SearchQuery
    from scholarstream.sources.library import LibrarySource

    query = SearchQuery(
        text=text,
        limit=limit,
        page_token=page_token,
        date_from=date_from.date() if date_from else None,
        date_to=date_to.date() if date_to else None,
        filters=_parse_filters(filters or []),
    )

    async def search(runtime: "Runtime") -> "SearchPage":
        async with runtime.database.session() as session:
            owner = (await resolve_user(session, user)).id
        local = {"library": LibrarySource(runtime.library, owner)}
        return await runtime.sources.resolve(source, local).search(query)

    page = run_with_runtime(ctx, search)
    if as_json:
        typer.echo(page.model_dump_json(indent=2, exclude_none=True))
        return
    total = f"{page.total} matches" if page.total is not None else "matches"
    table = Table(title=f"{source}: {total}")
    for column in ("id", "year/status", "first author/sponsor", "title"):
        table.add_column(column, overflow="fold")
    for record in page.records:
        table.add_row(*_row(record))
    console.print(table)
    if page.next_page_token:
        console.print(f"Next page: --page {page.next_page_token}")


def register(app: typer.Typer) -> None:
    app.add_typer(sources_app, name="sources")
