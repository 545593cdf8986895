"""``scholarstream search``: a paper search with checkpoints in the terminal, kept as a
search run (listed by ``search runs``, exported again by ``search export RUN``, shown on
the web Search page); ``scholarstream search strategy``: the strategy a question gets,
without searching."""

import json
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from typer.core import TyperGroup

from scholarstream.cli._choices import EXPORT_FORMATS
from scholarstream.cli._files import check_writable, written_file
from scholarstream.cli._tables import list_table, resolve_id, short_id
from scholarstream.cli.context import UserOption, err_console, resolve_user, run_with_runtime
from scholarstream.cli.library_labels_cmd import records
from scholarstream.errors import InvalidInputError

if TYPE_CHECKING:
    from scholarstream.papers.formats import FileFormat
    from scholarstream.runtime import Runtime
    from scholarstream.search import SearchRun, SearchRunStore, SearchRunSummary, StrategyPreview
    from scholarstream.search.core import ExportSelection, PaperCollection

_RUN = "run"


class _SearchGroup(TyperGroup):
    """``search QUESTION`` runs a search (the ``run`` command); ``search strategy
    QUESTION`` shows the strategy. A first word that names no command is the question."""

    # ``ctx`` is the Click context of Typer's vendored Click, which Typer does not export.
    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        if args and args[0] not in self.commands and args[0] not in ctx.help_option_names:
            args = [_RUN, *args]
        return super().parse_args(ctx, args)


search_app = typer.Typer(
    cls=_SearchGroup,
    help="Search the literature (search QUESTION), or show a question's strategy "
    "(search strategy QUESTION).",
    no_args_is_help=True,
)


Question = Annotated[
    list[str], typer.Argument(help="What you are looking for, in your words, quoted or not.")
]


def register(app: typer.Typer) -> None:
    search_app.command(_RUN)(search)
    search_app.command("strategy")(strategy)
    search_app.command("runs")(search_runs)
    search_app.command("export")(search_export)
    app.add_typer(search_app, name="search")


ExportOption = Annotated[
    str | None,
    typer.Option(
        "--export",
        metavar="FORMAT",
        help=f"Write the final papers as {'|'.join(EXPORT_FORMATS)}.",
    ),
]
OnlyOption = Annotated[
    str,
    typer.Option(
        "--only", metavar="all|relevant", help="all, or relevant: only the papers you marked."
    ),
]


def _selection(only: str) -> "ExportSelection":
    if only not in ("all", "relevant"):
        raise InvalidInputError(f"--only {only!r} is unknown.", hint="Use all or relevant.")
    return "relevant" if only == "relevant" else "all"


def _nothing_to_export(collection: "PaperCollection", only: "ExportSelection") -> str | None:
    """Why an export of ``only`` would be empty (no file is written then), else None."""
    if not collection.papers:
        return "the search found no papers"
    if only == "relevant" and not any(p.label == "relevant" for p in collection.papers):
        return "no paper was marked relevant, and --only relevant exports only those"
    return None


def _export(
    collection: "PaperCollection",
    file_format: "FileFormat",
    target: Path,
    only: "ExportSelection",
    run_id: uuid.UUID | None,
) -> None:
    """Writes the export, or says why there is nothing to write and exits 1: never an
    empty file."""
    from rich.console import Console

    from scholarstream.search.core import export_collection

    reason = _nothing_to_export(collection, only)
    if reason is not None:
        again = (
            f" Mark papers in the review, or export them all: scholarstream search export "
            f"{short_id(run_id)} --format {file_format.name} --only all"
            if run_id is not None and collection.papers
            else ""
        )
        err_console.print(f"Nothing exported: {reason}.{again}", highlight=False)
        raise typer.Exit(1)
    with written_file(target) as handle:
        written = export_collection(collection, file_format.name, handle, only=only)
    Console().print(f"Wrote {written} records to {target} ({file_format.label}).", highlight=False)


