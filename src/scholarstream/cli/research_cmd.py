"""``scholarstream research``: multi-LLM research from the terminal (seed 001, issue 8).

``research "PROMPT" --models a,b,c`` (short for ``research run``) drafts the research,
starts it on the durable engine launched in this process, shows each model's progress,
puts a partial failure to the user (proceed, retry, cancel), then prints the synthesis
and every model's report on stdout. Progress and questions go to stderr, so
``> report.md`` keeps a clean Markdown report. ``list``, ``show``, ``retry`` and
``resume`` work on stored research; an interrupted run is picked up with ``resume``.

Exit codes: 0 completed; 1 failed (cancelled included) or a runtime error; 2 a usage
error (no models, unknown model, missing keys, bad option); 130 interrupted.
"""

from __future__ import annotations

import asyncio
import sys
import threading
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any, TypeVar

import typer
from pydantic import BaseModel
from rich import box
from rich.console import Console
from rich.markup import escape
from rich.prompt import Prompt
from rich.table import Table
from typer.core import TyperGroup

from scholarstream.cli.context import UserOption, err_console, resolve_user, run_with_runtime
from scholarstream.cli.research_views import (
    SETTLED,
    ProgressView,
    print_outcome,
    progress_view,
    results_table,
)
from scholarstream.db.scope import OwnerScope
from scholarstream.engine import CLI, Engine
from scholarstream.errors import (
    ConfigurationError,
    InvalidInputError,
    MissingCredentialsError,
    ScholarStreamError,
    UnknownProviderError,
)
from scholarstream.llm import split_model_string
from scholarstream.research import (
    MAX_RETRIES,
    STATUS_HINTS,
    ConfirmAction,
    DraftRequest,
    ExternalReport,
    LLMResultStatus,
    Research,
    ResearchStatus,
    check_can_start,
    create_draft,
    models_needing_credentials,
    retry_research,
    synthesis_may_run,
)
from scholarstream.research.core.drafts import check_selected_llms
from scholarstream.research.execution import CALL_QUEUE
from scholarstream.research.model_calls import SYNTHESIS_ROLE
from scholarstream.research.service import ResearchService
from scholarstream.runtime import Runtime

T = TypeVar("T")

POLL_SECONDS = 0.2
# Exit code 2: the command as given cannot work (main() also gives 2 to the first two).
_USAGE_ERRORS = (
    ConfigurationError,
    InvalidInputError,
    MissingCredentialsError,
    UnknownProviderError,
)


class OnPartialFailure(StrEnum):
    ASK = "ask"
    PROCEED = "proceed"
    RETRY = "retry"
    CANCEL = "cancel"


class _DefaultToRun(TyperGroup):
    """``research "PROMPT" ...`` is ``research run "PROMPT" ...``: anything but a
    subcommand's name (or --help) goes to ``run``. A prompt that is a subcommand's name
    needs ``run`` spelt out."""

    # ``ctx`` is the Click context of Typer's vendored Click, which Typer does not export.
    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        if args and args[0] not in self.commands and args[0] not in ctx.help_option_names:
            args = ["run", *args]
        return super().parse_args(ctx, args)


research_app = typer.Typer(
    cls=_DefaultToRun,
    no_args_is_help=True,
    help="Multi-LLM research: one prompt to several models, synthesised. "
    "'scholarstream research \"PROMPT\" --models a,b' is short for 'research run'.",
)


class _ResearchList(BaseModel):
    research: list[Research]


@dataclass
class _Session:
    """What an interrupted command needs to say where its research is."""

    research_id: uuid.UUID | None = None


# --- errors and interruptions --------------------------------------------------------------


@contextmanager
def _handled(session: _Session | None = None) -> Iterator[None]:
    """Product errors as two plain lines and an exit code, never a traceback; Ctrl-C in a
    command following a research (``session``) as where to find it again."""
    try:
        yield
    except ScholarStreamError as exc:
        err_console.print(f"[bold red]Error:[/] {escape(exc.message)}", highlight=False)
        if exc.hint:
            err_console.print(f"[yellow]What to do:[/] {escape(exc.hint)}", highlight=False)
        if session is not None and session.research_id is not None:
            err_console.print(_where_it_is(session.research_id), highlight=False)
        raise typer.Exit(2 if isinstance(exc, _USAGE_ERRORS) else 1) from None
    except KeyboardInterrupt:
        if session is None:
            raise
        err_console.print()  # off the line of a prompt or a spinner
        if session.research_id is None:
            err_console.print("Interrupted; no research was started.")
        else:
            err_console.print(
                f"Interrupted. {_where_it_is(session.research_id)} Its model calls go on "
                "whenever the durable engine runs (this command, 'scholarstream serve' or "
                "'scholarstream worker').",
                highlight=False,
            )
        raise typer.Exit(130) from None


