"""``screening create|list|status|export``: screening projects from the terminal (screen
the records in the web UI's focused view, or over the API). ``status`` prints your
progress and the PRISMA 2020 counts; ``export`` writes the records with their decisions
(RIS, BibTeX, CSV) or the PRISMA diagram (SVG, PNG) and its counts (CSV). A project, a
search run, a stream or a report is named by its whole id or by its first characters, as the
lists show them.

The features are imported by the commands that use them: ``--help`` imports none."""

import json
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.markup import escape
from rich.table import Table

from scholarstream.cli._files import check_writable
from scholarstream.cli._tables import find_id, list_table, short_id
from scholarstream.cli.context import UserOption, console, resolve_user, run_with_runtime
from scholarstream.cli.library_labels_cmd import records
from scholarstream.errors import InvalidInputError

if TYPE_CHECKING:
    from scholarstream.runtime import Runtime
    from scholarstream.screening import PrismaCounts, Progress, Project, ProjectList

screening_app = typer.Typer(
    help="Screening projects: create, list, status with PRISMA counts, export.",
    no_args_is_help=True,
)

EXPORTS = ("ris", "bibtex", "csv", "prisma-svg", "prisma-png", "prisma-csv")
_EXTENSIONS = {
    "ris": ".ris",
    "bibtex": ".bib",
    "csv": ".csv",
    "prisma-svg": ".svg",
    "prisma-png": ".png",
    "prisma-csv": ".csv",
}
JsonOption = Annotated[bool, typer.Option("--json", help="Print JSON instead of tables.")]
ProjectArgument = Annotated[
    str,
    typer.Argument(
        metavar="PROJECT",
        help="The project's id, or its first characters ('scholarstream screening list').",
    ),
]


def register(app: typer.Typer) -> None:
    app.add_typer(screening_app, name="screening")


async def _owner(runtime: "Runtime", user: str) -> uuid.UUID:
    async with runtime.database.session() as session:
        return (await resolve_user(session, user)).id


async def _project_id(runtime: "Runtime", owner: uuid.UUID, text: str) -> uuid.UUID:
    """The project ``text`` names: its whole id, or a prefix no other of the user's projects
    (those they review too) shares, as 'screening list' shows them."""
    from scholarstream.screening import screening_service

    async def listed() -> list[uuid.UUID]:
        return [p.id for p in (await screening_service(runtime).list(owner)).projects]

    return await find_id(
        text, listed, what="screening project", listed_by="scholarstream screening list"
    )


async def _resolve_source(runtime: "Runtime", owner: uuid.UUID, source: dict[str, Any]) -> None:
    """The ids of ``source`` (``_source``) made whole: a search run's, a stream's and its
    report's may be given by their first characters, as their lists show them."""
    from scholarstream.search import SearchRunStore
    from scholarstream.streams import StreamStore
    from scholarstream.streams.monitoring import ReportStore

    if source["kind"] == "search_run":

        async def runs() -> list[uuid.UUID]:
            return [r.id for r in await SearchRunStore(runtime.database).list(owner, limit=10_000)]

        source["run_id"] = await find_id(
            source["run_id"], runs, what="search run", listed_by="scholarstream search runs"
        )
    elif source["kind"] == "stream_report":

        async def streams() -> list[uuid.UUID]:
            return [s.id for s in await StreamStore(runtime.database).list(owner)]

        stream_id = await find_id(
            source["stream_id"], streams, what="stream", listed_by="scholarstream streams list"
        )

        async def reports() -> list[uuid.UUID]:
            return [r.id for r in await ReportStore(runtime.database).list(owner, stream_id)]

        source["stream_id"] = stream_id
        source["report_id"] = await find_id(
            source["report_id"],
            reports,
            what="report",
            listed_by=f"scholarstream streams reports {short_id(stream_id)}",
        )


