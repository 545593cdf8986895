"""``export --format F [--query WORDS] [--out FILE]``: the library, or what a search finds,
as a reference file."""

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from scholarstream.cli._files import check_writable, written_file
from scholarstream.cli.context import UserOption, err_console, resolve_user, run_with_runtime
from scholarstream.cli.library_labels_cmd import (
    CollectionOption,
    NoteOption,
    TagOption,
    TypeOption,
    YearFrom,
    YearTo,
    advice,
    library_query,
    records,
)

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
        typer.Option(
            "--query", help="Search words: export every record that has them, best first."
        ),
    ] = "",
    related: Annotated[
        bool,
        typer.Option(
            "--related",
            help="With --query: also export the records related by meaning (they lack the "
            "words), after the others.",
        ),
    ] = False,
    year_from: YearFrom = None,
    year_to: YearTo = None,
    publication_type: TypeOption = None,
    collection: CollectionOption = None,
    tag: TagOption = None,
    has_note: NoteOption = None,
    user: UserOption = "local",
) -> None:
    """Export your library, or the records a search finds (optionally only some years, one
    publication type, a collection, a tag, the records with a note). When nothing
    matches, nothing is written and the command fails, leaving an existing --out file as
    it was."""
    from scholarstream.papers.formats import get_format
    from scholarstream.sources.library import NothingMatchedError

    file_format = get_format(format_name, for_export=True)
    if out is not None:
        check_writable(out, "--out")

    async def export(runtime: "Runtime") -> int:
        async with runtime.database.session() as session:
            owner = (await resolve_user(session, user)).id
        query = await library_query(
            runtime,
            owner,
            text=search,
            year_from=year_from,
            year_to=year_to,
            publication_type=publication_type,
            collection=collection,
            tag=tag,
            has_note=has_note,
            related=related,
        )
        try:
            prepared = await runtime.library.prepare_export(owner, query=query)
        except NothingMatchedError as exc:
            raise exc.told(advice()) from None
        if out is None:
            return await prepared.write(file_format.name, sys.stdout)
        with written_file(out) as handle:
            return await prepared.write(file_format.name, handle)

    count = run_with_runtime(ctx, export)
    err_console.print(
        f"Exported {records(count)} as {file_format.label}" + (f" to {out}." if out else ".")
    )


def register(app: typer.Typer) -> None:
    app.command("export")(export_library)