def _where_it_is(research_id: uuid.UUID) -> str:
    return (
        f"The research is stored as {research_id}: 'scholarstream research resume "
        f"{research_id}' follows it again (and asks what to do if models failed), "
        f"'scholarstream research show {research_id}' shows it."
    )


def _require_answerable(on_partial_failure: OnPartialFailure) -> None:
    if on_partial_failure is OnPartialFailure.ASK and not sys.stdin.isatty():
        raise InvalidInputError(
            "The input is not a terminal, so nobody can be asked what to do if some models fail.",
            hint="Pass --on-partial-failure proceed (synthesise the answers received), retry "
            "(call the failed models again) or cancel.",
        )


# --- the options -----------------------------------------------------------------------------


def _model_strings(values: list[str]) -> list[str]:
    """``--models a,b -m c`` -> [a, b, c]: 'provider:model' each, or ``UnknownProviderError``."""
    models = [part.strip() for value in values for part in value.split(",") if part.strip()]
    if not models:
        raise InvalidInputError(
            "--models names no model.",
            hint="Give model strings, e.g. --models "
            "openai:gpt-4.1-mini,anthropic:claude-sonnet-4-5, or leave --models out for the "
            "configured models.",
        )
    for model in models:
        split_model_string(model)
        if any(ch.isspace() for ch in model):
            raise UnknownProviderError(
                f"Model {model!r} contains a space.", hint="Write models as 'provider:model'."
            )
    return models


def _external_report(path: Path) -> ExternalReport:
    try:
        content = path.read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError) as exc:
        raise InvalidInputError(
            f"Cannot read the external report {path}: {exc}",
            hint="Give a readable UTF-8 text or Markdown file.",
        ) from exc
    if not content:
        raise InvalidInputError(
            f"The external report {path} is empty.", hint="Give a file with the report's text."
        )
    return ExternalReport(title=path.name, content=content, source=str(path))


async def _owner(runtime: Runtime, user: str) -> uuid.UUID:
    async with runtime.database.session() as session:
        return (await resolve_user(session, user)).id


async def _check_can_start(
    runtime: Runtime, service: ResearchService, owner: uuid.UUID, request: DraftRequest
) -> None:
    """The checks ``ResearchService.start`` would make on the draft of ``request``, made
    before anything is stored: a command that cannot start leaves no draft behind."""
    check_selected_llms(request.selected_llms, limit=runtime.settings.research.max_selected_llms)
    needs_defaults = request.selected_llms is None or request.synthesis_llm is None
    available = await service.available_models(owner) if needs_defaults else []
    if request.selected_llms is None and not available:
        raise InvalidInputError(
            "No model is available for research: none is configured with an API key.",
            hint="Pass --models provider:model,... or configure model roles, e.g. "
            "SCHOLARSTREAM_LLM__ROLES__DEFAULT=openai:gpt-4.1-mini with its key; "
            "'scholarstream models' shows what is configured.",
        )
    draft = create_draft(
        request,
        available_models=available,
        synthesis_model=runtime.models.model_string(SYNTHESIS_ROLE),
    )
    if synthesis_may_run(draft) and draft.synthesis_llm is None:
        raise InvalidInputError(
            "Choose a synthesis model: the answers of several models (or external reports) "
            "are synthesised.",
            hint="Pass --synthesis provider:model, or configure the 'synthesis' model role "
            "(SCHOLARSTREAM_LLM__ROLES__SYNTHESIS).",
        )
    usable: set[str] = set()
    async with runtime.database.session() as session:
        scope = OwnerScope(session, owner)
        for model in models_needing_credentials(draft):
            if await runtime.credentials.has_credential(scope, split_model_string(model)[0]):
                usable.add(model)
    check_can_start(draft, usable.__contains__)


