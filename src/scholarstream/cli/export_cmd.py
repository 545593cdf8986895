"""``export --format F [--query WORDS] [--out FILE]``: the library, or what a search finds,
as a reference file."""

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from scholarstream.cli._files import check_writable, written_file
from scholarstream.cli.context import UserOption, err_console, resolve_user, run_with_runtime

if TYPE_CHECKING:
    from scholarstream.runtime import Runtime


def export_library(
    ctx: typer.Context,
    format_name: Annotated[str, typer.Option("--format", help="ris, bibtex, csv or json.")],
    out: Annotated[
        Path | None, typer.Option("--out", help="File to write (default: standard output).")
    ] = None,
    search: Annotated[
        str,
        typer.Option("--query", help="Search words: export every record they find, best first."),
    ] = "",
    year_from: Annotated[int | None, typer.Option("--year-from")] = None,
    year_to: Annotated[int | None, typer.Option("--year-to")] = None,
    publication_type: Annotated[str | None, typer.Option("--type")] = None,
    user: UserOption = "local",
) -> None:
    """Export your library, or the records a search finds (optionally only some years or
    one publication type)."""
    from scholarstream.papers.formats import get_format
    from scholarstream.sources.library import LibraryQuery

    file_format = get_format(format_name, for_export=True)
    query = LibraryQuery(
        text=search, year_from=year_from, year_to=year_to, publication_type=publication_type
    )
    if out is not None:
        check_writable(out, "--out")

    async def export(runtime: "Runtime") -> int:
        async with runtime.database.session() as session:
            owner = (await resolve_user(session, user)).id
        if out is None:
            return await runtime.library.export(owner, file_format.name, sys.stdout, query=query)
        with written_file(out) as handle:
            return await runtime.library.export(owner, file_format.name, handle, query=query)

    count = run_with_runtime(ctx, export)
    err_console.print(
        f"Exported {count} records as {file_format.label}" + (f" to {out}." if out else ".")
    )


def register(app: typer.Typer) -> None:
    app.command("export")(export_library)