def _source(
    run: str | None, stream_report: str | None, library_query: str | None, collection: str | None
) -> dict[str, Any]:
    given = [
        name
        for name, value in (
            ("--run", run),
            ("--stream-report", stream_report),
            ("--library-query", library_query),
            ("--collection", collection),
        )
        if value is not None
    ]
    if len(given) != 1:
        raise InvalidInputError(
            "Name where the records come from, once: --run, --stream-report, "
            "--library-query or --collection."
            + (f" You gave {' and '.join(given)}." if given else ""),
            hint='e.g. scholarstream screening create "My review" --library-query "migraine" '
            '--exclude "Not a randomised trial"',
        )
    if run is not None:
        return {"kind": "search_run", "run_id": run}
    if stream_report is not None:
        stream_id, slash, report_id = stream_report.partition("/")
        if not (slash and stream_id.strip() and report_id.strip()):
            raise InvalidInputError(
                f"'{stream_report}' does not name a stream's report.",
                hint="Give --stream-report STREAM/REPORT, each an id as 'scholarstream streams "
                "list' and 'scholarstream streams reports STREAM' show them.",
            )
        return {"kind": "stream_report", "stream_id": stream_id, "report_id": report_id}
    if collection is not None:
        return {"kind": "library", "collection": collection}
    return {"kind": "library", "query": library_query or ""}


@screening_app.command("create")
def create(
    ctx: typer.Context,
    name: Annotated[
        str,
        typer.Argument(help="The project's name: one none of your projects has (any case)."),
    ],
    run: Annotated[
        str | None,
        typer.Option(
            "--run",
            help="A search run's id, or its first characters ('scholarstream search runs'): "
            "screen its results.",
        ),
    ] = None,
    stream_report: Annotated[
        str | None,
        typer.Option(
            "--stream-report",
            help="STREAM/REPORT, ids or their first characters: screen a report's items.",
        ),
    ] = None,
    library_query: Annotated[
        str | None,
        typer.Option(
            "--library-query",
            help='Screen the library records these words find ("": every record).',
        ),
    ] = None,
    collection: Annotated[
        str | None,
        typer.Option("--collection", help="Screen a library collection (its name or id)."),
    ] = None,
    question: Annotated[str, typer.Option("--question", help="The review question.")] = "",
    keyword: Annotated[
        list[str] | None,
        typer.Option(
            "--keyword", "-k", help="A keyword to highlight (repeatable; random* truncates)."
        ),
    ] = None,
    include: Annotated[
        list[str] | None, typer.Option("--include", help="An inclusion criterion (repeatable).")
    ] = None,
    exclude: Annotated[
        list[str] | None,
        typer.Option("--exclude", help="An exclusion criterion, a reason to exclude (repeatable)."),
    ] = None,
    as_json: JsonOption = False,
    user: UserOption = "local",
) -> None:
    """Create a screening project from a search run, a stream report, a library search or
    a library collection, with its criteria and keywords."""
    from pydantic import ValidationError

    from scholarstream.screening import ProjectSettings, RecordSource, screening_service
    from scholarstream.validation_messages import explain

    source = _source(run, stream_report, library_query, collection)

    async def work(runtime: "Runtime") -> "tuple[Project, str | None]":
        from pydantic import TypeAdapter

        owner = await _owner(runtime, user)
        if "collection" in source:
            found = await runtime.library.labels.find_collection(owner, source.pop("collection"))
            source["collection_id"] = str(found.id)
        await _resolve_source(runtime, owner, source)
        try:
            settings = ProjectSettings(
                name=name,
                question=question,
                keywords=keyword or [],
                inclusion_criteria=include or [],
                exclusion_criteria=exclude or [],
            )
            spec = TypeAdapter(RecordSource).validate_python(source)
        except ValidationError as exc:
            raise InvalidInputError(explain(exc), hint="Check the options and try again.") from None
        project = await screening_service(runtime).create(owner, settings, spec)
        return project, runtime.settings.server.public_url

    project, public_url = run_with_runtime(ctx, work)
    if as_json:
        typer.echo(project.model_dump_json(indent=2))
        return
    console.print(
        f"Created [bold]{escape(project.name)}[/bold] with {records(project.record_count)}."
    )
    console.print(f"Project id: {project.id}")
    console.print(screen_it(project.id, public_url), soft_wrap=True)


