"""JSON: our own ``Paper``/``Trial`` objects, the one format that holds every field.

Read as a JSON array (streamed item by item with ``ijson``), as JSON Lines (one object per
line), or as ``{"records": [...]}``. An item the model refuses is reported with the field
at fault and skipped; JSON that stops being JSON ends the array there (a parser cannot
find the next item in broken syntax), while in JSON Lines only the broken line is lost.
The writer streams an array of ``model_dump(mode="json", exclude_none=True)`` objects.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator
from typing import Any, BinaryIO, TextIO

import ijson
from pydantic import TypeAdapter, ValidationError

from scholarstream.errors import InvalidInputError
from scholarstream.papers.formats._fields import sniff_text, validation_message
from scholarstream.papers.formats.base import (
    FileFormat,
    ReadItem,
    RecordProblem,
    register_format,
)
from scholarstream.papers.model import Paper, Record, Trial

_RECORD: TypeAdapter[Paper | Trial] = TypeAdapter(Record)
_SNIFF = re.compile(r'^\s*(?:\[\s*(?:\{|\]|$)|\{\s*(?:"|$))')
_WHITESPACE = b" \t\r\n"
_BOM = b"\xef\xbb\xbf"
_CHUNK = 1 << 16


def sniff_json(head: bytes) -> bool:
    return _SNIFF.match(sniff_text(head)) is not None


class _Replay:
    """The bytes already looked at, then the rest of the stream: ``ijson`` reads this."""

    def __init__(self, prefix: bytes, stream: BinaryIO) -> None:
        self._prefix = prefix
        self._stream = stream

    def read(self, size: int = -1) -> bytes:
        if not self._prefix:
            return self._stream.read(size)
        if size < 0:
            data, self._prefix = self._prefix + self._stream.read(), b""
            return data
        data, self._prefix = self._prefix[:size], self._prefix[size:]
        return data


def _validate(item: Any, filename: str, number: int, line: int | None) -> ReadItem:
    if not isinstance(item, dict):
        kind = type(item).__name__
        return RecordProblem(
            filename, number, f"the item is a JSON {kind}, not an object; skipped", line
        )
    try:
        return _RECORD.validate_python({"kind": "paper", **item})
    except ValidationError as exc:
        return RecordProblem(filename, number, f"{validation_message(exc)}; skipped", line)


def read_json(stream: BinaryIO, filename: str) -> Iterator[ReadItem]:
    start = stream.read(_CHUNK).removeprefix(_BOM)
    line = 1
    while not start.lstrip(_WHITESPACE):
        line += start.count(b"\n")
        start = stream.read(_CHUNK)
        if not start:
            return
    stripped = start.lstrip(_WHITESPACE)
    line += start[: len(start) - len(stripped)].count(b"\n")
    if stripped[:1] == b"[":
        yield from _array(_Replay(stripped, stream), "item", filename)
    elif stripped[:1] == b"{":
        yield from _object_or_lines(stripped, stream, filename, line)
    else:
        raise InvalidInputError(
            f"{filename} is not JSON records: it does not start with '[' or '{{'.",
            hint='Give a JSON array of records, JSON Lines, or {"records": [...]}.',
        )


def _array(source: _Replay, prefix: str, filename: str) -> Iterator[ReadItem]:
    count = 0
    items = ijson.items(source, prefix, use_float=True)
    while True:
        try:
            item = next(items)
        except StopIteration:
            break
        except ijson.JSONError as exc:
            yield RecordProblem(
                filename,
                count + 1,
                f"the JSON is broken after record {count} ({exc}); the rest of the file "
                "cannot be read. Repair it (or export it again) and import it again",
            )
            return
        count += 1
        yield _validate(item, filename, count, None)
    if count == 0 and prefix == "records.item":
        raise InvalidInputError(
            f"{filename} is a JSON object without a 'records' array.",
            hint='Give a JSON array of records, JSON Lines, or {"records": [...]}.',
        )


def _object_or_lines(
    start: bytes, stream: BinaryIO, filename: str, line: int
) -> Iterator[ReadItem]:
    """One object per line is JSON Lines (unless it is the ``records`` wrapper written on
    one line); an object spread over lines is the wrapper, streamed."""
    newline = start.find(b"\n")
    if newline < 0:
        start += stream.readline()
        newline = len(start)
    first, rest = start[: newline + 1], start[newline + 1 :]
    try:
        parsed = json.loads(first)
    except ValueError:
        yield from _array(_Replay(start, stream), "records.item", filename)
        return
    if isinstance(parsed, dict) and isinstance(parsed.get("records"), list):
        for number, item in enumerate(parsed["records"], 1):
            yield _validate(item, filename, number, None)
        return
    yield _validate(parsed, filename, 1, line)
    yield from _lines(_Replay(rest, stream), filename, line)


def _lines(source: _Replay, filename: str, line: int) -> Iterator[ReadItem]:
    """The JSON Lines after the first, each its own record (numbered from 2)."""
    number, pending = 1, b""
    while True:
        chunk = source.read(_CHUNK)
        lines = (pending + chunk).split(b"\n")
        pending = lines.pop() if chunk else b""
        for raw in lines:
            line += 1
            if not raw.strip():
                continue
            number += 1
            try:
                item = json.loads(raw)
            except ValueError as exc:
                yield RecordProblem(
                    filename, number, f"the line is not valid JSON ({exc}); skipped", line
                )
                continue
            yield _validate(item, filename, number, line)
        if not chunk:
            return


def write_json(records: Iterable[Paper | Trial], out: TextIO) -> int:
    """One record at a time: the export never holds the whole list."""
    count = 0
    out.write("[")
    for record in records:
        out.write(",\n" if count else "\n")
        out.write(json.dumps(record.model_dump(mode="json", exclude_none=True), ensure_ascii=False))
        count += 1
    out.write("\n]\n" if count else "]\n")
    return count


JSON = register_format(
    FileFormat(
        name="json",
        label="JSON",
        extensions=(".json", ".jsonl", ".ndjson"),
        sniff=sniff_json,
        read=read_json,
        write=write_json,
        media_type="application/json",
        export_extension=".json",
    )
)
