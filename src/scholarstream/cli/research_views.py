"""How ``scholarstream research`` shows a research: its progress while it runs (a live table
on a terminal, plain lines otherwise) and its outcome (the report as Markdown on stdout,
the error summary on stderr)."""

from __future__ import annotations

from typing import Protocol

import typer
from rich.console import Console, Group
from rich.live import Live
from rich.markdown import Markdown
from rich.markup import escape
from rich.spinner import Spinner
from rich.table import Table

from scholarstream.cli.context import err_console
from scholarstream.grounding import MARK_LEGEND, CitationAudit, cited_references
from scholarstream.research import (
    LLMResult,
    LLMResultStatus,
    Research,
    ResearchEvent,
    ResearchLLMCompleted,
    ResearchLLMFailed,
    ResearchRetrying,
    ResearchStarted,
    ResearchStatus,
    ResearchSynthesizing,
    UserAction,
    error_summary,
    synthesis_not_available,
    synthesis_notice,
    synthesis_retryable,
)
from scholarstream.research.core import research_audits

__all__ = [
    "SETTLED",
    "LineView",
    "LiveView",
    "ProgressView",
    "print_outcome",
    "progress_view",
    "report_markdown",
    "results_table",
]

CUT_OFF_NOTE = "Cut off: this answer reached its length limit before it was finished."

# Where following a research stops: a question for the user, or the end.
SETTLED = frozenset(
    {ResearchStatus.AWAITING_CONFIRMATION, ResearchStatus.COMPLETED, ResearchStatus.FAILED}
)

_LOOK: dict[LLMResultStatus, tuple[str, str]] = {  # mark, style
    LLMResultStatus.PENDING: ("·", "dim"),
    LLMResultStatus.PROCESSING: ("…", "cyan"),
    LLMResultStatus.COMPLETED: ("✓", "green"),
    LLMResultStatus.FAILED: ("✗", "red"),
}


class ProgressView(Protocol):
    def event(self, event: ResearchEvent) -> None: ...

    def snapshot(self, research: Research) -> None: ...

    def close(self) -> None: ...


def _synthesis_runs(event: ResearchSynthesizing) -> bool:
    """The seed's skip logic, from the event: one answer and no report is not synthesised."""
    return len(event.successful_models) > 1 or event.external_reports > 0


def _seconds(result: LLMResult) -> str:
    if result.started_at is None or result.completed_at is None:
        return ""
    return f"{(result.completed_at - result.started_at).total_seconds():.1f} s"


class LineView:
    """Plain lines (not a terminal): each model's status once as it changes, then what
    the research does next."""

    def __init__(self, console: Console) -> None:
        self.console = console
        self.shown: set[tuple[str, int, LLMResultStatus]] = set()

    def _line(self, model: str, attempt: int, status: LLMResultStatus, error: str | None) -> None:
        if (model, attempt, status) in self.shown:
            return
        self.shown.add((model, attempt, status))
        again = f" (attempt {attempt})" if attempt > 1 else ""
        why = f": {error}" if error and status is LLMResultStatus.FAILED else ""
        self.console.print(
            f"  {_LOOK[status][0]} {model}{again} {status}{why}",
            markup=False,
            highlight=False,
        )

    def event(self, event: ResearchEvent) -> None:
        if isinstance(event, ResearchStarted):
            count = f"{len(event.models)} model{'s' if len(event.models) != 1 else ''}"
            self.console.print(f"Asking {count}: {', '.join(event.models)}", highlight=False)
            for model in event.models:
                self._line(model, 1, LLMResultStatus.PENDING, None)
        elif isinstance(event, ResearchLLMCompleted):
            self._line(event.model, event.attempt, LLMResultStatus.COMPLETED, None)
        elif isinstance(event, ResearchLLMFailed):
            self._line(event.model, event.attempt, LLMResultStatus.FAILED, event.error)
        elif isinstance(event, ResearchRetrying):
            self.console.print("Retrying failed providers...", highlight=False)
        elif isinstance(event, ResearchSynthesizing) and _synthesis_runs(event):
            self.console.print("Synthesizing...", highlight=False)

    def snapshot(self, research: Research) -> None:
        for result in research.llm_results:
            self._line(result.model, result.attempt, result.status, result.error)

    def close(self) -> None:
        pass


def results_table(research: Research) -> Table:
    table = Table(show_edge=False, pad_edge=False)
    table.add_column("model", no_wrap=True)
    table.add_column("status")
    table.add_column("time", justify="right")
    table.add_column("error", overflow="fold")
    for result in research.llm_results:
        mark, style = _LOOK[result.status]
        again = f" (attempt {result.attempt})" if result.attempt > 1 else ""
        table.add_row(
            escape(result.model),
            f"[{style}]{mark} {result.status}{again}[/]",
            _seconds(result),
            escape(result.error or "") if result.status is LLMResultStatus.FAILED else "",
        )
    return table


