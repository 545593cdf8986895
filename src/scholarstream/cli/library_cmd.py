"""``library search|show|delete|merges|split|find-duplicates``: the local library from the
terminal."""

import json
from typing import TYPE_CHECKING, Annotated

import typer
from rich.markup import escape
from rich.table import Table

from scholarstream.cli.context import UserOption, console, resolve_user, run_with_runtime

if TYPE_CHECKING:
    from scholarstream.runtime import Runtime
    from scholarstream.sources.library import (
        DuplicateScan,
        LibraryItem,
        LibraryMergeInfo,
        LibraryPage,
        MergedRecord,
        MergePage,
        SplitResult,
    )

library_app = typer.Typer(help="Your local library of imported records.", no_args_is_help=True)


def _authors(item: "LibraryItem") -> str:
    from scholarstream.papers import Paper

    record = item.record
    if not isinstance(record, Paper) or not record.authors:
        return record.sponsor or "" if not isinstance(record, Paper) else ""
    first = record.authors[0].family or record.authors[0].name
    return first + (" et al." if len(record.authors) > 1 else "")


@library_app.command("search")
def library_search(
    ctx: typer.Context,
    text: Annotated[str, typer.Argument(help="Words to rank by; empty lists newest first.")] = "",
    year_from: Annotated[int | None, typer.Option("--year-from")] = None,
    year_to: Annotated[int | None, typer.Option("--year-to")] = None,
    publication_type: Annotated[
        str | None, typer.Option("--type", help="Publication type, e.g. 'Review'.")
    ] = None,
    limit: Annotated[int, typer.Option(min=1, max=500, help="Records per page, 1 to 500.")] = 20,
    offset: Annotated[int, typer.Option(min=0, help="Records to skip (the next page).")] = 0,
    as_json: Annotated[bool, typer.Option("--json", help="Print the page as JSON.")] = False,
    user: UserOption = "local",
) -> None:
    """Search title, abstract, keywords and MeSH terms, ranked by words and meaning."""
    from scholarstream.sources.library import LibraryQuery

    query = LibraryQuery(
        text=text,
        year_from=year_from,
        year_to=year_to,
        publication_type=publication_type,
        limit=limit,
        offset=offset,
    )

    async def search(runtime: "Runtime") -> "LibraryPage":
        async with runtime.database.session() as session:
            owner = (await resolve_user(session, user)).id
        return await runtime.library.search(owner, query)

    page = run_with_runtime(ctx, search)
    if as_json:
        typer.echo(page.model_dump_json(indent=2))
        return
    table = Table(title=f"{page.total} records match" if text else f"{page.total} records")
    table.add_column("identifier", no_wrap=True)
    table.add_column("year")
    table.add_column("first author", max_width=20)
    table.add_column("title", overflow="fold", ratio=1)
    table.add_column("score")
    for item in page.items:
        table.add_row(
            item.reference,
            str(item.record.year or ""),
            _authors(item),
            item.record.title,
            f"{item.score:.2f}" if item.score is not None else "",
        )
    console.print(table)
    shown_to = page.offset + len(page.items)
    if shown_to < page.total:
        console.print(f"Showing {page.offset + 1}-{shown_to}; next page: --offset {shown_to}")


_REFERENCE_HELP = "The record's identifier as `library search` lists it: a DOI, PMID:…, NCT…"
Reference = Annotated[str, typer.Argument(help=_REFERENCE_HELP, metavar="IDENTIFIER")]


@library_app.command("show")
def library_show(ctx: typer.Context, reference: Reference, user: UserOption = "local") -> None:
    """Print one record as JSON."""

    async def show(runtime: "Runtime") -> "LibraryItem":
        async with runtime.database.session() as session:
            owner = (await resolve_user(session, user)).id
        return await runtime.library.find(owner, reference)

    item = run_with_runtime(ctx, show)
    typer.echo(json.dumps(item.model_dump(mode="json", exclude_none=True), indent=2))


@library_app.command("delete")
def library_delete(ctx: typer.Context, reference: Reference, user: UserOption = "local") -> None:
    """Remove one record from the library."""

    async def delete(runtime: "Runtime") -> str:
        async with runtime.database.session() as session:
            owner = (await resolve_user(session, user)).id
        item = await runtime.library.find(owner, reference)
        await runtime.library.delete(owner, item.id)
        return item.record.title

    title = run_with_runtime(ctx, delete)
    console.print(f"Deleted “{title}”.")


_ID_LABELS = {"doi": "DOI", "pmid": "PMID", "pmcid": "PMCID", "arxiv_id": "arXiv"}