def screen_it(project_id: uuid.UUID, public_url: str | None) -> str:
    """Where to screen the project: a link on ``server.public_url`` when it is set. Else the
    page's path on the server, whose address the CLI cannot know (``serve --port`` may differ
    from the settings), and how to get a whole link. One line, printed without wrapping: a
    link cut in two does not open."""
    path = f"/screening/{project_id}/screen"
    if public_url:
        return f"Screen it in the web UI at {public_url.rstrip('/')}{path}"
    return (
        f"Screen it in the web UI: open {path} on your ScholarStream server's address "
        "(set server.public_url to get a whole link here)."
    )


@screening_app.command("list")
def list_projects(
    ctx: typer.Context, as_json: JsonOption = False, user: UserOption = "local"
) -> None:
    """Your screening projects (and those you review), newest first."""
    from scholarstream.screening import screening_service

    async def work(runtime: "Runtime") -> "ProjectList":
        return await screening_service(runtime).list(await _owner(runtime, user))

    projects = run_with_runtime(ctx, work)
    if as_json:
        typer.echo(projects.model_dump_json(indent=2))
        return
    if not projects.projects:
        console.print("No screening projects yet: 'scholarstream screening create --help'.")
        return
    # Fits 80 columns: the name takes what the others leave; where the records came from
    # is cut short (``screening status`` says it in full).
    columns = ["id", "name", "screened", "from", "created"]
    table = list_table("Screening projects", columns, title_column="name")
    for p in projects.projects:
        table.add_row(
            short_id(p.id),
            escape(p.name),
            f"{p.screened:,} / {p.record_count:,}",
            escape(_cut(p.origin.label, ORIGIN_WIDTH)),
            p.created_at.strftime("%Y-%m-%d"),
        )
    console.print(table)


ORIGIN_WIDTH = 18  # characters of a project's origin a list line shows


def _cut(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1].rstrip() + "\N{HORIZONTAL ELLIPSIS}"


def _n(value: int | None) -> str:
    return "not recorded" if value is None else f"{value:,}"


@screening_app.command("status")
def status(
    ctx: typer.Context,
    project: ProjectArgument,
    as_json: JsonOption = False,
    user: UserOption = "local",
) -> None:
    """Your progress and the stopping aid, and (as the owner) the PRISMA 2020 counts."""
    from scholarstream.screening import screening_service

    async def work(runtime: "Runtime") -> "tuple[Project, Progress, PrismaCounts | None]":
        service = screening_service(runtime)
        owner = await _owner(runtime, user)
        project_id = await _project_id(runtime, owner, project)
        found = await service.get(owner, project_id)
        counts = await service.prisma(owner, project_id) if found.your_role == "owner" else None
        return found, await service.progress(owner, project_id), counts

    found, progress, counts = run_with_runtime(ctx, work)
    if as_json:
        typer.echo(
            json.dumps(
                {
                    "project": found.model_dump(mode="json"),
                    "progress": progress.model_dump(mode="json", exclude={"series"}),
                    "prisma": counts.model_dump(mode="json") if counts else None,
                },
                indent=2,
            )
        )
        return
    console.print(f"[bold]{found.name}[/bold]: {found.origin.label}")
    console.print(
        f"You screened {progress.screened:,} of {progress.total:,} records: "
        f"{progress.included:,} included, {progress.excluded:,} excluded, {progress.maybe:,} maybe."
    )
    console.print(f"Screened since your last include: {progress.since_last_include:,}.")
    console.print(f"Relevant records left: {progress.relevant_left.explanation}")
    if counts is None:
        return
    table = Table(title="PRISMA 2020 flow")
    table.add_column("Step", overflow="fold")
    table.add_column("Records", justify="right")
    for source in counts.identified:
        table.add_row(f"Identified: {source.source}", _n(source.records))
    table.add_row("Duplicate records removed", _n(counts.duplicates_removed))
    table.add_row("Records screened", _n(counts.screened))
    table.add_row("Records excluded", _n(counts.excluded))
    for reason in counts.excluded_reasons:
        table.add_row(f"  {reason.reason}", _n(reason.records))
    for kind, value in counts.undecided.items():
        table.add_row(f"Not decided yet: {kind}", _n(value))
    table.add_row("Reports sought for retrieval", _n(counts.sought))
    table.add_row("Reports not retrieved", _n(counts.not_retrieved))
    table.add_row("Reports assessed for eligibility", _n(counts.assessed))
    table.add_row("Reports excluded", _n(counts.fulltext_excluded))
    for reason in counts.fulltext_reasons:
        table.add_row(f"  {reason.reason}", _n(reason.records))
    table.add_row("Studies included in review", _n(counts.studies_included))
    table.add_row("Reports of included studies", _n(counts.reports_included))
    console.print(table)


