"""``scholarstream search``: a paper search with checkpoints in the terminal."""

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from scholarstream.cli._choices import EXPORT_FORMATS
from scholarstream.cli.context import UserOption, resolve_user, run_with_runtime
from scholarstream.errors import InvalidInputError

if TYPE_CHECKING:
    from scholarstream.runtime import Runtime
    from scholarstream.search.core import ExportSelection, PaperCollection


def register(app: typer.Typer) -> None:
    app.command("search")(search)


def search(
    ctx: typer.Context,
    question: Annotated[str, typer.Argument(help="What you are looking for, in your words.")],
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
        partial = target.with_name(target.name + ".partial")
        with partial.open("w", encoding="utf-8", newline="") as handle:
            written = export_collection(collection, file_format.name, handle, only=selection)
        partial.replace(target)
        console.print(f"Wrote {written} records to {target} ({file_format.label}).")
