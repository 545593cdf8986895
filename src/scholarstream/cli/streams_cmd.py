"""``streams list|run|reports|report``: research streams from the terminal (create them
with the guide in the web UI or over the API). ``streams run`` runs the stream as a durable
workflow, like the web UI's **Run now**, and waits for its report. A stream or a report is
named by its whole id or by its first characters, as the lists show them.

The features are imported by the commands that use them: ``--help`` imports none."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from scholarstream.cli._tables import find_id, list_table, short_id
from scholarstream.cli.context import UserOption, console, resolve_user, run_with_runtime
from scholarstream.cli.library_labels_cmd import records

if TYPE_CHECKING:
    from scholarstream.runtime import Runtime
    from scholarstream.streams import Stream
    from scholarstream.streams.monitoring import ReportSummary, StoredReport

streams_app = typer.Typer(help="Research streams and their reports.", no_args_is_help=True)

_SHOWN_ITEMS = 10
JsonOption = Annotated[bool, typer.Option("--json", help="Print JSON instead of a table.")]
StreamArgument = Annotated[
    str,
    typer.Argument(
        metavar="STREAM",
        help="The stream's id, or its first characters ('scholarstream streams list').",
    ),
]
ReportArgument = Annotated[
    str,
    typer.Argument(
        metavar="REPORT",
        help="The report's id, or its first characters ('scholarstream streams reports STREAM').",
    ),
]


async def _owner(runtime: Runtime, user: str) -> uuid.UUID:
    async with runtime.database.session() as session:
        return (await resolve_user(session, user)).id


async def _stream_id(runtime: Runtime, owner: uuid.UUID, text: str) -> uuid.UUID:
    """The stream ``text`` names: its whole id, or a prefix no other stream of the user's
    shares (as 'streams list' shows them)."""
    from scholarstream.streams import StreamStore

    async def listed() -> list[uuid.UUID]:
        return [stream.id for stream in await StreamStore(runtime.database).list(owner)]

    return await find_id(text, listed, what="stream", listed_by="scholarstream streams list")


async def _report_id(
    runtime: Runtime, owner: uuid.UUID, stream_id: uuid.UUID, text: str
) -> uuid.UUID:
    """The report of the stream that ``text`` names, as ``_stream_id`` names a stream."""
    from scholarstream.streams.monitoring import ReportStore

    async def listed() -> list[uuid.UUID]:
        return [report.id for report in await ReportStore(runtime.database).list(owner, stream_id)]

    return await find_id(
        text,
        listed,
        what="report",
        listed_by=f"scholarstream streams reports {short_id(stream_id)}",
    )


@streams_app.command("list")
def streams_list(
    ctx: typer.Context, as_json: JsonOption = False, user: UserOption = "local"
) -> None:
    """Your streams, newest first."""
    from scholarstream.streams import StreamList, StreamStore

    async def work(runtime: Runtime) -> list[Stream]:
        return await StreamStore(runtime.database).list(await _owner(runtime, user))

    streams = run_with_runtime(ctx, work)
    if as_json:
        typer.echo(StreamList(streams=streams).model_dump_json(indent=2))
        return
    if not streams:
        console.print("No streams yet: create one at /streams/new in the web UI.")
        return
    from rich.markup import escape

    columns = ["id", "name", "type", "every", "last run", "on"]
    table = list_table(records(len(streams), "stream"), columns, title_column="name")
    for stream in streams:
        table.add_row(
            short_id(stream.id),
            escape(stream.stream_name),
            stream.stream_type.value,
            stream.report_frequency.value,
            stream.last_run_at.isoformat(timespec="minutes") if stream.last_run_at else "never",
            "yes" if stream.enabled else "no",
        )
    console.print(table)


def _source_labels(runtime: Runtime) -> dict[str, str]:
    """Each source's name as a user reads it ("Semantic Scholar"), by its id."""
    from scholarstream.sources.library import LIBRARY_INFO

    return {info.name: info.label for info in [LIBRARY_INFO, *runtime.sources.infos()]}


def _labelled(names: list[str], labels: dict[str, str]) -> str:
    return ", ".join(labels.get(name, name) for name in names)


def _print_report(
    stored: StoredReport, labels: dict[str, str], *, shown: int | None = None
) -> None:
    """The run's outcome and its items (``shown``: the first ones only, with the command
    that lists them all)."""
    report = stored.report
    new = report.counts.new if report else 0
    first = ", the stream's first run" if stored.first else ""
    console.print(
        f"[bold]{stored.status}[/]: {new} new item{'s' if new != 1 else ''} since "
        f"{stored.since.date().isoformat()}{first} (report {short_id(stored.id)})",
        highlight=False,
    )
    for source in stored.sources:
        label = labels.get(source.source, source.source)
        if not source.ok:
            console.print(f"  [red]{label} failed:[/] {source.error}", highlight=False)
        elif source.total is not None and source.total > source.found:
            # A source gives the stream its best matches only, up to the query's limit.
            console.print(
                f"  {label}: {source.total:,} matched, the best {source.found:,} taken "
                "(raise its Results per run, up to 500, on the stream's page to take more)",
                highlight=False,
            )
    for delivery in stored.notifications:
        outcome = "sent" if delivery.ok else f"failed: {delivery.error}"
        console.print(f"  notified {delivery.label}: {outcome}", highlight=False)
    if report is None:
        if stored.error:
            console.print(stored.error, highlight=False)
        return
    for rank, item in enumerate(report.items[:shown], start=1):
        console.print(
            f"{rank:>3}. [bold]{item.record.title}[/] ({item.score:.2f})\n     {item.reason}",
            highlight=False,
        )
    if shown is not None and len(report.items) > shown:
        every = f"scholarstream streams report {short_id(stored.stream_id)} {short_id(stored.id)}"
        console.print(
            f"     … and {len(report.items) - shown} more: `{every}` lists them all.",
            highlight=False,
        )