# --- following a research ------------------------------------------------------------------


async def _last_seq(service: ResearchService, owner: uuid.UUID, research_id: uuid.UUID) -> int:
    events = await service.events(owner, research_id)
    return events[-1].seq if events else 0


async def _follow(
    service: ResearchService, owner: uuid.UUID, research: Research, view: ProgressView, seq: int
) -> tuple[Research, int]:
    """Until the research settles: its new outbox events, then its state. Events and
    state are saved in one transaction, so the events read before a settled state are
    all but those saved with it, read once more at the end."""
    while True:
        for stored in await service.events(owner, research.id, after_seq=seq):
            seq = stored.seq
            view.event(stored.event)
        research = await service.get(owner, research.id)
        if research.status in SETTLED:
            for stored in await service.events(owner, research.id, after_seq=seq):
                seq = stored.seq
                view.event(stored.event)
            view.snapshot(research)
            return research, seq
        view.snapshot(research)
        await asyncio.sleep(POLL_SECONDS)


Answer = Callable[[Research], Awaitable[ConfirmAction]]


def _show_partial_failure(research: Research) -> None:
    answered = len(research.successful_results)
    failed = research.results_in(LLMResultStatus.FAILED)
    err_console.print(
        f"[bold yellow]{len(failed)} of {len(research.llm_results)} models failed[/] "
        f"({answered} answered):",
        highlight=False,
    )
    for result in failed:
        code = f" [{result.error_code}]" if result.error_code else ""
        err_console.print(
            f"  ✗ {result.model}: {result.error or 'failed'}{code}", markup=False, highlight=False
        )


async def _in_thread(ask: Callable[[], T]) -> T:
    """``ask`` in a daemon thread: the engine's workflows keep running on this loop, and
    Ctrl-C cancels the wait at once (an executor thread would hold the exit until Enter)."""
    loop = asyncio.get_running_loop()
    future: asyncio.Future[T] = loop.create_future()

    def resolve(value: T) -> None:
        if not future.done():
            future.set_result(value)

    def reject(error: BaseException) -> None:
        if not future.done():
            future.set_exception(error)

    def run() -> None:
        try:
            try:
                value = ask()
            except BaseException as exc:  # handed to the waiting coroutine
                loop.call_soon_threadsafe(reject, exc)
            else:
                loop.call_soon_threadsafe(resolve, value)
        except RuntimeError:  # the loop is closed: nobody waits any more
            pass

    threading.Thread(target=run, name="research-prompt", daemon=True).start()
    return await future


def _answerer(choice: OnPartialFailure) -> Answer:
    """The flag's answer to every partial failure, or the user's (``ask``)."""

    async def given(research: Research) -> ConfirmAction:
        _show_partial_failure(research)
        action = ConfirmAction(choice.value)
        err_console.print(f"--on-partial-failure {choice}: {action}.", highlight=False)
        return action

    async def asked(research: Research) -> ConfirmAction:
        _show_partial_failure(research)
        left = max(0, MAX_RETRIES - research.retry_count)
        choices = {"p": ConfirmAction.PROCEED}
        offer = f"\\[p]roceed with the {len(research.successful_results)} answers"
        if left:
            choices["r"] = ConfirmAction.RETRY
            offer += f", \\[r]etry the failed models ({left} of {MAX_RETRIES} retries left)"
        choices["c"] = ConfirmAction.CANCEL
        offer += ", \\[c]ancel"

        def ask() -> str:
            return Prompt.ask(offer, choices=list(choices), console=err_console)

        try:
            return choices[await _in_thread(ask)]
        except EOFError:
            raise InvalidInputError(
                "No answer: the input ended.",
                hint="Answer later with 'scholarstream research resume', or pass "
                "--on-partial-failure proceed, retry or cancel.",
            ) from None

    return asked if choice is OnPartialFailure.ASK else given


async def _drive(
    service: ResearchService,
    owner: uuid.UUID,
    research: Research,
    answer: Answer,
    *,
    seq: int,
) -> Research:
    """Follow ``research`` to ``completed`` or ``failed``, answering partial failures."""
    view = progress_view(err_console)
    try:
        while True:
            research, seq = await _follow(service, owner, research, view, seq)
            if research.status is not ResearchStatus.AWAITING_CONFIRMATION:
                return research
            view.close()
            action = await answer(research)
            research = await service.confirm(owner, research.id, action)
    finally:
        view.close()


