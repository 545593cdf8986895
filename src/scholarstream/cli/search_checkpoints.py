"""The search workflow's checkpoints in a terminal: the strategy to approve, edit in
$EDITOR or reject; the results to mark, comment on, search again or accept."""

from __future__ import annotations

import json
import shlex
from collections.abc import Callable
from dataclasses import dataclass, field

import click
from rich import box
from rich.console import Console
from rich.markup import escape
from rich.prompt import Prompt
from rich.table import Table
from rich.text import Text

from scholarstream.errors import InvalidInputError
from scholarstream.papers import Paper
from scholarstream.search.core import (
    Checkpoint,
    Decision,
    DecisionAction,
    PaperCollection,
    ResultPayload,
    ScoredPaper,
    StrategyPayload,
    UserFeedback,
    revised_strategy,
)

Editor = Callable[[str], str | None]
"""Gets text, returns the edited text (None: the user quit without saving)."""

RESULT_HELP = (
    "r N.. mark relevant · i N.. mark irrelevant · f TEXT feedback · broaden · narrow · "
    "more · again (search again with your feedback) · accept (finish with these results)"
)
RESULT_PROMPT = "Results: r N, i N, f TEXT, broaden, narrow, more, again or accept"


def click_editor(text: str) -> str | None:
    edited: str | None = click.edit(text, extension=".json", require_save=True)
    return edited


@dataclass
class _Review:
    """What the user said so far at one result checkpoint."""

    relevant: list[str] = field(default_factory=list)
    irrelevant: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    direction: str | None = None

    def feedback(self) -> UserFeedback:
        return UserFeedback.model_validate(
            {
                "marked_relevant": self.relevant,
                "marked_irrelevant": self.irrelevant,
                "free_text_feedback": " ".join(self.notes),
                "direction": self.direction,
            }
        )

    def mark(self, paper_id: str, relevant: bool) -> None:
        for ids in (self.relevant, self.irrelevant):
            if paper_id in ids:
                ids.remove(paper_id)
        (self.relevant if relevant else self.irrelevant).append(paper_id)