def search(
    ctx: typer.Context,
    question: Question,
    source: Annotated[
        list[str] | None,
        typer.Option(
            "--source", "-s", help="A source to search (repeatable); default: configured."
        ),
    ] = None,
    yes: Annotated[
        bool, typer.Option("--yes", "-y", help="No checkpoints: approve the strategy and results.")
    ] = False,
    skip_strategy: Annotated[
        bool, typer.Option("--skip-strategy", help="Do not stop to confirm the strategy.")
    ] = False,
    max_iterations: Annotated[int | None, typer.Option(min=1, max=20)] = None,
    limit: Annotated[
        int | None, typer.Option("--limit", min=1, max=500, help="Results per source.")
    ] = None,
    offline: Annotated[
        bool, typer.Option("--offline", help="Deterministic skills even if a model is set.")
    ] = False,
    export: ExportOption = None,
    out: Annotated[
        Path | None,
        typer.Option("--out", metavar="FILE", help="File for --export (default: search.<ext>)."),
    ] = None,
    only: OnlyOption = "all",
    user: UserOption = "local",
) -> None:
    """Search the literature: confirm the strategy, review and mark results, iterate,
    then export the collection. The run is kept: 'search export RUN' exports it again."""
    from rich.console import Console
    from rich.markup import escape

    from scholarstream.cli._search_terminal import PausingHandler, TerminalProgress
    from scholarstream.papers.formats import get_format
    from scholarstream.search import (
        SearchOptions,
        SearchRequest,
        SearchRunStore,
        SearchServices,
        SearchWorkflow,
    )

    asked = " ".join(question)
    if not asked.strip():
        raise InvalidInputError(
            "The search question is empty.",
            hint='Say what you are looking for: scholarstream search "statins for primary '
            'prevention in older adults"',
        )
    selection = _selection(only)
    if yes and selection == "relevant" and export:
        raise InvalidInputError(
            "--only relevant exports the papers you mark relevant, and --yes shows you no "
            "results to mark.",
            hint="Leave out --yes to review and mark the results, or export every paper "
            "with --only all.",
        )
    file_format = get_format(export, for_export=True) if export else None
    if out is not None:
        check_writable(out, "--out")
    options = SearchOptions(
        sources=source or None,
        strategy_checkpoint=not skip_strategy,
        results_per_source=limit,
        offline=offline,
    )
    console = Console()

    async def work(runtime: "Runtime") -> "SearchRun":
        async with runtime.database.session() as session:
            owner = (await resolve_user(session, user)).id
        progress = TerminalProgress(console)
        handler = None if yes else PausingHandler(console, progress)
        services = SearchServices(
            settings=runtime.settings.search,
            sources=runtime.sources,
            library=runtime.library,
            llm=runtime.llm,
            database=runtime.database,
        )
        workflow = SearchWorkflow.from_config(
            services,
            owner,
            checkpoint_handler=handler,
            max_iterations=max_iterations,
            options=options,
            observer=progress,
            offline=await runtime.models.offline_for_owner(runtime.database, owner),
        )
        try:
            collection = await workflow.run(asked)
        finally:
            progress.pause()
            # The AI steps that used their offline counterpart, once each (issue 22).
            for fallback in workflow.state.fallbacks:
                console.print("[yellow]![/]", escape(fallback.message))
        # Kept as a completed run, for 'search export', 'search runs' and the web page.
        request = SearchRequest(
            question=asked, max_iterations=max_iterations, **options.model_dump()
        )
        return await SearchRunStore(runtime.database).record(
            owner, request, collection, workflow.state
        )

    run = run_with_runtime(ctx, work)
    collection = run.collection
    assert collection is not None  # a recorded run is a completed one
    relevant = sum(1 for p in collection.papers if p.label == "relevant")
    console.print(
        f"[bold]Done:[/] {len(collection.papers)} papers"
        + (f", {relevant} marked relevant" if relevant else "")
        + ".",
        highlight=False,
    )
    run_id = short_id(run.id)
    console.print(
        f"Saved as search run {run_id}: 'scholarstream search export {run_id} --format ris' "
        f"exports it; the Search page shows it (/search?run={run.id}).",
        highlight=False,
        soft_wrap=True,  # a command to copy is never broken by the console
    )
    if file_format is not None:
        target = out or Path(f"search{file_format.export_extension}")
        _export(collection, file_format, target, selection, run.id)