@asynccontextmanager
async def _engine(runtime: Runtime) -> AsyncIterator[None]:
    """The durable engine in this process for as long as the command follows a research:
    it runs the model calls and the synthesis. Its shutdown waits a few seconds for the
    work still running, such as the sharing of a research just completed: the research is
    read again after it, for its share link.

    It works only the ``llm-calls`` queue (calls and syntheses, of this research or any
    other) and runs no scheduled workflow, under an executor id of its own for this run:
    what it leaves unfinished is recovered at once by the next process looking (another
    ``research`` command, ``serve`` or ``worker``; docs/deployment.md)."""
    engine = Engine(runtime, role=CLI, queues=(CALL_QUEUE,))
    await engine.launch()
    try:
        yield
    finally:
        await engine.shutdown()


def _finish(research: Research) -> None:
    print_outcome(research)
    if research.status is not ResearchStatus.COMPLETED:
        raise typer.Exit(1)


# --- the commands --------------------------------------------------------------------------

ModelsOption = Annotated[
    list[str] | None,
    typer.Option(
        "--models",
        "-m",
        help="Models as provider:model, comma-separated or repeated "
        "(default: the configured models you have a key for).",
    ),
]
OnPartialFailureOption = Annotated[
    OnPartialFailure,
    typer.Option(
        "--on-partial-failure",
        case_sensitive=False,
        help="What to do when some models fail: ask (needs a terminal), proceed, retry or cancel.",
    ),
]
ResearchIdArgument = Annotated[
    uuid.UUID, typer.Argument(help="The research's id ('scholarstream research list').")
]
JsonOption = Annotated[bool, typer.Option("--json", help="Print JSON.")]


@research_app.command("run")
def research_run(
    ctx: typer.Context,
    prompt: Annotated[str, typer.Argument(help="The research question.")],
    models: ModelsOption = None,
    synthesis: Annotated[
        str | None,
        typer.Option("--synthesis", help="The model that synthesises (provider:model)."),
    ] = None,
    title: Annotated[
        str | None, typer.Option("--title", help="Default: generated from the prompt.")
    ] = None,
    external_report: Annotated[
        list[Path] | None,
        typer.Option(
            "--external-report",
            exists=True,
            dir_okay=False,
            readable=True,
            help="A text or Markdown file synthesised with the answers (repeatable).",
        ),
    ] = None,
    on_partial_failure: OnPartialFailureOption = OnPartialFailure.ASK,
    user: UserOption = "local",
) -> None:
    """Ask several models, follow their progress, print the synthesis and each report."""
    session = _Session()
    with _handled(session):
        if not prompt.strip():
            raise InvalidInputError(
                "The prompt is empty.",
                hint='Ask a question: scholarstream research "Tirzepatide safety in '
                'adolescents" --models openai:gpt-4.1-mini,anthropic:claude-sonnet-4-5',
            )
        request = DraftRequest(
            prompt=prompt,
            title=title,
            selected_llms=_model_strings(models) if models else None,
            synthesis_llm=_model_strings([synthesis])[0] if synthesis else None,
            external_reports=[_external_report(path) for path in external_report or []],
        )
        _require_answerable(on_partial_failure)
        answer = _answerer(on_partial_failure)

        async def work(runtime: Runtime) -> Research:
            service = ResearchService(runtime)
            owner = await _owner(runtime, user)
            await _check_can_start(runtime, service, owner, request)
            async with _engine(runtime):
                draft = await service.draft(owner, request)
                session.research_id = draft.id
                started = await service.start(owner, draft.id)
                research = await _drive(service, owner, started, answer, seq=0)
            return await service.get(owner, research.id)  # with its share link, if shared

        research = run_with_runtime(ctx, work)
    _finish(research)


