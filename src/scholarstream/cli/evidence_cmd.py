"""``scholarstream evidence QUESTION``: the evidence pack for a question (issue 24), as a
numbered reference list with where each record came from and which sources failed."""

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from scholarstream.cli._choices import EXPORT_FORMATS
from scholarstream.cli._files import check_writable, written_file
from scholarstream.cli.context import UserOption, resolve_user, run_with_runtime
from scholarstream.errors import InvalidInputError

if TYPE_CHECKING:
    from scholarstream.grounding.evidence import EvidenceResult, SourceSearched
    from scholarstream.runtime import Runtime

MAX_SIZE = 100  # scholarstream.grounding.evidence.MAX_PACK_SIZE
_EXAMPLE = 'scholarstream evidence "statins for primary prevention in older adults"'


def register(app: typer.Typer) -> None:
    app.command("evidence")(evidence)


def evidence(
    ctx: typer.Context,
    question: Annotated[
        str, typer.Argument(help="The research question to find the evidence for.")
    ],
    size: Annotated[
        int | None,
        typer.Option(
            "--size",
            "-n",
            min=1,
            max=MAX_SIZE,
            help="Records in the pack (default: the grounding.pack_size setting, 20).",
        ),
    ] = None,
    sources: Annotated[
        list[str] | None,
        typer.Option(
            "--sources",
            "-s",
            help="Sources to search, repeatable or comma-separated (pubmed,openalex); "
            "default: the configured ones. Your library is searched too.",
        ),
    ] = None,
    no_library: Annotated[
        bool, typer.Option("--no-library", help="Leave your library out.")
    ] = False,
    offline: Annotated[
        bool,
        typer.Option("--offline", help="Deterministic search skills even if a model is set."),
    ] = False,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print the pack and the search as JSON.")
    ] = False,
    export: Annotated[
        str | None,
        typer.Option("--export", help=f"Also write the pack as {'|'.join(EXPORT_FORMATS)}."),
    ] = None,
    output: Annotated[
        Path | None,
        typer.Option(
            "--output", "--out", "-o", help="File for --export (default: evidence.<ext>)."
        ),
    ] = None,
    user: UserOption = "local",
) -> None:
    """Find the evidence for a question: search your library and the sources, merge
    duplicates, rank by relevance and meaning, and print the best as a reference list."""
    from pydantic import ValidationError

    from scholarstream.grounding.evidence import EvidenceFinder, EvidenceRequest
    from scholarstream.papers.formats import get_format
    from scholarstream.validation_messages import explain

    if not question.strip():
        raise InvalidInputError(
            "The question is empty.", hint=f"Say what you want the evidence for: {_EXAMPLE}"
        )
    if output is not None and export is None:
        raise InvalidInputError(
            "--output names a file but no format was asked for.",
            hint=f"Add --export with one of: {', '.join(EXPORT_FORMATS)}.",
        )
    if output is not None:
        check_writable(output, "--output")
    file_format = get_format(export, for_export=True) if export else None
    names = [n.strip() for value in sources or [] for n in value.split(",") if n.strip()]
    if sources is not None and not names:
        raise InvalidInputError(
            "--sources names no source.",
            hint="Name one, e.g. --sources pubmed, or leave the option out.",
        )
    try:
        request = EvidenceRequest(
            question=question,
            size=size,
            sources=names or None,
            library=not no_library,
            offline=offline,
        )
    except ValidationError as exc:
        raise InvalidInputError(
            f"Cannot look for that: {explain(exc, whole='the request')}.",
            hint=f"Correct the question or the options, e.g. {_EXAMPLE}",
        ) from exc

    async def work(runtime: "Runtime") -> "EvidenceResult":
        async with runtime.database.session() as session:
            owner = (await resolve_user(session, user)).id
        return await EvidenceFinder.for_runtime(runtime).find(owner, request)

    result = run_with_runtime(ctx, work)
    written = None
    if file_format is not None:
        assert file_format.write is not None  # get_format(for_export=True) guarantees it
        target = output or Path(f"evidence{file_format.export_extension}")
        papers = [item.paper for item in result.pack.items]
        with written_file(target) as handle:
            count = file_format.write(papers, handle)
        written = f"Wrote {count} records to {target} ({file_format.label})."
    if as_json:
        typer.echo(result.model_dump_json(indent=2))
        if written:
            typer.echo(written, err=True)
        return
    from rich.console import Console

    console = Console()
    _print(console, result)
    if written:
        console.print(written)


def _print(console: Any, result: "EvidenceResult") -> None:
    from rich.markup import escape

    from scholarstream.grounding.core import reference_line

    search, pack = result.search, result.pack
    labels = {source.source: source.label for source in search.sources}
    for notice in search.notices:
        console.print("[yellow]![/]", escape(notice))
    console.print(f"[bold]Evidence for:[/] {escape(pack.question)}")
    if pack.items:
        console.print()
    for item in pack.items:
        console.print(escape(reference_line(item)), highlight=False)
        where = ", ".join(labels.get(s, s) for s in result.sources_of(item.key))
        console.print(f"    found in {escape(where or item.origin)}", style="dim", highlight=False)
    console.print()
    if not pack.items:
        console.print(
            "No evidence was found for this question. Try other or fewer words, other "
            "sources (--sources), or import records into your library (scholarstream import)."
        )
    console.print("[bold]Searched:[/]")
    queries = {query.source: query.query for query in search.queries}
    for source in search.sources:
        console.print(f"  {_source_line(source)}", highlight=False)
        if source.ok and source.source in queries:
            console.print(f"    query: {escape(queries[source.source])}", style="dim")
    for fallback in search.fallbacks:
        console.print("[yellow]![/]", escape(fallback.message))
    ranked = (
        "the model's judgement of relevance"
        if search.scored_by == "model"
        else "the words and concepts they share with the question"
    )
    if search.by_meaning:
        ranked += ", and by meaning"
    console.print(
        f"{search.found} records found, {search.distinct} distinct after merging duplicates, "
        f"{search.related} related to the question; the pack holds the best "
        f"{len(pack.items)}, ranked by {ranked}.",
        highlight=False,
    )


def _source_line(source: "SourceSearched") -> str:
    from rich.markup import escape

    label = escape(source.label)
    if source.unreachable:
        return f"{label}: not reached; this machine appears to be offline."
    if not source.ok:
        said = " ".join(part for part in (source.error, source.hint) if part)
        return f"{label}: [red]failed[/]. {escape(said or 'It could not be searched just now.')}"
    total = "" if source.total is None else f" (of {source.total:,} matches)"
    unit = "record" if source.returned == 1 else "records"
    return f"{label}: {source.returned} {unit}{total}, {source.in_pack} in the pack."
