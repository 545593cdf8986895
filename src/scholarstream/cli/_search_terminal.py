"""What ``scholarstream search`` shows while it runs: a spinner per stage, a line per
source, and the checkpoints that stop the spinner while the user answers. Imported by the
command when it runs, never by ``--help``."""

from __future__ import annotations

from rich.console import Console

from scholarstream.cli.search_checkpoints import TerminalCheckpointHandler
from scholarstream.search import Stage
from scholarstream.search.core import Checkpoint, Decision
from scholarstream.sources import SourceStatus

_STAGE_TEXT: dict[Stage, str] = {
    "parsing": "Understanding the question",
    "building": "Building the search strategy",
    "searching": "Searching the sources",
    "deduplicating": "Merging duplicates",
    "scoring": "Scoring relevance",
    "organizing": "Organising the results",
}


class TerminalProgress:
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


class PausingHandler(TerminalCheckpointHandler):
    """Stops the spinner while the user reads and answers."""

    def __init__(self, console: Console, progress: TerminalProgress) -> None:
        super().__init__(console)
        self.progress = progress

    async def handle(self, checkpoint: Checkpoint) -> Decision:
        self.progress.pause()
        return await super().handle(checkpoint)