class TerminalCheckpointHandler:
    def __init__(
        self, console: Console, *, editor: Editor = click_editor, page_size: int = 20
    ) -> None:
        self.console = console
        self.editor = editor
        self.page_size = page_size
        self.said: set[str] = set()
        """Notices already shown in this run: each is said once."""

    async def handle(self, checkpoint: Checkpoint) -> Decision:
        if isinstance(checkpoint.payload, StrategyPayload):
            return self._strategy(checkpoint.payload)
        assert isinstance(checkpoint.payload, ResultPayload)
        return self._results(checkpoint.payload)

    # --- checkpoint 1 -------------------------------------------------------------------

    def _strategy(self, payload: StrategyPayload) -> Decision:
        self.show_strategy(payload)
        while True:
            choice = self._ask(
                "Strategy: \\[a]pprove, \\[e]dit in $EDITOR, \\[r]eject",
                choices=["a", "e", "r"],
                default="a",
            )
            if choice == "a":
                return Decision(action=DecisionAction.APPROVE)
            if choice == "r":
                note = self._ask("What should change?", default="")
                return Decision(action=DecisionAction.REJECT, note=note or None)
            decision = self._edit(payload)
            if decision is not None:
                return decision

    def _edit(self, payload: StrategyPayload) -> Decision | None:
        text = payload.strategy.model_dump_json(indent=2)
        while True:
            edited = self.editor(text)
            if edited is None:
                self.console.print("No changes saved; the strategy is unchanged.")
                return None
            try:
                data = json.loads(edited)
                decision = Decision(action=DecisionAction.EDIT, revised_data=data)
                revised_strategy(decision)
            except json.JSONDecodeError as exc:
                where = f"line {exc.lineno}, column {exc.colno}"
                message = (
                    f"The edited text is not JSON: {exc.msg[:1].lower()}{exc.msg[1:]} ({where})."
                )
                self.console.print(f"[red]{escape(message)}[/]")
            except InvalidInputError as exc:
                self.console.print(f"[red]{escape(exc.message)}[/]")
            else:
                return decision
            if self._ask("Edit again?", choices=["y", "n"], default="y") == "n":
                return None
            text = edited

    def show_strategy(self, payload: StrategyPayload) -> None:
        intent, strategy = payload.intent, payload.strategy
        self.console.rule(f"Search strategy · iteration {payload.iteration + 1}")
        self.console.print(f"[bold]Topic:[/] {escape(intent.topic)}")
        for concept in intent.concepts:
            synonyms = ", ".join(concept.synonyms)
            self.console.print(
                f"  • {escape(concept.term)}"
                + (f" [dim]({escape(synonyms)})[/]" if synonyms else "")
            )
        if intent.pico and intent.pico.present():
            pico = "; ".join(f"{k}: {v}" for k, v in intent.pico.present().items())
            self.console.print(f"[bold]PICO:[/] {escape(pico)}")
        if strategy.date_from or strategy.date_to:
            self.console.print(
                f"[bold]Dates:[/] {strategy.date_from or '…'} to {strategy.date_to or '…'}"
            )
        table = Table(show_lines=True)
        table.add_column("Source", style="cyan", no_wrap=True)
        table.add_column("Query")
        table.add_column("Filters")
        for query in strategy.queries:
            filters = ", ".join(f"{k}={v}" for k, v in query.filters.items())
            table.add_row(query.source, escape(query.query), escape(filters))
        self.console.print(table)
        if payload.changes:
            self.console.print("[bold]Changed, as your feedback asked:[/]")
            for change in payload.changes:
                said = f' [dim](you said: "{escape(change.phrase)}")[/]' if change.phrase else ""
                self.console.print(f"  • {escape(change.description)}{said}")
        if payload.not_made:
            self.console.print("[bold]Not made:[/]")
            for change in payload.not_made:
                why = f" [dim]({escape(change.reason)})[/]" if change.reason else ""
                self.console.print(f"  • {escape(change.description)}{why}")
        if strategy.rationale:
            self.console.print(f"[dim]{escape(strategy.rationale)}[/]")

    # --- checkpoint 2 -------------------------------------------------------------------

    def _results(self, payload: ResultPayload) -> Decision:
        collection = payload.collection
        numbered = list(collection.papers)
        shown = min(self.page_size, len(numbered))
        self.show_results(collection, numbered[:shown], payload.iteration)
        review = _Review()
        while True:
            # No default: an Enter pressed by mistake must not end the search.
            line = self._ask_results()
            if not line:
                self.console.print(f"[dim]Nothing chosen. {RESULT_HELP}[/]")
                continue
            command, _, rest = line.partition(" ")
            command = command.lower()
            if command in ("accept", "a"):
                feedback = review.feedback()
                return Decision(
                    action=DecisionAction.APPROVE,
                    revised_data=None if feedback.is_empty else feedback.model_dump(),
                )
            if command in ("again", "g"):
                feedback = review.feedback()
                if feedback.is_empty:
                    note = self._ask("What should change?", default="")
                    return Decision(action=DecisionAction.REJECT, note=note or None)
                return Decision(action=DecisionAction.EDIT, revised_data=feedback.model_dump())
            if command in ("r", "i"):
                self._mark(review, numbered, shown, rest, relevant=command == "r")
            elif command == "f" and rest.strip():
                review.notes.append(rest.strip())
            elif command in ("broaden", "narrow"):
                review.direction = command
                self.console.print(f"Next search will {command} the strategy.")
            elif command == "more" and shown < len(numbered):
                self._table(numbered[shown : shown + self.page_size], start=shown + 1)
                shown = min(shown + self.page_size, len(numbered))
            else:
                self.console.print(f"[dim]{RESULT_HELP}[/]")

    def _ask_results(self) -> str:
        return self._ask(RESULT_PROMPT).strip()

    def _ask(self, question: str, *, choices: list[str] | None = None, default: str = "") -> str:
        """The user's answer; the end of the input (a pipe run dry) is an error that says
        how to answer, never a traceback."""
        try:
            answer: str = Prompt.ask(
                question,
                choices=choices,
                default=default,
                show_default=bool(default),
                console=self.console,
            )
        except EOFError:
            raise InvalidInputError(
                "The input ended before the search was finished.",
                hint="Answer each question (at the results: 'accept' to finish), or run with "
                "--yes to take the strategy and the results without review.",
            ) from None
        return answer

    def _mark(
        self, review: _Review, numbered: list[ScoredPaper], shown: int, rest: str, *, relevant: bool
    ) -> None:
        try:
            numbers = [int(n) for n in shlex.split(rest.replace(",", " "))]
        except ValueError:
            self.console.print("[red]Give paper numbers, e.g. 'r 1 3 5'.[/]")
            return
        for number in numbers:
            if not 1 <= number <= shown:
                self.console.print(f"[red]There is no paper {number} on screen.[/]")
                continue
            paper = numbered[number - 1]
            review.mark(paper.id, relevant)
        marked = len(review.relevant), len(review.irrelevant)
        self.console.print(f"Marked: {marked[0]} relevant, {marked[1]} irrelevant.")

    def show_results(
        self, collection: PaperCollection, papers: list[ScoredPaper], iteration: int
    ) -> None:
        stats = collection.stats
        self.console.rule(f"Results · iteration {iteration + 1}")
        self.console.print(
            f"{stats.total} papers ({stats.found} found, {stats.duplicates_removed} duplicates "
            f"merged)" + (f", {stats.year_min}-{stats.year_max}" if stats.year_min else "")
        )
        sources = ", ".join(f"{name} {n}" for name, n in stats.by_source.items())
        if sources:
            self.console.print(f"Sources: {escape(sources)}", highlight=False)
        if stats.by_origin:
            labels = stats.origin_labels
            origins = ", ".join(
                f"{labels.get(name, name)} {n}" for name, n in stats.by_origin.items()
            )
            self.console.print(f"[dim]In your library from: {escape(origins)}[/]", highlight=False)
        for notice in collection.notices:
            if notice not in self.said:
                self.said.add(notice)
                self.console.print(f"[yellow]{escape(notice)}[/]")
        unreached = [s.source for s in collection.source_statuses if s.unreachable]
        if unreached:
            self.console.print(f"[yellow]Not reached:[/] {escape(', '.join(unreached))}")
        for status in collection.source_statuses:
            if not status.ok and not status.unreachable:
                self.console.print(
                    f"[yellow]{status.source} failed:[/] {escape(status.error or '')} "
                    f"[dim]{escape(status.hint or '')}[/]"
                )
        self._table(papers, start=1)
        self.console.print(f"[dim]{RESULT_HELP}[/]")

    def _table(self, papers: list[ScoredPaper], *, start: int) -> None:
        """One row per paper, its title across the width the numbers leave, with where it
        appeared and why it scored so on dim lines under it: readable at 80 columns."""
        table = Table(box=box.SIMPLE_HEAD, pad_edge=False, expand=True, show_lines=False)
        table.add_column("#", justify="right", no_wrap=True)
        table.add_column("Score", justify="right", no_wrap=True)
        table.add_column("Paper", ratio=1)
        for number, paper in enumerate(papers, start=start):
            record = paper.record
            mark = {"relevant": " ✓", "irrelevant": " ✗"}.get(paper.label or "", "")
            venue = record.venue if isinstance(record, Paper) and record.venue else ""
            where = " · ".join(
                part for part in (venue, str(record.year or ""), ", ".join(paper.sources)) if part
            )
            cell = Text(record.title, style="bold")
            if where:
                cell.append(f"\n{where}", style="dim")
            if paper.reason:
                cell.append(f"\n{paper.reason}", style="dim italic")
            table.add_row(f"{number}{mark}", f"{paper.score:.2f}", cell)
        self.console.print(table)