@screening_app.command("export")
def export(
    ctx: typer.Context,
    project: ProjectArgument,
    format_name: Annotated[
        str,
        typer.Option("--format", "-f", help=f"One of: {', '.join(EXPORTS)}."),
    ] = "ris",
    output: Annotated[
        Path | None,
        typer.Option(
            "--output",
            "--out",
            "-o",
            help="The file (default: named after the project, as the web downloads are, "
            "e.g. triptans-screening.ris or triptans-prisma.svg).",
        ),
    ] = None,
    user: UserOption = "local",
) -> None:
    """Write the records with their decisions (RIS, BibTeX, CSV), or the PRISMA diagram
    (SVG, PNG) or its counts (CSV)."""
    from scholarstream.screening import (
        download_name,
        prisma_csv,
        prisma_diagram,
        render_png,
        render_svg,
        screening_service,
    )

    if format_name not in EXPORTS:
        raise InvalidInputError(
            f"'{format_name}' is not an export format.", hint=f"Use one of: {', '.join(EXPORTS)}."
        )
    if output is not None:
        check_writable(output, "--output")
    kind = "prisma" if format_name.startswith("prisma-") else "screening"

    async def work(runtime: "Runtime") -> tuple[bytes, str, str]:
        service = screening_service(runtime)
        owner = await _owner(runtime, user)
        project_id = await _project_id(runtime, owner, project)
        found = await service.get(owner, project_id)
        name = download_name(found.name, kind, _EXTENSIONS[format_name]).ascii
        if not format_name.startswith("prisma-"):
            text, count = await service.export(owner, project_id, format_name)
            return text.encode(), f"{count:,} records", name
        counts = await service.prisma(owner, project_id)
        title = f"PRISMA 2020 flow diagram: {found.name}"
        if format_name == "prisma-png":
            return render_png(prisma_diagram(counts, title)), "the PRISMA diagram", name
        if format_name == "prisma-svg":
            svg = render_svg(prisma_diagram(counts, title)).encode()
            return svg, "the PRISMA diagram", name
        return ("\ufeff" + prisma_csv(counts)).encode(), "the PRISMA counts", name

    body, what, named = run_with_runtime(ctx, work)
    target = output or Path(named)
    if output is None:
        check_writable(target, "--output")
    partial = target.with_name(target.name + ".partial")
    try:
        partial.write_bytes(body)
        partial.replace(target)
    except OSError as exc:
        partial.unlink(missing_ok=True)
        raise InvalidInputError(
            f"Could not write {target}: {exc.strerror or 'the system refused'}.",
            hint="Check that the folder exists and that you may write there.",
        ) from None
    console.print(f"Wrote {what} to {target}")
