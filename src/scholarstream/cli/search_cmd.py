"""``scholarstream search``: a paper search with checkpoints in the terminal, and
``scholarstream search strategy``: the strategy a question gets, without searching."""

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from typer.core import TyperGroup

from scholarstream.cli._choices import EXPORT_FORMATS
from scholarstream.cli._files import check_writable, written_file
from scholarstream.cli.context import UserOption, resolve_user, run_with_runtime
from scholarstream.errors import InvalidInputError

if TYPE_CHECKING:
    from scholarstream.runtime import Runtime
    from scholarstream.search import StrategyPreview
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


Question = Annotated[str, typer.Argument(help="What you are looking for, in your words.")]


def register(app: typer.Typer) -> None:
    search_app.command(_RUN)(search)
    search_app.command("strategy")(strategy)
    app.add_typer(search_app, name="search")


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
    export: Annotated[
        str | None,
        typer.Option("--export", help=f"Write the final papers as {'|'.join(EXPORT_FORMATS)}."),
    ] = None,
    out: Annotated[
        Path | None, typer.Option("--out", help="File for --export (default: search.<ext>).")
    ] = None,
    only: Annotated[
        str, typer.Option("--only", help="all, or relevant: only the papers you marked.")
    ] = "all",
    user: UserOption = "local",
) -> None:
    """Search the literature: confirm the strategy, review and mark results, iterate,
    then export the collection."""
    from rich.console import Console
    from rich.markup import escape

    from scholarstream.cli._search_terminal import PausingHandler, TerminalProgress
    from scholarstream.papers.formats import get_format
    from scholarstream.search import SearchOptions, SearchServices, SearchWorkflow
    from scholarstream.search.core import export_collection

    if not question.strip():
        raise InvalidInputError(
            "The search question is empty.",
            hint='Say what you are looking for: scholarstream search "statins for primary '
            'prevention in older adults"',
        )
    if only not in ("all", "relevant"):
        raise InvalidInputError(f"--only {only!r} is unknown.", hint="Use all or relevant.")
    selection: ExportSelection = "relevant" if only == "relevant" else "all"
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

    async def work(runtime: "Runtime") -> "PaperCollection":
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
            return await workflow.run(question)
        finally:
            progress.pause()
            # The AI steps that used their offline counterpart, once each (issue 22).
            for fallback in workflow.state.fallbacks:
                console.print("[yellow]![/]", escape(fallback.message))

    collection = run_with_runtime(ctx, work)
    relevant = sum(1 for p in collection.papers if p.label == "relevant")
    console.print(
        f"[bold]Done:[/] {len(collection.papers)} papers"
        + (f", {relevant} marked relevant" if relevant else "")
        + "."
    )
    if file_format is not None:
        target = out or Path(f"search{file_format.export_extension}")
        with written_file(target) as handle:
            written = export_collection(collection, file_format.name, handle, only=selection)
        console.print(f"Wrote {written} records to {target} ({file_format.label}).")


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

    if not question.strip():
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
        return await preview_strategy(question, parser=parser, builder=builder, rules=rules)

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
