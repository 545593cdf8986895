"""``scholarstream search``: a paper search with checkpoints in the terminal."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from scholarstream.cli.context import UserOption, resolve_user, run_with_runtime
from scholarstream.cli.search_checkpoints import TerminalCheckpointHandler
from scholarstream.errors import InvalidInputError
from scholarstream.papers.formats import export_format_names, get_format
from scholarstream.runtime import Runtime
from scholarstream.search.assembly import SearchOptions
from scholarstream.search.core.checkpoints import Checkpoint, Decision
from scholarstream.search.core.export import ExportSelection, export_collection
from scholarstream.search.core.models import PaperCollection
from scholarstream.search.workflow import SearchWorkflow, Stage
from scholarstream.sources import SourceStatus

_STAGE_TEXT: dict[Stage, str] = {
    "parsing": "Understanding the question",
    "building": "Building the search strategy",
    "searching": "Searching the sources",
    "deduplicating": "Merging duplicates",
    "scoring": "Scoring relevance",
    "organizing": "Organising the results",
}


class _TerminalProgress:
    """A spinner per stage, a line per source as it finishes."""

    def __init__(self, console: Console) -> None:
        self.console = console
        self.status = console.status("")

    async def stage(self, run_id: str, iteration: int, stage: Stage) -> None:
        self.status.update(f"{_STAGE_TEXT[stage]}…")
        self.status.start()

    def source_done(self, status: SourceStatus) -> None:
        if status.ok:
            total = f" of {status.total:,}" if status.total is not None else ""
            self.console.print(
                f"  [green]✓[/] {status.source}: {status.returned}{total} "
                f"[dim]({status.elapsed_ms / 1000:.1f} s)[/]"
            )
        else:
            self.console.print(f"  [red]✗[/] {status.source}: {status.error}")

    def pause(self) -> None:
        self.status.stop()


class _PausingHandler(TerminalCheckpointHandler):
    """Stops the spinner while the user reads and answers."""

    def __init__(self, console: Console, progress: _TerminalProgress) -> None:
        super().__init__(console)
        self.progress = progress

    async def handle(self, checkpoint: Checkpoint) -> Decision:
        self.progress.pause()
        return await super().handle(checkpoint)


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
        typer.Option(
            "--export", help=f"Write the final papers as {'|'.join(export_format_names())}."
        ),
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

    async def work(runtime: Runtime) -> PaperCollection:
        async with runtime.database.session() as session:
            owner = (await resolve_user(session, user)).id
        progress = _TerminalProgress(console)
        handler = None if yes else _PausingHandler(console, progress)
        workflow = SearchWorkflow.from_config(
            runtime,
            owner,
            checkpoint_handler=handler,
            max_iterations=max_iterations,
            options=options,
            observer=progress,
        )
        try:
            return await workflow.run(question)
        finally:
            progress.pause()

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