@research_app.command("list")
def research_list(
    ctx: typer.Context,
    status: Annotated[
        list[ResearchStatus] | None,
        typer.Option("--status", help="Only research in this status (repeatable)."),
    ] = None,
    as_json: JsonOption = False,
    user: UserOption = "local",
) -> None:
    """Your research, newest first."""

    async def work(runtime: Runtime) -> list[Research]:
        return await ResearchService(runtime).list(await _owner(runtime, user), statuses=status)

    with _handled():
        found = run_with_runtime(ctx, work)
    if as_json:
        typer.echo(_ResearchList(research=found).model_dump_json(indent=2))
        return
    if not found:
        typer.echo('No research yet: scholarstream research "PROMPT" --models a,b starts one.')
        return
    table = Table(title=f"{len(found)} research", box=box.SIMPLE_HEAD, pad_edge=False)
    table.add_column("id", no_wrap=True)  # whole, for 'research show ID'
    table.add_column("title", overflow="fold", ratio=1)
    for column in ("status", "models", "created"):
        table.add_column(column, overflow="fold")
    for research in found:
        answered = len(research.successful_results)
        table.add_row(
            str(research.id),
            escape(research.title),
            str(research.status),
            f"{answered}/{len(research.selected_llms)} answered",
            f"{research.created_at:%Y-%m-%d %H:%M}",
        )
    Console().print(table)


@research_app.command("show")
def research_show(
    ctx: typer.Context,
    research_id: ResearchIdArgument,
    as_json: JsonOption = False,
    user: UserOption = "local",
) -> None:
    """One research: its report once finished, else where it stands."""

    async def work(runtime: Runtime) -> Research:
        return await ResearchService(runtime).get(await _owner(runtime, user), research_id)

    with _handled():
        research = run_with_runtime(ctx, work)
    if as_json:
        typer.echo(research.model_dump_json(indent=2))
    elif research.status in (ResearchStatus.COMPLETED, ResearchStatus.FAILED):
        print_outcome(research)
    else:
        out = Console()
        out.print(f"[bold]{escape(research.title)}[/] ({research.status})", highlight=False)
        if research.llm_results:
            out.print(results_table(research))
        out.print(STATUS_HINTS[research.status], highlight=False)
        verb = "Start" if research.status is ResearchStatus.DRAFT else "Follow"
        out.print(f"{verb} it: scholarstream research resume {research.id}", highlight=False)


@research_app.command("retry")
def research_retry(
    ctx: typer.Context,
    research_id: ResearchIdArgument,
    on_partial_failure: OnPartialFailureOption = OnPartialFailure.ASK,
    user: UserOption = "local",
) -> None:
    """Retry a failed research (its failed models, else its synthesis) and follow it."""
    session = _Session(research_id=research_id)
    with _handled(session):
        _require_answerable(on_partial_failure)
        answer = _answerer(on_partial_failure)

        async def work(runtime: Runtime) -> Research:
            service = ResearchService(runtime)
            owner = await _owner(runtime, user)
            # What the service would refuse (a research not failed), before the engine starts.
            retry_research(await service.get(owner, research_id))
            async with _engine(runtime):
                seq = await _last_seq(service, owner, research_id)
                research = await service.retry(owner, research_id)
                await _drive(service, owner, research, answer, seq=seq)
            return await service.get(owner, research_id)

        research = run_with_runtime(ctx, work)
    _finish(research)


@research_app.command("resume")
def research_resume(
    ctx: typer.Context,
    research_id: ResearchIdArgument,
    on_partial_failure: OnPartialFailureOption = OnPartialFailure.ASK,
    user: UserOption = "local",
) -> None:
    """Follow a research again (after Ctrl-C): run its calls here, answer a partial
    failure, print the report. A draft is started."""
    session = _Session(research_id=research_id)
    with _handled(session):

        async def work(runtime: Runtime) -> Research:
            service = ResearchService(runtime)
            owner = await _owner(runtime, user)
            research = await service.get(owner, research_id)
            if research.status in (ResearchStatus.COMPLETED, ResearchStatus.FAILED):
                return research
            _require_answerable(on_partial_failure)
            async with _engine(runtime):
                seq = await _last_seq(service, owner, research_id)
                if research.status is ResearchStatus.DRAFT:
                    research = await service.start(owner, research_id)
                await _drive(service, owner, research, _answerer(on_partial_failure), seq=seq)
            return await service.get(owner, research_id)

        research = run_with_runtime(ctx, work)
    _finish(research)


def register(app: typer.Typer) -> None:
    app.add_typer(research_app, name="research")