async def _find_run(store: "SearchRunStore", owner: uuid.UUID, text: str) -> "SearchRun":
    """The run ``text`` names: its whole id or a prefix no other run of the user's shares."""
    try:
        run_id = uuid.UUID(text)
    except ValueError:
        listed = await store.list(owner, limit=10_000)
        run_id = resolve_id(
            text, (r.id for r in listed), what="search run", listed_by="scholarstream search runs"
        )
    return await store.get(owner, run_id)


def search_export(
    ctx: typer.Context,
    run_id: Annotated[
        str,
        typer.Argument(
            metavar="RUN",
            help="The run's id, or its first characters ('scholarstream search runs').",
        ),
    ],
    export_format: Annotated[
        str,
        typer.Option("--format", metavar="FORMAT", help=f"One of {', '.join(EXPORT_FORMATS)}."),
    ] = "ris",
    out: Annotated[
        Path | None,
        typer.Option("--out", metavar="FILE", help="Default: search-<run>.<ext>."),
    ] = None,
    only: OnlyOption = "all",
    user: UserOption = "local",
) -> None:
    """Export the papers of a past search run (all, or only those marked relevant)."""
    from scholarstream.papers.formats import get_format
    from scholarstream.search import SearchRunStore

    selection = _selection(only)
    file_format = get_format(export_format, for_export=True)
    if out is not None:
        check_writable(out, "--out")

    async def work(runtime: "Runtime") -> "SearchRun":
        async with runtime.database.session() as session:
            owner = (await resolve_user(session, user)).id
        return await _find_run(SearchRunStore(runtime.database), owner, run_id)

    run = run_with_runtime(ctx, work)
    if run.collection is None:
        raise InvalidInputError(
            f"Search run {short_id(run.id)} has no results yet ({run.status}).",
            hint="Export it once it has found papers; 'scholarstream search runs' shows where "
            "each run is.",
        )
    target = out or Path(f"search-{short_id(run.id)}{file_format.export_extension}")
    _export(run.collection, file_format, target, selection, run.id)


def search_runs(
    ctx: typer.Context,
    limit: Annotated[
        int, typer.Option("--limit", metavar="N", min=1, max=500, help="How many, newest first.")
    ] = 20,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
    user: UserOption = "local",
) -> None:
    """Your search runs, newest first: from here, the web Search page and the API."""
    from rich.console import Console
    from rich.markup import escape

    from scholarstream.search import SearchRunStore

    async def work(runtime: "Runtime") -> "list[SearchRunSummary]":
        async with runtime.database.session() as session:
            owner = (await resolve_user(session, user)).id
        return await SearchRunStore(runtime.database).list(owner, limit=limit)

    runs = run_with_runtime(ctx, work)
    if as_json:
        typer.echo(json.dumps({"runs": [r.model_dump(mode="json") for r in runs]}, indent=2))
        return
    if not runs:
        typer.echo('No searches yet: scholarstream search "QUESTION" starts one.')
        return
    table = list_table(
        records(len(runs), "search run"),
        ["id", "question", "status", "started"],
        title_column="question",
    )
    for summary in runs:
        table.add_row(
            short_id(summary.id),
            escape(summary.question),
            summary.status,
            f"{summary.created_at:%Y-%m-%d %H:%M}",
        )
    Console().print(table)