def _named(side: "MergedRecord") -> str:
    ids = side.identifiers
    known = [
        f"{name.upper()} {ids[name]}"
        for name in ("doi", "pmid", "pmcid", "arxiv_id")
        if name in ids
    ]
    return " · ".join(known) or (side.source_file or "")


def _merge_table(title: str, merges: "list[LibraryMergeInfo]") -> Table:
    table = Table(title=title)
    table.add_column("merge id", no_wrap=True)
    table.add_column("kept record", overflow="fold", ratio=1)
    table.add_column("merged copy", overflow="fold", ratio=1)
    table.add_column("what matched")
    for merge in merges:
        table.add_row(
            str(merge.id),
            escape(f"{merge.kept.title}\n{_named(merge.kept)}"),
            escape(f"{merge.absorbed.title}\n{_named(merge.absorbed)}"),
            escape(merge.evidence),
        )
    return table


@library_app.command("merges")
def library_merges(
    ctx: typer.Context,
    limit: Annotated[int, typer.Option(min=1, max=500, help="Merges per page, 1 to 500.")] = 50,
    offset: Annotated[int, typer.Option(min=0, help="Merges to skip (the next page).")] = 0,
    as_json: Annotated[bool, typer.Option("--json", help="Print the page as JSON.")] = False,
    user: UserOption = "local",
) -> None:
    """List the duplicates merged into other records, newest first, with what matched."""

    async def merges(runtime: "Runtime") -> "MergePage":
        async with runtime.database.session() as session:
            owner = (await resolve_user(session, user)).id
        return await runtime.library.merges(owner, offset=offset, limit=limit)

    page = run_with_runtime(ctx, merges)
    if as_json:
        typer.echo(page.model_dump_json(indent=2))
        return
    if page.total == 0:
        console.print("No merged duplicates in your library.")
        return
    console.print(_merge_table(f"{page.total} merged duplicates", page.items))
    shown_to = page.offset + len(page.items)
    if shown_to < page.total:
        console.print(f"Showing {page.offset + 1}-{shown_to}; next page: --offset {shown_to}")
    console.print("Undo a merge with `scholarstream library split MERGE_ID`.")


@library_app.command("split")
def library_split(
    ctx: typer.Context,
    merge_id: Annotated[
        str, typer.Argument(help="The merge id `library merges` lists.", metavar="MERGE_ID")
    ],
    user: UserOption = "local",
) -> None:
    """Undo one merge: the merged copy becomes its own record again, and the two records
    are never merged again."""
    import uuid

    from scholarstream.errors import InvalidInputError

    try:
        merge = uuid.UUID(merge_id.strip())
    except ValueError as exc:
        raise InvalidInputError(
            f"{merge_id} is not a merge id.",
            hint="Copy the id from the first column of `scholarstream library merges`.",
        ) from exc

    async def split(runtime: "Runtime") -> "SplitResult":
        async with runtime.database.session() as session:
            owner = (await resolve_user(session, user)).id
        return await runtime.library.split(owner, merge)

    result = run_with_runtime(ctx, split)
    console.print(
        f"Split: “{escape(result.restored.record.title)}” ({escape(result.restored.reference)}) "
        f"is its own record again, apart from “{escape(result.kept.record.title)}” "
        f"({escape(result.kept.reference)}). They will not be merged again."
    )


@library_app.command("find-duplicates")
def library_find_duplicates(
    ctx: typer.Context,
    as_json: Annotated[bool, typer.Option("--json", help="Print the result as JSON.")] = False,
    user: UserOption = "local",
) -> None:
    """Compare the whole library and merge the copies it already holds (each into the
    oldest record of its work). Every merge can be undone with `library split`."""

    async def scan(runtime: "Runtime") -> "DuplicateScan":
        async with runtime.database.session() as session:
            owner = (await resolve_user(session, user)).id
        return await runtime.library.find_duplicates(owner)

    result = run_with_runtime(ctx, scan)
    if as_json:
        typer.echo(result.model_dump_json(indent=2))
        return
    if not result.merged:
        console.print(f"Compared {result.checked} records: no duplicates found.")
        return
    works = "work" if result.groups == 1 else "works"
    console.print(
        f"Compared {result.checked} records: merged {result.merged} duplicates of "
        f"{result.groups} {works}."
    )
    console.print(_merge_table("Merges made", result.merges))
    console.print("Undo a merge with `scholarstream library split MERGE_ID`.")


def register(app: typer.Typer) -> None:
    app.add_typer(library_app, name="library")
