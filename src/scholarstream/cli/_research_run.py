"""What ``scholarstream research`` does once a command runs (the commands and their
options are in ``research_cmd``, which imports this module inside each command, so that
``--help`` imports no feature): the options checked, the research drafted and started,
followed to its end on the durable engine launched in this process, partial failures
answered, the outcome printed."""

from __future__ import annotations

import asyncio
import threading
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TypeVar

import typer
from pydantic import BaseModel
from rich.markup import escape
from rich.prompt import Prompt

from scholarstream.bootstrap import build_engine
from scholarstream.cli._choices import OnPartialFailure
from scholarstream.cli.context import err_console, resolve_user
from scholarstream.cli.research_views import SETTLED, ProgressView, print_outcome, progress_view
from scholarstream.db import OwnerScope
from scholarstream.durable import CLI
from scholarstream.errors import InvalidInputError, UnknownProviderError
from scholarstream.llm import split_model_string
from scholarstream.research import (
    CALL_QUEUE,
    MAX_RETRIES,
    SYNTHESIS_ROLE,
    ConfirmAction,
    DraftRequest,
    ExternalReport,
    FoundEvidence,
    LLMResultStatus,
    Research,
    ResearchService,
    ResearchStatus,
    check_can_start,
    create_draft,
    models_needing_credentials,
    synthesis_may_run,
)
from scholarstream.research.core import check_selected_llms
from scholarstream.runtime import Runtime

T = TypeVar("T")

POLL_SECONDS = 0.2


class ResearchList(BaseModel):
    research: list[Research]


# --- the options -----------------------------------------------------------------------------


def model_strings(values: list[str]) -> list[str]:
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


def external_report_of(path: Path) -> ExternalReport:
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


async def owner_of(runtime: Runtime, user: str) -> uuid.UUID:
    async with runtime.database.session() as session:
        return (await resolve_user(session, user)).id


async def check_startable(
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


async def last_seq(service: ResearchService, owner: uuid.UUID, research_id: uuid.UUID) -> int:
    events = await service.events(owner, research_id)
    return events[-1].seq if events else 0


async def follow(
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


def answerer(choice: OnPartialFailure) -> Answer:
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


async def drive(
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
            research, seq = await follow(service, owner, research, view, seq)
            if research.status is not ResearchStatus.AWAITING_CONFIRMATION:
                return research
            view.close()
            action = await answer(research)
            research = await service.confirm(owner, research.id, action)
    finally:
        view.close()


@asynccontextmanager
async def durable_engine(runtime: Runtime) -> AsyncIterator[None]:
    """The durable engine in this process for as long as the command follows a research:
    it runs the model calls and the synthesis. Its shutdown waits a few seconds for the
    work still running, such as the sharing of a research just completed: the research is
    read again after it, for its share link.

    It works only the ``llm-calls`` queue (calls and syntheses, of this research or any
    other) and runs no scheduled workflow, under an executor id of its own for this run:
    what it leaves unfinished is recovered at once by the next process looking (another
    ``research`` command, ``serve`` or ``worker``; docs/deployment.md)."""
    engine = build_engine(runtime, role=CLI, queues=(CALL_QUEUE,))
    await engine.launch()
    try:
        yield
    finally:
        await engine.shutdown()


def finish(research: Research) -> None:
    print_outcome(research)
    if research.status is not ResearchStatus.COMPLETED:
        raise typer.Exit(1)


def print_evidence_found(found: FoundEvidence) -> None:
    """One line on the pack found for a draft, and one per source that failed."""
    pack = found.research.evidence
    count = len(pack.items) if pack else 0
    search = found.search
    if count:
        line = (
            f"Evidence: {count} record{'' if count == 1 else 's'} from {search.distinct} "
            "distinct works found; every model gets them and cites them."
        )
    else:
        line = "No evidence was found for the prompt: every model gets the bare prompt."
    err_console.print(line, highlight=False)
    for source in search.failed:
        err_console.print(
            f"  {escape(source.label)}: {escape(source.error or 'failed')}", highlight=False
        )
