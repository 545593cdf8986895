"""The file-format registry: each format registers how to recognise, read and write it.

Readers stream: they yield one ``Paper``/``Trial`` per valid record and one
``RecordProblem`` per malformed record (which is then skipped), never holding the whole
file in memory. Writers take any iterable of records and write text.
"""

from __future__ import annotations

import gzip
import io
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO, TextIO, cast

from scholarstream.errors import InvalidInputError
from scholarstream.papers.model import Paper, Trial

SNIFF_BYTES = 4096


@dataclass(frozen=True)
class RecordProblem:
    """A record that could not be read: where it is and what is wrong with it."""

    file: str
    record_number: int
    message: str
    line: int | None = None

    def __str__(self) -> str:
        where = f"{self.file}, record {self.record_number}"
        if self.line is not None:
            where += f" (line {self.line})"
        return f"{where}: {self.message}"


ReadItem = Paper | Trial | RecordProblem
Reader = Callable[[BinaryIO, str], Iterator[ReadItem]]
"""``reader(stream, filename)``: the stream is binary and already decompressed."""
Writer = Callable[[Iterable[Paper | Trial], TextIO], int]
"""``writer(records, out)`` writes the records and returns how many it wrote."""
Sniffer = Callable[[bytes], bool]
"""``sniffer(head)``: does this file's first ``SNIFF_BYTES`` bytes look like the format?"""


@dataclass(frozen=True)
class FileFormat:
    name: str
    label: str
    extensions: tuple[str, ...]
    sniff: Sniffer
    read: Reader | None = None
    write: Writer | None = None
    media_type: str = "text/plain"
    export_extension: str = ""
    aliases: tuple[str, ...] = field(default=())


_FORMATS: dict[str, FileFormat] = {}


def register_format(file_format: FileFormat) -> FileFormat:
    for name in (file_format.name, *file_format.aliases):
        if name in _FORMATS:
            raise ValueError(f"format {name!r} is registered twice")
        _FORMATS[name] = file_format
    return file_format


def formats() -> list[FileFormat]:
    return list({id(f): f for f in _FORMATS.values()}.values())


def import_format_names() -> list[str]:
    return sorted(f.name for f in formats() if f.read is not None)


def export_format_names() -> list[str]:
    return sorted(f.name for f in formats() if f.write is not None)


def get_format(name: str, *, for_export: bool = False) -> FileFormat:
    file_format = _FORMATS.get(name.lower())
    usable = file_format is not None and (
        file_format.write is not None if for_export else file_format.read is not None
    )
    if file_format is None or not usable:
        names = export_format_names() if for_export else import_format_names()
        raise InvalidInputError(
            f"Unknown {'export' if for_export else 'import'} format {name!r}.",
            hint=f"Use one of: {', '.join(names)}.",
        )
    return file_format


def detect_format(filename: str, head: bytes) -> FileFormat:
    """By content first (extensions lie: ``.txt`` holds RIS or MEDLINE), then extension."""
    readable = [f for f in formats() if f.read is not None]
    for file_format in readable:
        if file_format.sniff(head):
            return file_format
    suffixes = [s.lower() for s in Path(filename).suffixes if s.lower() != ".gz"]
    for file_format in readable:
        if suffixes and suffixes[-1] in file_format.extensions:
            return file_format
    raise InvalidInputError(
        f"Cannot tell the format of {filename}.",
        hint=f"Pass the format explicitly; known formats: {', '.join(import_format_names())}.",
    )


def _peekable(stream: BinaryIO | gzip.GzipFile) -> io.BufferedReader:
    if isinstance(stream, io.BufferedReader):
        return stream
    return io.BufferedReader(cast("io.RawIOBase", stream))


def open_records(
    stream: BinaryIO, filename: str, format_name: str | None = None
) -> tuple[FileFormat, Iterator[ReadItem]]:
    """The file's format (given, or detected from its content) and its records, streamed
    from an open binary stream (gzip is detected and unpacked)."""
    buffered = _peekable(stream)
    if buffered.peek(2)[:2] == b"\x1f\x8b":
        buffered = _peekable(gzip.GzipFile(fileobj=buffered))
    head = buffered.peek(SNIFF_BYTES)[:SNIFF_BYTES]
    file_format = get_format(format_name) if format_name else detect_format(filename, head)
    assert file_format.read is not None
    return file_format, file_format.read(buffered, filename)


def read_stream(
    stream: BinaryIO, filename: str, format_name: str | None = None
) -> Iterator[ReadItem]:
    """Read records from an open binary stream (gzip is detected and unpacked)."""
    return open_records(stream, filename, format_name)[1]


def read_file(path: Path, format_name: str | None = None) -> Iterator[ReadItem]:
    """Stream the records of a file. Raises ``InvalidInputError`` if it cannot be opened."""
    try:
        stream = path.open("rb")
    except OSError as exc:
        raise InvalidInputError(
            f"Cannot open {path}: {exc.strerror or exc}.",
            hint="Check the path and that the file is readable.",
        ) from exc
    return _closing(read_stream(stream, path.name, format_name), stream)


def _closing(items: Iterator[ReadItem], stream: BinaryIO) -> Iterator[ReadItem]:
    with stream:
        yield from items
