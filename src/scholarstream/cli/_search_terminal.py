"""What ``scholarstream search`` shows while it runs: a spinner per stage, a line per
source, and the checkpoints that stop the spinner while the user answers. Imported by the
command when it runs, never by ``--help``."""

from __future__ import annotations

from rich.console import Console
from rich.markup import escape

from scholarstream.cli.search_checkpoints import TerminalCheckpointHandler
from scholarstream.search import Stage
from scholarstream.search.core import Checkpoint, Decision
from scholarstream.sources import OFFLINE_NOTICE, SourceStatus

LIBRARY = "library"
OFFLINE_NO_LIBRARY_NOTICE = "You appear to be offline: no source could be reached."
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
        self._searched: list[SourceStatus] = []
        self.said: set[str] = set()
        """Notices already shown in this run (a checkpoint does not repeat them)."""

    async def stage(self, run_id: str, iteration: int, stage: Stage) -> None:
        if stage == "searching":
            self._searched = []
        elif stage == "deduplicating":
            self._offline_notice()
        self.status.update(f"{_STAGE_TEXT[stage]}…")
        self.status.start()

    def source_done(self, status: SourceStatus) -> None:
        self._searched.append(status)
        if status.ok:
            total = f" of {status.total:,}" if status.total is not None else ""
            self.console.print(
                f"  [green]✓[/] {status.source}: {status.returned}{total} "
                f"[dim]({status.elapsed_ms / 1000:.1f} s)[/]"
            )
        elif status.unreachable:
            self.console.print(f"  [red]✗[/] {status.source}: could not be reached")
        else:
            self.console.print(f"  [red]✗[/] {status.source}: {status.error}")

    def _offline_notice(self) -> None:
        """Once a run: every remote source was unreachable (the library still answers)."""
        remote = [s for s in self._searched if s.source != LIBRARY]
        if not remote or not all(s.unreachable for s in remote):
            return
        library = any(s.ok for s in self._searched if s.source == LIBRARY)
        notice = OFFLINE_NOTICE if library else OFFLINE_NO_LIBRARY_NOTICE
        if notice not in self.said:
            self.said.add(notice)
            self.console.print(f"[yellow]{escape(notice)}[/]")

    def pause(self) -> None:
        self.status.stop()


class PausingHandler(TerminalCheckpointHandler):
    """Stops the spinner while the user reads and answers."""

    def __init__(self, console: Console, progress: TerminalProgress) -> None:
        super().__init__(console)
        self.progress = progress
        self.said = progress.said

    async def handle(self, checkpoint: Checkpoint) -> Decision:
        self.progress.pause()
        return await super().handle(checkpoint)
