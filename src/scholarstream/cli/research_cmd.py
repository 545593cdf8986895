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

import sys
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.markup import escape
from typer.core import TyperGroup

from scholarstream.cli._choices import OnPartialFailure, ResearchStatusChoice
from scholarstream.cli._failures import Failure, json_output, show
from scholarstream.cli._tables import list_table, resolve_id, short_id
from scholarstream.cli.context import UserOption, err_console, run_with_runtime
from scholarstream.errors import (
    ConfigurationError,
    InvalidInputError,
    MissingCredentialsError,
    ScholarStreamError,
    UnknownProviderError,
)

# The research feature, the engine and the views are imported by each command when it
# runs (from ``_research_run``), so that ``--help`` imports none of them.
if TYPE_CHECKING:
    from scholarstream.research import Research, ResearchService
    from scholarstream.runtime import Runtime

# Exit code 2: the command as given cannot work (main() also gives 2 to the first two).
_USAGE_ERRORS = (
    ConfigurationError,
    InvalidInputError,
    MissingCredentialsError,
    UnknownProviderError,
)


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


@dataclass
class _Session:
    """What an interrupted command needs to say where its research is."""

    research_id: uuid.UUID | None = None


# --- errors and interruptions --------------------------------------------------------------


@contextmanager
def _handled(session: _Session | None = None) -> Iterator[None]:
    """Product errors as two plain lines (the JSON error object with ``--json``) and an exit
    code, never a traceback; Ctrl-C in a command following a research (``session``) as
    where to find it again."""
    try:
        yield
    except ScholarStreamError as exc:
        where = None
        if session is not None and session.research_id is not None:
            where = _where_it_is(session.research_id)
        code = 2 if isinstance(exc, _USAGE_ERRORS) else 1
        failure = Failure(exc.code, exc.message, exc.hint, code)
        show(failure, as_json=json_output(), also=where)
        raise typer.Exit(code) from None
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


async def _research_id(service: "ResearchService", owner: uuid.UUID, text: str) -> uuid.UUID:
    """The research ``text`` names: its whole id, or the first characters of it that no
    other research of the user's shares (as 'research list' shows them)."""
    try:
        return uuid.UUID(text)
    except ValueError:
        pass
    listed = await service.list(owner)
    return resolve_id(
        text, (r.id for r in listed), what="research", listed_by="scholarstream research list"
    )


def _require_answerable(on_partial_failure: OnPartialFailure) -> None:
    if on_partial_failure is OnPartialFailure.ASK and not sys.stdin.isatty():
        raise InvalidInputError(
            "The input is not a terminal, so nobody can be asked what to do if some models fail.",
            hint="Pass --on-partial-failure proceed (synthesise the answers received), retry "
            "(call the failed models again) or cancel.",
        )


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
    str,
    typer.Argument(
        help="The research's id, or its first characters ('scholarstream research list').",
        metavar="ID",
    ),
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
    evidence: Annotated[
        bool,
        typer.Option(
            "--evidence",
            help="First find the evidence for the prompt (your library and the sources): "
            "every model gets it and cites it, and every citation is checked.",
        ),
    ] = False,
    evidence_size: Annotated[
        int | None,
        typer.Option("--evidence-size", min=1, max=100, help="Records of evidence (default 20)."),
    ] = None,
    evidence_source: Annotated[
        list[str] | None,
        typer.Option(
            "--evidence-source",
            help="Where to look for evidence, e.g. library, pubmed (repeatable; default: "
            "your library and the default sources).",
        ),
    ] = None,
    on_partial_failure: OnPartialFailureOption = OnPartialFailure.ASK,
    user: UserOption = "local",
) -> None:
    """Ask several models, follow their progress, print the synthesis and each report."""
    from scholarstream.cli._research_run import (
        answerer,
        check_startable,
        drive,
        durable_engine,
        external_report_of,
        finish,
        model_strings,
        owner_of,
        print_evidence_found,
    )
    from scholarstream.grounding.evidence import EvidenceFinder, EvidenceOptions, EvidenceRequest
    from scholarstream.research import DraftRequest, research_evidence, research_service

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
            selected_llms=model_strings(models) if models else None,
            synthesis_llm=model_strings([synthesis])[0] if synthesis else None,
            external_reports=[external_report_of(path) for path in external_report or []],
        )
        answer = answerer(on_partial_failure)
        asked = evidence or evidence_size is not None or bool(evidence_source)
        wanted = EvidenceOptions(size=evidence_size, sources=evidence_source) if asked else None

        async def work(runtime: "Runtime") -> "Research":
            service = research_service(runtime)
            owner = await owner_of(runtime, user)
            await check_startable(runtime, service, owner, request)
            # The models first (none configured: say so and how to configure one), then
            # whether anyone can be asked what to do when some of them fail.
            _require_answerable(on_partial_failure)
            if wanted is not None:  # a source nobody knows is refused before any draft
                EvidenceFinder.for_runtime(runtime).sources_for(
                    EvidenceRequest.for_question(prompt, wanted)
                )
            async with durable_engine(runtime):
                draft = await service.draft(owner, request)
                session.research_id = draft.id
                if wanted is not None:
                    found = await research_evidence(runtime).find(owner, draft.id, wanted)
                    print_evidence_found(found)
                started = await service.start(owner, draft.id)
                research = await drive(service, owner, started, answer, seq=0)
            return await service.get(owner, research.id)  # with its share link, if shared

        research = run_with_runtime(ctx, work)
    finish(research)