_STATUS_TEXT: dict[ResearchStatus, str] = {
    ResearchStatus.PROCESSING: "Waiting for the models...",
    ResearchStatus.RETRYING: "Retrying failed providers...",
    ResearchStatus.SYNTHESIZING: "Synthesizing...",
}


class LiveView:
    """A terminal: one live table of the models, and a spinner saying what happens (the
    state it shows is the one the events announce)."""

    def __init__(self, console: Console) -> None:
        self.console = console
        self.research: Research | None = None
        self.live: Live | None = None

    def _render(self) -> Group:
        assert self.research is not None
        text = _STATUS_TEXT.get(self.research.status)
        parts: list[Table | Spinner] = [results_table(self.research)]
        if text:
            parts.append(Spinner("dots", text=text, style="cyan"))
        return Group(*parts)

    def event(self, event: ResearchEvent) -> None:
        pass

    def snapshot(self, research: Research) -> None:
        self.research = research
        if self.live is None:
            self.live = Live(
                self._render(),
                console=self.console,
                refresh_per_second=8,
                get_renderable=self._render,
            )
            self.live.start()
        if research.status in SETTLED:
            self.close()  # a question or the report comes next

    def close(self) -> None:
        if self.live is not None:
            self.live.stop()
            self.live = None


def progress_view(console: Console) -> ProgressView:
    return LiveView(console) if console.is_terminal else LineView(console)


def report_markdown(research: Research) -> str:
    """The synthesis (or why there is none), then each model's report, as Markdown."""
    lines = [f"# {research.title}", ""]
    notice = synthesis_notice(research)
    if research.evidence is not None and research.evidence.items:
        lines += [f"*{MARK_LEGEND}*", ""]
    if research.synthesized_result:
        lines += ["## Synthesis", ""]
        lines += _answer_lines(research.synthesized_result, research.synthesis_audit)
        if research.synthesis_cut_off:
            lines += [f"*{CUT_OFF_NOTE}*", ""]
    elif synthesis_retryable(research) and notice:
        lines += [f"*{notice}*", ""]
    elif synthesis_not_available(research):
        lines += ["*Synthesis not available* (one model answered, and no external report).", ""]
    elif research.synthesis_error:
        lines += [f"*Synthesis failed: {research.synthesis_error}*", ""]
    for result in research.llm_results:
        if result.status is LLMResultStatus.COMPLETED:
            lines += [f"## {result.model}", ""]
            lines += _answer_lines(result.content or "", result.audit)
            if result.cut_off:
                lines += [f"*{CUT_OFF_NOTE}*", ""]
        elif result.status is LLMResultStatus.FAILED:
            lines += [f"## {result.model} (failed)", "", f"*{result.error or 'failed'}*", ""]
        else:
            lines += [f"## {result.model} ({result.status})", ""]
    references = cited_references(research.evidence, research_audits(research))
    if references:
        lines += [references, ""]
    if research.share_info is not None:
        lines += [f"Share link: {research.share_info.share_url}", ""]
    return "\n".join(lines).rstrip() + "\n"


def _answer_lines(content: str, audit: CitationAudit | None) -> list[str]:
    """An answer as shown: with its citations marked and counted when they were audited."""
    if audit is None:
        return [content.strip(), ""]
    return [f"**{audit.summary()}**", "", audit.annotated.strip(), ""]


def _print_report(research: Research) -> None:
    out = Console()
    if out.is_terminal:
        out.print(Markdown(report_markdown(research)))
    else:
        typer.echo(report_markdown(research), nl=False)


def _print_failure(research: Research) -> None:
    summary = error_summary(research)
    error = summary.error if summary else research.error or "failed"
    err_console.print(f"[bold red]Research failed:[/] {escape(error)}", highlight=False)
    if summary is None:
        return
    advice = summary.advice
    if summary.models_with_key_errors:
        advice += f" ({', '.join(summary.models_with_key_errors)})"
    err_console.print(f"[yellow]What to do:[/] {escape(advice)}", highlight=False)
    if summary.user_action is not UserAction.CREATE_NEW_RESEARCH:
        err_console.print(f"Retry it: scholarstream research retry {research.id}", highlight=False)


def print_outcome(research: Research) -> None:
    """The report on stdout (for a failure, what was received) and the error summary; for
    a research completed without the synthesis that failed, how to run it again."""
    if research.status is ResearchStatus.COMPLETED or research.successful_results:
        _print_report(research)
    if research.status is ResearchStatus.FAILED:
        _print_failure(research)
    elif synthesis_retryable(research):
        err_console.print(
            f"Run the synthesis again: scholarstream research retry {research.id}",
            highlight=False,
        )
