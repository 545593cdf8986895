"""``import FILE...``: bring reference files into the local library."""

import asyncio
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, BinaryIO

import typer
from rich.markup import escape
from rich.table import Table

from scholarstream.cli._choices import IMPORT_FORMATS
from scholarstream.cli.context import (
    UserOption,
    console,
    err_console,
    resolve_user,
    run_with_runtime,
)
from scholarstream.errors import InvalidInputError, ScholarStreamError

if TYPE_CHECKING:
    from rich.progress import Progress, TaskID

    from scholarstream.runtime import Runtime
    from scholarstream.sources.library import ImportReport

MAX_PROBLEMS_SHOWN = 20
SUMMARY_COLUMNS = (
    "file",
    "format",
    "added",
    "merged",
    "copies in file",
    "already in library",
    "skipped",
)
"""The counts: records added; merged into a record already in the library; merged into
another record of the same file; already in the library exactly; skipped (malformed)."""


def import_files(
    ctx: typer.Context,
    files: Annotated[list[Path], typer.Argument(help="Files to import (.gz works too).")],
    format_name: Annotated[
        str | None,
        typer.Option("--format", help="Format of every file; detected from content if omitted."),
    ] = None,
    index: Annotated[
        bool,
        typer.Option(
            "--index/--no-index",
            help="Wait while the new records are embedded for search by meaning (the "
            "default); --no-index returns at once and leaves that to the server or the next "
            "library search.",
        ),
    ] = True,
    user: UserOption = "local",
) -> None:
    """Import PubMed XML, MEDLINE/.nbib, RIS, BibTeX, EndNote XML, CSV or JSON files.

    Malformed records are reported (file, record number, line) and skipped. A copy of a
    record already in the library (same DOI, PMID, PMCID or arXiv id, or the same work by
    title, authors, year and venue) is merged into it, and so is a copy inside the file;
    `library merges` lists the merges and `library split` undoes one.
    """
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    missing = [str(f) for f in files if not f.is_file()]
    if missing:
        raise InvalidInputError(
            f"Not a file: {', '.join(missing)}.", hint="Check the paths; nothing was imported."
        )

    async def run(runtime: "Runtime") -> "tuple[list[ImportReport], list[tuple[Path, str]]]":
        async with runtime.database.session() as session:
            owner = (await resolve_user(session, user)).id
        reports: list[ImportReport] = []
        failures: list[tuple[Path, str]] = []
        with Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            TextColumn("{task.percentage:>3.0f}%  {task.fields[records]} records"),
            TimeElapsedColumn(),
            console=err_console,
            transient=True,
        ) as progress:
            for path in files:
                task = progress.add_task(escape(path.name), total=path.stat().st_size, records=0)
                with path.open("rb") as stream:
                    try:
                        report = await runtime.library.import_stream(
                            owner,
                            stream,
                            path.name,
                            format_name=format_name,
                            progress=_progress_of(progress, task, stream),
                        )
                    except ScholarStreamError as exc:
                        # One unreadable file must not cost the others.
                        failures.append((path, str(exc)))
                        continue
                    finally:
                        progress.remove_task(task)
                reports.append(report)
            if any(r.imported for r in reports):
                if index:
                    await _follow_semantic_index(runtime, owner, progress)
                elif runtime.library.semantic.available:
                    err_console.print(
                        "Search by meaning covers the new records once they are embedded: "
                        "the next library search (web, API or command line) starts that.",
                        highlight=False,
                    )
        return reports, failures

    reports, failures = run_with_runtime(ctx, run)
    _print_summary(reports)
    for path, problem in failures:
        # The message names the file already, as a rule; when it does not, say which.
        said = problem if path.name in problem else f"{path}: {problem}"
        err_console.print(f"[bold red]Error:[/] {escape(said)}", highlight=False)
    if failures:
        raise typer.Exit(1)


async def _follow_semantic_index(
    runtime: "Runtime", owner: "uuid.UUID", progress: "Progress"
) -> None:
    """Shows the background build of the semantic index until it ends. Each batch is saved
    as it is done: an interrupted build goes on at the next search of the library."""
    status = await runtime.library.semantic_status(owner)
    task = progress.add_task("Semantic index", total=status.total, records=status.embedded)
    while runtime.library.semantic.building(owner):
        progress.update(task, completed=status.embedded, records=status.embedded)
        await asyncio.sleep(0.5)
        status = await runtime.library.semantic_status(owner)
    progress.remove_task(task)
    for notice in (status.problem, status.ranking_note):
        if notice:
            err_console.print(escape(notice), highlight=False)


def _progress_of(progress: "Progress", task: "TaskID", stream: BinaryIO) -> Callable[[int], None]:
    """Advances the file's bar to the bytes read so far (the file's size is the total)."""

    def advance(handled: int) -> None:
        progress.update(task, completed=stream.tell(), records=handled)

    return advance


def _format_label(name: str) -> str:
    """The label a format is known by (``RIS``), the id when it is not one we know."""
    from scholarstream.papers.formats import get_format

    try:
        return get_format(name).label
    except InvalidInputError:
        return name


def _print_summary(reports: "list[ImportReport]") -> None:
    if not reports:
        return
    rows = [
        [
            escape(r.file),
            _format_label(r.format),
            *(
                f"{count:,}"
                for count in (
                    r.imported,
                    r.merged,
                    r.in_file_duplicates,
                    r.already_present,
                    r.skipped,
                )
            ),
        ]
        for r in reports
    ]
    # Fits 80 columns: each count is as wide as its longest heading word or number (the
    # headings wrap), and a long file name wraps instead of being cut.
    table = Table(title="Import", show_edge=False)
    for number, column in enumerate(SUMMARY_COLUMNS):
        cells = [row[number] for row in rows]
        if column == "file":
            table.add_column(column, min_width=min(max(map(len, cells)), 18), overflow="fold")
        elif column == "format":
            table.add_column(column, overflow="fold")
        else:
            wide = max([*map(len, column.split()), *map(len, cells)])
            table.add_column(column, justify="right", width=wide)
    for row in rows:
        table.add_row(*row)
    console.print(table)
    if any(r.merged or r.in_file_duplicates for r in reports):
        console.print(
            "Merged: copies of a record already in your library, or of another record of "
            "the same file (copies in file), now one record each with every identifier and "
            "file. "
            "See them with `scholarstream library merges`; undo one with "
            "`scholarstream library split ID`."
        )
    for r in reports:
        for problem in r.problems[:MAX_PROBLEMS_SHOWN]:
            where = f"record {problem.record_number}"
            if problem.line is not None:
                where += f", line {problem.line}"
            # File names and messages quote the file's own text: never Rich markup.
            err_console.print(
                f"[yellow]Skipped[/] {escape(f'{r.file} ({where}): {problem.message}')}",
                highlight=False,
            )
        hidden = r.skipped - min(len(r.problems), MAX_PROBLEMS_SHOWN)
        if hidden > 0:
            err_console.print(f"… and {hidden} more skipped in {escape(r.file)}.", highlight=False)


def register(app: typer.Typer) -> None:
    app.command(
        "import",
        help="Import reference files into your library "
        f"(formats: {', '.join(IMPORT_FORMATS) or 'see docs'}).",
    )(import_files)
