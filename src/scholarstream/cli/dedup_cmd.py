"""``scholarstream dedup FILE... --out OUT.csv``: find duplicate records across
bibliographic files.

Every input record gets exactly one row ``record_id,cluster_id``; records sharing a
cluster id are copies of one work. Rows follow the input (files in the order given,
records in file order). ``record_id`` is the record's own id in its file (RIS ID, BibTeX
key, EndNote record number, CSV ID column, PMID); a record without one is named
``<file name>:<n>``, its number among the file's records. A record read whole that cannot
be compared (no title) is its own cluster, and is reported; only damage that is not a
record (broken markup, text between records, a cut-off file) is reported and gets no row.
Nothing is written to the library.
"""

import csv
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, TextIO

import typer
from rich.markup import escape

from scholarstream.cli.context import err_console
from scholarstream.errors import InvalidInputError

if TYPE_CHECKING:
    from scholarstream.papers import Record
    from scholarstream.papers.formats import RecordProblem

MAX_PROBLEMS_SHOWN = 20
HEADER = ("record_id", "cluster_id")


@dataclass
class FileRecords:
    path: Path
    format_label: str = ""
    ids: list[str] = field(default_factory=list)
    records: "list[Record | None]" = field(default_factory=list)
    """One entry per row: ``None`` for a record read whole that cannot be compared."""
    problems: "list[RecordProblem]" = field(default_factory=list)

    @property
    def skipped(self) -> int:
        """Problems that are damage, not records: they get no row."""
        return sum(1 for problem in self.problems if not problem.whole)


def dedup_files(
    files: Annotated[
        list[Path], typer.Argument(help="Reference files, any import format (.gz works too).")
    ],
    out: Annotated[
        Path,
        typer.Option("--out", help="CSV to write (record_id,cluster_id); '-' for standard output."),
    ],
    format_name: Annotated[
        str | None,
        typer.Option("--format", help="Format of every file; detected from content if omitted."),
    ] = None,
) -> None:
    """Find duplicate records in and across reference files (PubMed XML, MEDLINE, RIS,
    BibTeX, EndNote XML, CSV, JSON) and write which records are copies of one work.

    Writes one row per input record, `record_id,cluster_id`; records with the same
    cluster id are duplicates. A record without an id in its file is named
    `<file name>:<n>`. A record without a title cannot be compared: it is its own
    cluster. Damaged records are reported and skipped.
    """
    from scholarstream.papers.dedup import find_clusters

    _check_paths(files, out, format_name)
    read = _read_all(files, format_name)
    _print_files(read)
    records = [record for part in read for record in part.records]
    if not records:
        skipped = sum(len(part.problems) for part in read)
        raise InvalidInputError(
            f"No records found in {', '.join(str(f) for f in files)}"
            + (f" ({skipped} malformed skipped)." if skipped else "."),
            hint="Check that the files are reference exports (RIS, BibTeX, PubMed XML, "
            "MEDLINE, EndNote XML, CSV with a title column, JSON); pass --format if the "
            "format is detected wrongly.",
        )
    with err_console.status(f"Finding duplicates among {len(records)} records…"):
        clusters = find_clusters(records)
    labels = cluster_labels(clusters, len(records))
    ids = [record_id for part in read for record_id in part.ids]
    with _output(out) as handle:
        write_rows(handle, ids, labels)
    skipped = sum(part.skipped for part in read)
    target = "standard output" if str(out) == "-" else str(out)
    err_console.print(
        f"Records: {len(records)}  clusters: {len(clusters)}  "
        f"duplicates: {len(records) - len(clusters)}  skipped: {skipped}  -> {escape(target)}",
        highlight=False,
    )


def cluster_labels(clusters: Sequence[Sequence[int]], size: int) -> list[str]:
    """``c000001``, ``c000002``, … per record, numbered by each cluster's first record."""
    labels = [""] * size
    for number, cluster in enumerate(clusters, start=1):
        for index in cluster:
            labels[index] = f"c{number:06d}"
    return labels


def write_rows(handle: TextIO, ids: Sequence[str], labels: Sequence[str]) -> None:
    writer = csv.writer(handle, lineterminator="\n")
    writer.writerow(HEADER)
    writer.writerows(zip(ids, labels, strict=True))