@streams_app.command("run")
def streams_run(
    ctx: typer.Context,
    stream: StreamArgument,
    user: UserOption = "local",
) -> None:
    """Run a stream now: search since its last run, report what is new, notify.

    The run is a durable workflow on the stream-runs queue: this command (or a worker
    sharing its database) runs it, and it waits for the report. Killed, the command leaves
    a run that the next process of the engine finishes (another command, serve or
    worker)."""

    async def work(runtime: Runtime) -> tuple[StoredReport, dict[str, str]]:
        from scholarstream.bootstrap import build_engine
        from scholarstream.durable import CLI
        from scholarstream.streams.monitoring import (
            STREAM_RUN_QUEUE,
            start_stream_run,
            wait_for_run,
        )

        owner = await _owner(runtime, user)
        stream_id = await _stream_id(runtime, owner, stream)
        # Works only the stream-runs queue (this run, or another one waiting there) and
        # runs no scheduled workflow, under an executor id of its own for this run.
        engine = build_engine(runtime, role=CLI, queues=(STREAM_RUN_QUEUE,))
        await engine.launch()
        try:
            started = await start_stream_run(runtime.database, owner, stream_id)
            return await wait_for_run(runtime.database, owner, started), _source_labels(runtime)
        finally:
            await engine.shutdown()

    stored, labels = run_with_runtime(ctx, work)
    _print_report(stored, labels, shown=_SHOWN_ITEMS)
    if stored.status == "failed":
        raise typer.Exit(1)


@streams_app.command("reports")
def streams_reports(
    ctx: typer.Context,
    stream: StreamArgument,
    as_json: JsonOption = False,
    user: UserOption = "local",
) -> None:
    """A stream's reports, newest first."""
    from scholarstream.streams.monitoring import ReportList, ReportStore

    async def work(runtime: Runtime) -> tuple[list[ReportSummary], dict[str, str]]:
        owner = await _owner(runtime, user)
        stream_id = await _stream_id(runtime, owner, stream)
        listed = await ReportStore(runtime.database).list(owner, stream_id)
        return listed, _source_labels(runtime)

    summaries, labels = run_with_runtime(ctx, work)
    if as_json:
        typer.echo(ReportList(reports=summaries).model_dump_json(indent=2))
        return
    columns = ["id", "started", "status", "new", "failed"]
    table = list_table(records(len(summaries), "report"), columns, title_column="failed")
    for summary in summaries:
        table.add_row(
            short_id(summary.id),
            summary.started_at.isoformat(timespec="minutes"),
            summary.status,
            str(summary.counts.new) if summary.counts else "",
            _labelled(summary.failed_sources, labels),
        )
    console.print(table)


@streams_app.command("report")
def streams_report(
    ctx: typer.Context,
    stream: StreamArgument,
    report: ReportArgument,
    export: Annotated[
        str | None, typer.Option("--export", help="Write the items as ris, bibtex, csv or json.")
    ] = None,
    out: Annotated[Path | None, typer.Option("--out", help="File for --export.")] = None,
    as_json: JsonOption = False,
    user: UserOption = "local",
) -> None:
    """One report: its items with their reasons, or exported."""
    from scholarstream.papers.formats import get_format
    from scholarstream.streams.monitoring import ReportStore, export_report

    file_format = get_format(export, for_export=True) if export else None

    async def work(runtime: Runtime) -> tuple[StoredReport, dict[str, str]]:
        owner = await _owner(runtime, user)
        stream_id = await _stream_id(runtime, owner, stream)
        report_id = await _report_id(runtime, owner, stream_id, report)
        stored = await ReportStore(runtime.database).get(owner, stream_id, report_id)
        return stored, _source_labels(runtime)

    stored, labels = run_with_runtime(ctx, work)
    if as_json:
        typer.echo(stored.model_dump_json(indent=2))
    elif file_format is None or stored.report is None:
        _print_report(stored, labels)
    if file_format is not None and stored.report is not None:
        if out is None:
            export_report(stored.report, file_format.name, typer.get_text_stream("stdout"))
        else:
            with out.open("w", encoding="utf-8", newline="") as handle:
                count = export_report(stored.report, file_format.name, handle)
            console.print(f"Exported {count} items to {out}.", highlight=False)


def register(app: typer.Typer) -> None:
    app.add_typer(streams_app, name="streams")
