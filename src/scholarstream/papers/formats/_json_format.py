"""JSON: our own ``Paper``/``Trial`` objects, the one format that holds every field.

Read as a JSON array (streamed item by item with ``ijson``), as JSON Lines (one object per
line), or as ``{"records": [...]}``. An item the model refuses is reported with the field
at fault and skipped; JSON that stops being JSON ends the array there (a parser cannot
find the next item in broken syntax), while in JSON Lines, and in an array written one
item per line as our writer does, only the broken line is lost.
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
from scholarstream.papers._model import Paper, Record, Trial
from scholarstream.papers.formats._base import (
    DEFAULT_LIMITS,
    FileFormat,
    ReadItem,
    RecordProblem,
    record_chars,
    register_format,
    too_large,
)
from scholarstream.papers.formats._fields import (
    decode_text,
    sniff_text,
    validation_message,
    without_controls,
)
from scholarstream.settings import LimitsSettings

_RECORD: TypeAdapter[Paper | Trial] = TypeAdapter(Record)
_SNIFF = re.compile(r'^\s*(?:\[\s*(?:\{|\]|$)|\{\s*(?:"|$))')
_WHITESPACE = b" \t\r\n"
_BOM = b"\xef\xbb\xbf"
_CHUNK = 1 << 16
_LAYOUT_LINES = 5
_BRACKETS = b"[], \t\r"
_WRAPPER_LINE = re.compile(rb'^\{\s*"records"\s*:\s*\[$|^\]\s*\}$')
"""The lines around a ``{"records": [...]}`` wrapper written one record per line."""
"""Lines looked at to tell the layout (one damaged line must not decide it)."""


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


def _sanitised(value: Any) -> Any:
    """Control characters in strings (``\\u0000``: damage) replaced, see ``without_controls``."""
    if isinstance(value, str):
        return without_controls(value)
    if isinstance(value, dict):
        return {key: _sanitised(inner) for key, inner in value.items()}
    if isinstance(value, list):
        return [_sanitised(inner) for inner in value]
    return value


def _validate(item: Any, filename: str, number: int, line: int | None) -> ReadItem:
    item = _sanitised(item)
    if not isinstance(item, dict):
        kind = type(item).__name__
        return RecordProblem(
            filename, number, f"the item is a JSON {kind}, not an object; skipped", line
        )
    try:
        return _RECORD.validate_python({"kind": "paper", **item})
    except ValidationError as exc:
        return RecordProblem(filename, number, f"{validation_message(exc)}; skipped", line)


def read_json(
    stream: BinaryIO, filename: str, limits: LimitsSettings = DEFAULT_LIMITS
) -> Iterator[ReadItem]:
    most = record_chars(limits)
    start = stream.read(_CHUNK).removeprefix(_BOM)
    line = 1
    while not start.lstrip(_WHITESPACE):
        line += start.count(b"\n")
        start = stream.read(_CHUNK)
        if not start:
            return
    stripped = start.lstrip(_WHITESPACE)
    line += start[: len(start) - len(stripped)].count(b"\n")
    if stripped[:1] == b"{":
        yield from _object_or_lines(stripped, stream, filename, line, most)
    elif _one_item_per_line(stripped):
        yield from _lines(_Replay(stripped, stream), filename, line, most, in_array=True)
    elif any(_object_line(raw.rstrip().removesuffix(b",")) for raw in stripped.split(b"\n")[1:]):
        # JSON Lines, or an array one item per line, whose first line is damaged: only
        # that line is lost.
        in_array = _array_lines(stripped)
        yield from _lines(_Replay(stripped, stream), filename, line, most, in_array=in_array)
    elif stripped[:1] == b"[":
        yield from _array(_Replay(stripped, stream), "item", filename, most)
    else:
        raise InvalidInputError(
            f"{filename} is not JSON records: it does not start with '[' or '{{'.",
            hint='Give a JSON array of records, JSON Lines, or {"records": [...]}.',
        )


def _object_line(raw: bytes) -> bool:
    """Is this line a JSON object on its own (a JSON Lines record)?"""
    raw = raw.strip()
    if raw[:1] != b"{" or raw[-1:] != b"}":
        return False
    try:
        return isinstance(json.loads(raw, strict=False), dict)
    except ValueError:
        return False


def _array_lines(start: bytes) -> bool:
    """Do the first lines look like an array written one item per line (a ``[`` line,
    or items followed by commas)?"""
    lines = [raw.strip() for raw in start.split(b"\n", _LAYOUT_LINES)[:_LAYOUT_LINES]]
    return any((raw and not raw.strip(_BRACKETS)) or raw.endswith(b"},") for raw in lines)


def _one_item_per_line(start: bytes) -> bool:
    """An array as we write it: ``[`` alone on the first line, then one object per line.
    Read line by line, a damaged line then costs only its record."""
    first, *following = start.split(b"\n", _LAYOUT_LINES + 1)[: _LAYOUT_LINES + 1]
    return not first.strip(_BRACKETS) and any(
        _object_line(raw.rstrip().removesuffix(b",")) for raw in following
    )


class _AsUtf8:
    """The bytes, as UTF-8 even where the file is not (a legacy encoding, a damaged byte):
    each chunk that does not decode is read as the text formats read such text (see
    ``decode_text``), so one bad byte does not end the array for the streaming parser."""

    def __init__(self, source: _Replay, most: int) -> None:
        self._source = source
        self._pending = b""
        self._out = b""
        self._done = False
        self._most = most
        self.since_item = 0
        """Bytes handed to the parser since the last item it gave (``_array`` resets it)."""

    def read(self, size: int = -1) -> bytes:
        if self.since_item > self._most:
            raise _RecordTooLargeError
        data = self._read(size)
        self.since_item += len(data)
        return data

    def _read(self, size: int) -> bytes:
        while not self._done and (size < 0 or len(self._out) < size):
            chunk = self._source.read(_CHUNK)
            data = self._pending + chunk
            if chunk:
                cut = _boundary(data)
                data, self._pending = data[:cut], data[cut:]
            else:
                self._done, self._pending = True, b""
            text = decode_text(data)
            self._out += data if text is None else text.encode("utf-8")
        if size < 0:
            size = len(self._out)
        data, self._out = self._out[:size], self._out[size:]
        return data


def _boundary(data: bytes) -> int:
    """Where ``data`` can be cut without splitting a UTF-8 character: after its last
    ASCII byte, or before the lead byte of its last (maybe incomplete) character."""
    end = len(data)
    for cut in range(end, max(end - 4, 0), -1):
        byte = data[cut - 1]
        if byte < 0x80:
            return cut
        if byte >= 0xC0:
            return cut - 1
    return end


def _json_error(exc: Exception) -> str:
    """The first line of the parser's complaint (yajl adds a picture of where)."""
    message = exc.args[0] if exc.args else exc
    if isinstance(message, bytes):
        message = message.decode("utf-8", errors="replace")
    return str(message).strip().splitlines()[0] if str(message).strip() else type(exc).__name__


class _RecordTooLargeError(Exception):
    """The parser read more than a record may hold without finishing an item."""


def _array(source: _Replay, prefix: str, filename: str, most: int) -> Iterator[ReadItem]:
    """The items of a JSON array, streamed; an item longer than ``most`` bytes ends the
    reading there (the parser cannot skip it), reported."""
    count = 0
    text = _AsUtf8(source, most)
    items = ijson.items(text, prefix, use_float=True)
    while True:
        try:
            item = next(items)
        except StopIteration:
            break
        except _RecordTooLargeError:
            yield RecordProblem(
                filename,
                count + 1,
                f"the record holds more than {most:,} characters, more than an imported "
                "record may; reading stopped there, and the records after it were not read. "
                "Shorten its longest fields (or remove it) and import the file again",
            )
            return
        except (ijson.JSONError, ValueError) as exc:  # pure-Python backends raise ValueError
            yield RecordProblem(
                filename,
                count + 1,
                f"the JSON is broken after record {count} ({_json_error(exc)}); the rest of "
                "the file cannot be read. Repair it (or export it again) and import it again",
            )
            return
        text.since_item = 0
        count += 1
        yield _validate(item, filename, count, None)
    if count == 0 and prefix == "records.item":
        raise InvalidInputError(
            f"{filename} is a JSON object without a 'records' array.",
            hint='Give a JSON array of records, JSON Lines, or {"records": [...]}.',
        )


def _object_or_lines(
    start: bytes, stream: BinaryIO, filename: str, line: int, most: int
) -> Iterator[ReadItem]:
    """One object per line is JSON Lines (unless it is the ``records`` wrapper written on
    one line); an object spread over lines is the wrapper, streamed."""
    newline = start.find(b"\n")
    if newline < 0:
        start += stream.readline(most)
        newline = len(start)
    first, rest = start[: newline + 1], start[newline + 1 :]
    try:
        parsed = json.loads(first, strict=False)
    except ValueError:
        # A wrapper's first line is ``{`` or ``{"records": [``; a damaged JSON Lines
        # record still ends with ``}``, or the lines after it are records on their own.
        first_line = first.rstrip()
        following = [raw.rstrip() for raw in rest.split(b"\n", _LAYOUT_LINES)[:_LAYOUT_LINES]]
        if first_line.removesuffix(b",").endswith(b"}") or any(
            _object_line(raw.removesuffix(b",")) for raw in following
        ):
            in_array = first_line.endswith(b"},") or _array_lines(rest)
            yield from _lines(_Replay(start, stream), filename, line, most, in_array=in_array)
        else:
            yield from _array(_Replay(start, stream), "records.item", filename, most)
        return
    if isinstance(parsed, dict) and isinstance(parsed.get("records"), list):
        for number, item in enumerate(parsed["records"], 1):
            yield _validate(item, filename, number, None)
        return
    yield _validate(parsed, filename, 1, line)
    yield from _lines(_Replay(rest, stream), filename, line + 1, most, number=1)


def _lines(
    source: _Replay,
    filename: str,
    line: int,
    most: int,
    *,
    number: int = 0,
    in_array: bool = False,
) -> Iterator[ReadItem]:
    """Each line its own record (numbered on from ``number``), the first on ``line``. In
    an array written one item per line, the brackets and the commas after items are
    dropped, and a missing closing bracket says the file is cut off. Records whose line
    break was lost (``{...},{...}``) are read apart again."""
    pending, closed, dropping = b"", False, False
    line -= 1
    while True:
        chunk = source.read(_CHUNK)
        eof = not chunk
        if dropping:  # a line longer than a record may be: dropped up to its end
            end = chunk.find(b"\n")
            if not eof and end < 0:
                continue
            dropping, line, number = False, line + 1, number + 1
            yield too_large(filename, number, most, line)
            chunk = b"" if eof else chunk[end + 1 :]
        lines = (pending + chunk).split(b"\n")
        pending = b"" if eof else lines.pop()
        if len(pending) > most:
            pending, dropping = b"", True
        for raw in lines:
            line += 1
            raw = raw.strip()
            if in_array:
                if (raw and not raw.strip(_BRACKETS)) or _WRAPPER_LINE.match(raw):
                    closed = closed or b"]" in raw
                    continue
                raw = raw.removesuffix(b",")
            if not raw:
                continue
            if len(raw) > most:
                number += 1
                yield too_large(filename, number, most, line)
                continue
            try:
                items = _parse_line(raw)
            except ValueError as exc:
                number += 1
                yield RecordProblem(
                    filename, number, f"the line is not valid JSON ({exc}); skipped", line
                )
                continue
            for item in items:
                number += 1
                yield _validate(item, filename, number, line)
        if eof:
            break
    if in_array and not closed:
        yield RecordProblem(
            filename,
            number + 1,
            f"the file ends at line {line} before the array's closing ']': it is cut off, "
            "and any records after that point are missing. Export or download it again",
        )


_DECODER = json.JSONDecoder(strict=False)
"""Control characters in strings are damage: kept (as U+FFFD, see ``_sanitised``), not
fatal."""


def _parse_line(raw: bytes) -> list[Any]:
    """The record on a line, or the records run together on it (``{...},{...}``)."""
    text = decode_text(raw) or raw.decode("utf-8")
    try:
        return [_DECODER.decode(text)]
    except ValueError as exc:
        error = exc
    items, pos = [], 0
    try:
        while pos < len(text):
            item, pos = _DECODER.raw_decode(text, pos)
            items.append(item)
            pos = len(text) - len(text[pos:].lstrip(" \t,"))
    except ValueError:
        raise error from None
    if len(items) < 2 or not all(isinstance(item, dict) for item in items):
        raise error
    return items


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
        line_based=False,
        export_extension=".json",
    )
)