def _check_paths(files: Sequence[Path], out: Path, format_name: str | None) -> None:
    from scholarstream.papers.formats import get_format

    if format_name is not None:
        get_format(format_name)  # an unknown name fails before any reading
    missing = [str(f) for f in files if not f.is_file()]
    if missing:
        raise InvalidInputError(
            f"Not a file: {', '.join(missing)}.", hint="Check the paths; nothing was written."
        )
    if str(out) != "-":
        if out.is_dir():
            raise InvalidInputError(f"{out} is a directory.", hint="Give a file name to --out.")
        if not out.parent.is_dir():
            raise InvalidInputError(
                f"The folder of {out} does not exist.",
                hint="Create the folder first, or write somewhere else with --out.",
            )


def _read_all(files: Sequence[Path], format_name: str | None) -> list[FileRecords]:
    from rich.progress import BarColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

    from scholarstream.papers.formats import RecordProblem, open_records

    read: list[FileRecords] = []
    with Progress(
        SpinnerColumn(),
        TextColumn("{task.description}"),
        BarColumn(),
        TextColumn("{task.fields[records]} records"),
        TimeElapsedColumn(),
        console=err_console,
        transient=True,
    ) as progress:
        for path in files:
            task = progress.add_task(f"Reading {path.name}", total=path.stat().st_size, records=0)
            part = FileRecords(path)
            try:
                stream = path.open("rb")
            except OSError as exc:
                raise InvalidInputError(
                    f"Cannot open {path}: {exc.strerror or exc}.",
                    hint="Check that the file is readable; nothing was written.",
                ) from exc
            with stream:
                file_format, items = open_records(stream, path.name, format_name)
                part.format_label = file_format.label
                number = 0  # the record's number in the file, as the reader counts
                for item in items:
                    if isinstance(item, RecordProblem):
                        part.problems.append(item)
                        number = max(number, item.record_number)
                        if not item.whole:
                            continue
                        record: Record | None = None
                        record_id = item.record_id
                    else:
                        number += 1
                        record, record_id = item, item.record_id
                    part.records.append(record)
                    part.ids.append(record_id or f"{path.name}:{number}")
                    if len(part.records) % 500 == 0:
                        progress.update(task, completed=stream.tell(), records=len(part.records))
            progress.remove_task(task)
            read.append(part)
    return read


@contextmanager
def _output(out: Path) -> Iterator[TextIO]:
    """Standard output for ``-``; otherwise a ``.partial`` file beside the target, renamed
    when complete, so a failure never leaves a half-written file where a good one was."""
    if str(out) == "-":
        yield sys.stdout
        sys.stdout.flush()
        return
    partial = out.with_name(out.name + ".partial")
    try:
        with partial.open("w", encoding="utf-8", newline="") as handle:
            yield handle
        partial.replace(out)
    except OSError as exc:
        raise InvalidInputError(
            f"Cannot write {out}: {exc.strerror or exc}.",
            hint="Check that the folder is writable and the disk is not full.",
        ) from exc
    finally:
        partial.unlink(missing_ok=True)


def _print_files(read: Sequence[FileRecords]) -> None:
    """Records per file, the ones that could not be compared (each its own cluster) and
    the damaged ones that were skipped (file, number, line)."""
    for part in read:
        alone = len(part.problems) - part.skipped
        notes = (f", {alone} not compared" if alone else "") + (
            f", {part.skipped} skipped" if part.skipped else ""
        )
        err_console.print(
            escape(f"{part.path.name} ({part.format_label}): {len(part.records)} records{notes}"),
            highlight=False,
        )
        for problem in part.problems[:MAX_PROBLEMS_SHOWN]:
            where = f"record {problem.record_number}"
            if problem.line is not None:
                where += f", line {problem.line}"
            if problem.whole:
                label = "Not compared (its own cluster)"
                message = problem.message.removesuffix("; skipped")
            else:
                label, message = "Skipped", problem.message
            err_console.print(
                f"[yellow]{label}[/] {escape(f'{part.path.name} ({where}): {message}')}",
                highlight=False,
            )
        hidden = len(part.problems) - MAX_PROBLEMS_SHOWN
        if hidden > 0:
            err_console.print(escape(f"… and {hidden} more problems in {part.path.name}."))


def register(app: typer.Typer) -> None:
    app.command("dedup")(dedup_files)