@research_app.command("list")
def research_list(
    ctx: typer.Context,
    status: Annotated[
        list[ResearchStatusChoice] | None,
        typer.Option(
            "--status",
            metavar="STATUS",
            help="Only research in this status (repeatable): "
            f"{', '.join(choice.value for choice in ResearchStatusChoice)}.",
        ),
    ] = None,
    as_json: JsonOption = False,
    user: UserOption = "local",
) -> None:
    """Your research, newest first."""
    from rich.console import Console

    from scholarstream.cli._research_run import ResearchList, owner_of
    from scholarstream.research import ResearchStatus, research_service

    statuses = None if status is None else [ResearchStatus(choice.value) for choice in status]

    async def work(runtime: "Runtime") -> "list[Research]":
        return await research_service(runtime).list(
            await owner_of(runtime, user), statuses=statuses
        )

    with _handled():
        found = run_with_runtime(ctx, work)
    if as_json:
        typer.echo(ResearchList(research=found).model_dump_json(indent=2))
        return
    if not found:
        typer.echo('No research yet: scholarstream research "PROMPT" --models a,b starts one.')
        return
    # Short ids: 'research show', 'retry' and 'resume' take them back.
    table = list_table(
        f"{len(found)} research",
        ["id", "title", "status", "answered", "created"],
        title_column="title",
    )
    for research in found:
        answered = len(research.successful_results)
        table.add_row(
            short_id(research.id),
            escape(research.title),
            str(research.status).replace("_", " "),
            f"{answered}/{len(research.selected_llms)}",
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
    from rich.console import Console

    from scholarstream.cli._research_run import owner_of
    from scholarstream.cli.research_views import print_outcome, results_table
    from scholarstream.research import STATUS_HINTS, ResearchStatus, research_service

    async def work(runtime: "Runtime") -> "Research":
        service = research_service(runtime)
        owner = await owner_of(runtime, user)
        return await service.get(owner, await _research_id(service, owner, research_id))

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
    """Retry a failed research (its failed models, else its synthesis), or the synthesis
    of a completed one that has none because it failed, and follow it."""
    from scholarstream.cli._research_run import (
        answerer,
        drive,
        durable_engine,
        finish,
        last_seq,
        owner_of,
    )
    from scholarstream.research import research_service, retry_research

    session = _Session()
    with _handled(session):
        answer = answerer(on_partial_failure)

        async def work(runtime: "Runtime") -> "Research":
            service = research_service(runtime)
            owner = await owner_of(runtime, user)
            found = session.research_id = await _research_id(service, owner, research_id)
            # What the service would refuse (a research neither failed nor completed without
            # its failed synthesis), before the engine starts.
            retry_research(await service.get(owner, found))
            _require_answerable(on_partial_failure)
            async with durable_engine(runtime):
                seq = await last_seq(service, owner, found)
                research = await service.retry(owner, found)
                await drive(service, owner, research, answer, seq=seq)
            return await service.get(owner, found)

        research = run_with_runtime(ctx, work)
    finish(research)


@research_app.command("resume")
def research_resume(
    ctx: typer.Context,
    research_id: ResearchIdArgument,
    on_partial_failure: OnPartialFailureOption = OnPartialFailure.ASK,
    user: UserOption = "local",
) -> None:
    """Follow a research again (after Ctrl-C): run its calls here, answer a partial
    failure, print the report. A draft is started."""
    from scholarstream.cli._research_run import (
        answerer,
        drive,
        durable_engine,
        finish,
        last_seq,
        owner_of,
    )
    from scholarstream.research import ResearchStatus, research_service

    session = _Session()
    with _handled(session):

        async def work(runtime: "Runtime") -> "Research":
            service = research_service(runtime)
            owner = await owner_of(runtime, user)
            found = session.research_id = await _research_id(service, owner, research_id)
            research = await service.get(owner, found)
            if research.status in (ResearchStatus.COMPLETED, ResearchStatus.FAILED):
                return research
            _require_answerable(on_partial_failure)
            async with durable_engine(runtime):
                seq = await last_seq(service, owner, found)
                if research.status is ResearchStatus.DRAFT:
                    research = await service.start(owner, found)
                await drive(service, owner, research, answerer(on_partial_failure), seq=seq)
            return await service.get(owner, found)

        research = run_with_runtime(ctx, work)
    finish(research)


def register(app: typer.Typer) -> None:
    app.add_typer(research_app, name="research")