def strategy(
    ctx: typer.Context,
    question: Question,
    source: Annotated[
        list[str] | None,
        typer.Option(
            "--source", "-s", help="A source to show a query for (repeatable); default: configured."
        ),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the strategy as JSON.")] = False,
    offline: Annotated[
        bool,
        typer.Option("--offline", help="The rule-based builder even if a model is set."),
    ] = False,
    user: UserOption = "local",
) -> None:
    """Show the strategy a question gets without searching: each source's query, the
    concepts and their MeSH headings (how each term maps)."""
    from rich.console import Console

    from scholarstream.search import (
        LLMQueryBuilder,
        RuleQueryBuilder,
        SearchOptions,
        SearchServices,
        build_skills,
        preview_strategy,
    )

    asked = " ".join(question)
    if not asked.strip():
        raise InvalidInputError(
            "The question is empty.",
            hint='Say what you are looking for: scholarstream search strategy "gastric cancer '
            'staging by endoscopic ultrasound"',
        )
    options = SearchOptions(sources=source or None, offline=offline)

    async def work(runtime: "Runtime") -> "StrategyPreview":
        async with runtime.database.session() as session:
            owner = (await resolve_user(session, user)).id
        services = SearchServices(
            settings=runtime.settings.search,
            sources=runtime.sources,
            library=runtime.library,
            llm=runtime.llm,
            database=runtime.database,
        )
        no_model = await runtime.models.offline_for_owner(runtime.database, owner)
        parser, builder, *_ = build_skills(services, owner, options, offline=no_model)
        rules = builder.fallback if isinstance(builder, LLMQueryBuilder) else builder
        if not isinstance(rules, RuleQueryBuilder):  # build_skills gives one of the two
            raise TypeError(f"unexpected query builder {type(builder).__name__}")
        return await preview_strategy(asked, parser=parser, builder=builder, rules=rules)

    preview = run_with_runtime(ctx, work)
    if as_json:
        typer.echo(preview.model_dump_json(indent=2))
        return
    _print_strategy(Console(), preview)


def _print_strategy(console: "Any", preview: "StrategyPreview") -> None:
    from rich.markup import escape
    from rich.table import Table

    intent, found = preview.intent, preview.strategy
    console.print(f"[bold]Strategy[/] for: {escape(preview.question)}")
    built = "the model" if preview.builder == "model" else "the rule-based builder"
    console.print(f"Written by {built}.")
    concepts = Table(title="Concepts and MeSH", show_lines=False)
    concepts.add_column("concept")
    concepts.add_column("synonyms")
    concepts.add_column("MeSH (how it matched)")
    mesh = {m.concept.lower(): m for m in preview.mesh}
    for concept in intent.concepts:
        mapped = mesh.get(concept.term.lower())
        how = (
            "\n".join(escape(h.description) for h in mapped.headings)
            if mapped and mapped.headings
            else "no heading: searched as words"
        )
        concepts.add_row(escape(concept.term), escape(", ".join(concept.synonyms)), how)
    console.print(concepts)
    limits = [*intent.study_types, *intent.languages]
    if limits:
        console.print(f"Limits: {escape(', '.join(limits))}")
    if intent.exclude_terms:
        console.print(f"Excluded: {escape(', '.join(intent.exclude_terms))}")
    if found.date_from or found.date_to:
        start = found.date_from.isoformat() if found.date_from else "any date"
        end = found.date_to.isoformat() if found.date_to else "now"
        console.print(f"Published {start} to {end}.")
    queries = Table(title="Queries", show_lines=True)
    queries.add_column("source")
    queries.add_column("query")
    queries.add_column("filters")
    for query in found.queries:
        filters = ", ".join(f"{k}={v}" for k, v in query.filters.items())
        queries.add_row(escape(query.source), escape(query.query), escape(filters))
    console.print(queries)
    if found.rationale:
        console.print(f"[bold]Why:[/] {escape(found.rationale)}")
