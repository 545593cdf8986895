"""The file-format registry: each format registers how to recognise, read and write it.

Readers stream: they yield one ``Paper``/``Trial`` per valid record and one
``RecordProblem`` per malformed record (which is then skipped), never holding the whole
file in memory. Writers take any iterable of records and write text.

What one imported file may make the process hold is bounded by ``LimitsSettings``
(``open_records``): a compressed file unpacks to at most ``import_decompressed_bytes``
and at most ``import_decompression_ratio`` times its packed size (checked as it unpacks);
the line-based formats see lines of at most ``import_line_chars`` characters (the rest
of a longer line is dropped as it streams, and ``CUT`` marks the place); readers stop
growing a value past ``import_field_chars`` characters and a record past
``record_chars(limits)``. A record with a value that is too long (or cut) becomes a
``RecordProblem`` naming the field, and the other records of the file are read.
"""

from __future__ import annotations

import codecs
import io
import re
import zlib
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO, TextIO, cast

from pydantic import BaseModel

from scholarstream.errors import InvalidInputError
from scholarstream.papers._model import Paper, Trial
from scholarstream.settings import LimitsSettings

if TYPE_CHECKING:
    from _typeshed import WriteableBuffer

SNIFF_BYTES = 4096

CUT = "\uffff"
"""Put where a line was cut at the line limit (or a value at the field limit): a Unicode
noncharacter, which no bibliographic text holds (in a line-based file, one the file itself
holds is read as U+FFFD), so a value carrying it is known to be cut, and its record is
reported instead of imported."""
_CUT_BYTES = CUT.encode()
DEFAULT_LIMITS = LimitsSettings()
"""The settings' defaults, for a reader called without limits."""
RECORD_FIELDS = 16
"""A record's text as a whole may hold this many fields' worth (``record_chars``)."""


def record_chars(limits: LimitsSettings) -> int:
    """The most characters a reader collects for one record before it gives up on it."""
    return RECORD_FIELDS * limits.import_field_chars


@dataclass(frozen=True)
class RecordProblem:
    """A record that could not be read: where it is and what is wrong with it (``field``:
    the field at fault, when one is)."""

    file: str
    record_number: int
    message: str
    line: int | None = None
    field: str | None = None
    record_id: str | None = None
    """The record's own id in its file, when the reader got that far."""
    whole: bool = False
    """The record was read whole but cannot be a ``Paper`` (no title, a value the model
    refuses): it is one of the file's records, not damage between them, so a command
    that accounts for every input record (``dedup``) still gives it a row."""

    def __str__(self) -> str:
        where = f"{self.file}, record {self.record_number}"
        if self.line is not None:
            where += f" (line {self.line})"
        return f"{where}: {self.message}"


def too_large(filename: str, number: int, most: int, line: int | None = None) -> RecordProblem:
    """The problem of a record a reader gave up on at ``most`` characters."""
    return RecordProblem(
        filename,
        number,
        f"the record holds more than {most:,} characters in all, more than an imported "
        "record may; skipped. Shorten its longest fields (or remove it) and import the file "
        "again",
        line,
    )


ReadItem = Paper | Trial | RecordProblem
Reader = Callable[[BinaryIO, str, LimitsSettings], Iterator[ReadItem]]
"""``reader(stream, filename, limits)``: the stream is binary and already decompressed
(its lines already cut at the line limit when the format is ``line_based``); the reader
keeps values and records within ``limits`` (``record_chars``) as it collects them."""
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
    line_based: bool = True
    """Read line by line: lines are cut at the line limit before the reader sees them.
    XML and JSON are not (a record may be one long line); their records are bounded."""


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
        # The ids are what is typed; each with the label the user reads elsewhere.
        named = (f"{known} ({_FORMATS[known].label})" for known in names)
        raise InvalidInputError(
            f"Unknown {'export' if for_export else 'import'} format {name!r}.",
            hint=f"Use one of: {', '.join(named)}.",
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


_CHUNK = 1 << 16
_GZIP_MAGIC = b"\x1f\x8b"
_GZIP_WBITS = 16 + zlib.MAX_WBITS
"""``zlib`` reading the gzip format, its CRC and length checks included."""
_UNPACKED_PIECE = 1 << 20
RATIO_FREE_BYTES = 1 << 20
"""The ratio of unpacked to packed size is checked once this much has unpacked: the
first kilobytes of any file compress far better than the whole."""
_DAMAGE_ADVICE = "Download or compress the file again, or import the uncompressed file"
_SALVAGE_PIECE = 256
_UTF16_BOMS = {b"\xff\xfe": "utf-16", b"\xfe\xff": "utf-16"}
_UTF16_DECLARATION = re.compile(
    r"""^(\s*<\?xml[^>]*?encoding\s*=\s*["'])utf-?16[^"']*(["'])""", re.IGNORECASE
)
_BLANK = b" \t\r\n\x00"


def _peekable(stream: BinaryIO | io.RawIOBase) -> io.BufferedReader:
    if isinstance(stream, io.BufferedReader):
        return stream
    return io.BufferedReader(cast("io.RawIOBase", stream))


class _Unpacked(io.RawIOBase):
    """A gzip file's content. Damage (an archive cut off in transfer, a corrupted byte,
    junk after it) ends the content where it happens and is kept in ``damage`` instead
    of raised: every byte unpacked before it is still read, and the reader's last word is
    a ``RecordProblem`` saying what was lost. Archives joined end to end (what ``cat``
    makes of two ``.gz`` files) are read whole, as ``gzip`` does."""

    def __init__(self, packed: io.BufferedReader, limits: LimitsSettings) -> None:
        super().__init__()
        self._packed = packed
        self._unpacker = zlib.decompressobj(wbits=_GZIP_WBITS)
        self._pending = b""
        self._finished = False
        self._most = limits.import_decompressed_bytes
        self._ratio = limits.import_decompression_ratio
        self._consumed = 0  # packed bytes unpacked so far
        self._produced = 0  # bytes they unpacked to
        self.damage: str | None = None
        self.advice = _DAMAGE_ADVICE
        self.delivered = 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: WriteableBuffer) -> int:
        view = memoryview(buffer).cast("B")
        while not self._pending and not self._finished:
            self._pending = self._unpack()
        count = min(len(view), len(self._pending))
        view[:count] = self._pending[:count]
        self._pending = self._pending[count:]
        self.delivered += count
        return count

    def _unpack(self) -> bytes:
        """The next piece of content, at most ``_UNPACKED_PIECE`` bytes however well the
        archive compresses (maybe empty: call again until ``_finished``)."""
        if self._unpacker.eof:
            packed = self._unpacker.unused_data
            if len(packed) < len(_GZIP_MAGIC):
                packed += self._packed.read(_CHUNK)
            if not packed:
                self._finished = True
                return b""
            if packed[:2] != _GZIP_MAGIC:
                return self._fail("the compressed (.gz) file is damaged: junk follows its end")
            self._unpacker = zlib.decompressobj(wbits=_GZIP_WBITS)  # archives joined
        else:
            packed = self._unpacker.unconsumed_tail or self._packed.read(_CHUNK)
            if not packed:
                self._fail("the compressed (.gz) file is cut off")
                return self._unpacker.flush()
        before = self._unpacker.copy()
        try:
            piece = self._unpacker.decompress(packed, _UNPACKED_PIECE)
        except zlib.error as exc:
            self._fail(f"the compressed (.gz) file is damaged ({exc})")
            return _salvage(before, packed)
        left = len(self._unpacker.unconsumed_tail) + len(self._unpacker.unused_data)
        self._consumed += len(packed) - left
        return self._bounded(piece)

    def _bounded(self, piece: bytes) -> bytes:
        """``piece`` unless it takes the content past the limits (then as much of it as
        they allow, and the content ends): checked piece by piece, so a decompression
        bomb never unpacks further than one piece past its ratio."""
        self._produced += len(piece)
        if self._produced > self._most:
            self._refuse(
                f"the compressed (.gz) file unpacks to more than {self._most:,} bytes, the "
                "most an import may unpack to"
            )
            return piece[: len(piece) - (self._produced - self._most)]
        if self._produced > max(self._ratio * self._consumed, RATIO_FREE_BYTES):
            self._refuse(
                f"the compressed (.gz) file unpacks to more than {self._ratio} times its "
                "compressed size, which no reference file does (a decompression bomb?)"
            )
        return piece

    def _refuse(self, why: str) -> None:
        self._fail(why)
        self.advice = "Import the uncompressed file, or split it into smaller files and import each"

    def _fail(self, damage: str) -> bytes:
        self.damage = damage
        self._finished = True
        return b""


def _salvage(unpacker: zlib._Decompress, packed: bytes) -> bytes:
    """What unpacks from ``packed`` before the byte that broke it, piece by piece."""
    unpacked = []
    for start in range(0, len(packed), _SALVAGE_PIECE):
        try:
            unpacked.append(unpacker.decompress(packed[start : start + _SALVAGE_PIECE]))
        except zlib.error:
            break
    return b"".join(unpacked)


class _Utf16AsUtf8(io.RawIOBase):
    """A UTF-16 file (Windows "Unicode" text) as UTF-8, so every reader sees one encoding.
    An XML declaration's ``encoding="UTF-16"`` is rewritten to match."""

    def __init__(self, source: io.BufferedReader, encoding: str) -> None:
        super().__init__()
        self._source = source
        self._decoder = codecs.getincrementaldecoder(encoding)(errors="replace")
        self._pending = b""
        self._first = True
        self._done = False

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: WriteableBuffer) -> int:
        view = memoryview(buffer).cast("B")
        while not self._pending and not self._done:
            chunk = self._source.read(_CHUNK)
            text = self._decoder.decode(chunk, final=not chunk)
            self._done = not chunk
            if self._first and text:
                self._first = False
                text = _UTF16_DECLARATION.sub(r"\1UTF-8\2", text.removeprefix("\ufeff"), count=1)
            self._pending = text.encode("utf-8")
        count = min(len(view), len(self._pending))
        view[:count] = self._pending[:count]
        self._pending = self._pending[count:]
        return count


class _LinesCut(io.RawIOBase):
    """The source's bytes with every line cut at ``limit`` characters: the rest of a
    longer line is dropped as it streams by (never held) and ``CUT`` put in its place.
    CR, LF and CRLF all end a line; characters are counted as UTF-8 (a byte that
    continues a character is not one)."""

    def __init__(self, source: io.BufferedReader, limit: int) -> None:
        super().__init__()
        self._source = source
        self._limit = limit
        self._length = 0  # characters of the current line so far
        self._dropping = False  # the current line was cut: drop up to its end
        self._pending = b""
        self._done = False

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: WriteableBuffer) -> int:
        view = memoryview(buffer).cast("B")
        while not self._pending and not self._done:
            chunk = self._source.read(_CHUNK)
            self._done = not chunk
            self._pending = self._cut(chunk)
        count = min(len(view), len(self._pending))
        view[:count] = self._pending[:count]
        self._pending = self._pending[count:]
        return count

    def _cut(self, chunk: bytes) -> bytes:
        if _CUT_BYTES in chunk:  # the file's own U+FFFF is not a cut: U+FFFD, as damage
            chunk = chunk.replace(_CUT_BYTES, "\ufffd".encode())
        last_break = max(chunk.rfind(b"\n"), chunk.rfind(b"\r"))
        if not self._dropping and self._length + len(chunk) <= self._limit:
            # No line can pass the limit in this chunk (bytes >= characters): as it is.
            self._length = (
                len(chunk) - last_break - 1 if last_break >= 0 else (self._length + len(chunk))
            )
            return chunk
        kept: list[bytes] = []
        for part in _LINE_PARTS.split(chunk):
            if part in (b"\n", b"\r"):
                kept.append(part)
                self._length, self._dropping = 0, False
            elif part and not self._dropping:
                kept.append(self._within(part))
        return b"".join(kept)

    def _within(self, part: bytes) -> bytes:
        """The part of the current line that fits, and ``CUT`` when not all of it does."""
        length = len(part.translate(None, _CONTINUATION_BYTES))
        if self._length + length <= self._limit:
            self._length += length
            return part
        end = max(self._limit - self._length, 0)  # bytes: at most that many characters
        while 0 < end < len(part) and part[end] & 0xC0 == 0x80:
            end -= 1  # never cut a character in two
        self._dropping = True
        return part[:end] + _CUT_BYTES


_LINE_PARTS = re.compile(rb"(\n|\r)")
_CONTINUATION_BYTES = bytes(range(0x80, 0xC0))


_CONTROL_BYTES = bytes([*range(0x09), *range(0x0E, 0x20), 0x7F])


def _binary(head: bytes) -> bool:
    """Text exports hold no control bytes; a few come from damage, one in twenty is not
    text at all (random bytes hold one in nine)."""
    if len(head) < 64:
        return False
    return len(head) - len(head.translate(None, _CONTROL_BYTES)) >= len(head) // 20


def looks_utf16(head: bytes) -> bool:
    """Text after a UTF-16 byte-order mark: zero bytes (ASCII in UTF-16), or bytes that
    are not UTF-8. A damaged byte that happens to make a BOM before UTF-8 text is not."""
    body = head[2:512]
    if not body or b"\x00" in body:
        return True
    try:
        body.decode("utf-8")
    except UnicodeDecodeError as exc:
        return exc.start < len(body) - 3  # not just a character cut at the end
    return False


def _utf16_encoding(head: bytes) -> str | None:
    """UTF-16 by its byte-order mark, or (without one) by the zero bytes every other
    position holds in mostly-ASCII text."""
    if head[:2] in _UTF16_BOMS:
        return _UTF16_BOMS[head[:2]] if looks_utf16(head) else None
    sample = head[:512]
    if len(sample) < 8:
        return None
    even, odd = sample[0::2], sample[1::2]
    if odd.count(0) >= 0.4 * len(odd) and even.count(0) <= 0.05 * len(even):
        return "utf-16-le"
    if even.count(0) >= 0.4 * len(even) and odd.count(0) <= 0.05 * len(odd):
        return "utf-16-be"
    return None


def open_records(
    stream: BinaryIO,
    filename: str,
    format_name: str | None = None,
    *,
    limits: LimitsSettings | None = None,
) -> tuple[FileFormat, Iterator[ReadItem]]:
    """The file's format (given, or detected from its content) and its records, streamed
    from an open binary stream (gzip is detected and unpacked, UTF-16 converted), within
    ``limits`` (the settings' defaults when not given; see the module's docstring).

    Raises ``InvalidInputError`` before the first record when the file cannot be read at
    all (empty, an unreadable archive, an unknown format); once records flow, damage is
    reported as ``RecordProblem`` items and never raised.
    """
    limits = limits or DEFAULT_LIMITS
    buffered = _peekable(stream)
    unpacked: _Unpacked | None = None
    if buffered.peek(2)[:2] == _GZIP_MAGIC:
        unpacked = _Unpacked(buffered, limits)
        buffered = _peekable(unpacked)
    head = buffered.peek(SNIFF_BYTES)[:SNIFF_BYTES]
    if unpacked is not None and unpacked.damage is not None and not head:
        raise InvalidInputError(
            f"{filename} looks compressed (gzip) but cannot be unpacked: {unpacked.damage}.",
            hint=f"{unpacked.advice}.",
        )
    encoding = _utf16_encoding(head)
    if encoding is not None:
        buffered = _peekable(_Utf16AsUtf8(buffered, encoding))
        head = buffered.peek(SNIFF_BYTES)[:SNIFF_BYTES]
    if not head.removeprefix(b"\xef\xbb\xbf").strip(_BLANK) and len(head) < SNIFF_BYTES:
        raise InvalidInputError(
            f"{filename} is empty: it holds no records.",
            hint="Check that this is the file you meant; export the records again if it "
            "should hold some.",
        )
    if _binary(head):
        raise InvalidInputError(
            f"{filename} is not a text file: its content looks binary (a spreadsheet, PDF, "
            "word-processor document or archive?).",
            hint="Export the references as one of: "
            f"{', '.join(import_format_names())} (save a spreadsheet as CSV first).",
        )
    file_format = get_format(format_name) if format_name else detect_format(filename, head)
    assert file_format.read is not None
    if file_format.line_based:
        buffered = _peekable(_LinesCut(buffered, limits.import_line_chars))
    items = _fields_bounded(file_format.read(buffered, filename, limits), filename, limits)
    if unpacked is not None:
        items = _with_damage_reported(items, unpacked, filename)
    return file_format, items


def _fields_bounded(
    items: Iterator[ReadItem], filename: str, limits: LimitsSettings
) -> Iterator[ReadItem]:
    """Each record with a value longer than the field limit (or cut at the line limit)
    becomes a problem naming that field; records are numbered as the reader numbers
    them (one after the item before)."""
    number = 0
    for item in items:
        if isinstance(item, RecordProblem):
            number = item.record_number
            yield item
            continue
        number += 1
        found = _overlong(item, limits.import_field_chars)
        if found is None:
            yield item
            continue
        label, length = found
        most = f"{limits.import_field_chars:,}"
        size = (
            f"is longer than the {most} characters"
            if length is None
            else f"holds {length:,} characters, more than the {most}"
        )
        yield RecordProblem(
            filename,
            number,
            f"the {label} field {size} an imported field may hold; the record is skipped. "
            "Shorten that field (or remove the record) and import the file again",
            field=label,
            record_id=item.record_id,
            whole=True,
        )


_FIELD_LABELS = {
    "ids": "identifiers",
    "venue": "journal",
    "mesh_terms": "MeSH terms",
    "publication_types": "publication types",
    "record_id": "record id",
}


def _overlong(record: BaseModel, most: int) -> tuple[str, int | None] | None:
    """The first top-level field of ``record`` holding a text longer than ``most`` (or
    one cut by a reader), as ``(label, length)``; the length is ``None`` when the text
    was cut before it could be counted."""
    for name in type(record).model_fields:
        length = _longest(getattr(record, name), most)
        if length is not False:
            return _FIELD_LABELS.get(name, name.replace("_", " ")), length
    return None


def _longest(value: object, most: int) -> int | bool | None:
    """``False`` when every text in ``value`` is within ``most``, else the length of the
    first that is not (``None`` when it was cut)."""
    if isinstance(value, str):
        if CUT in value:
            return None
        return len(value) if len(value) > most else False
    if isinstance(value, BaseModel):
        for name in type(value).model_fields:
            found = _longest(getattr(value, name), most)
            if found is not False:
                return found
        return False
    if isinstance(value, list | tuple):
        for element in value:
            found = _longest(element, most)
            if found is not False:
                return found
    return False


def _with_damage_reported(
    items: Iterator[ReadItem], unpacked: _Unpacked, filename: str
) -> Iterator[ReadItem]:
    count = 0
    try:
        for item in items:
            count = item.record_number if isinstance(item, RecordProblem) else count + 1
            yield item
    except InvalidInputError as exc:
        # Readers refuse a file before its first record: here, the little that unpacked.
        if unpacked.damage is None:
            raise
        raise InvalidInputError(
            f"{filename}: {unpacked.damage} after {unpacked.delivered:,} bytes of content, "
            f"and that much is not readable ({exc.message})",
            hint=f"{unpacked.advice}.",
        ) from exc
    if unpacked.damage is not None:
        yield RecordProblem(
            filename,
            count + 1,
            f"{unpacked.damage}; reading stopped there, after {unpacked.delivered:,} bytes of "
            f"content: the records after that point were not read. {unpacked.advice} (the "
            "records already imported are recognised as duplicates)",
        )


def read_stream(
    stream: BinaryIO,
    filename: str,
    format_name: str | None = None,
    *,
    limits: LimitsSettings | None = None,
) -> Iterator[ReadItem]:
    """Read records from an open binary stream (gzip is detected and unpacked)."""
    return open_records(stream, filename, format_name, limits=limits)[1]


def read_file(
    path: Path, format_name: str | None = None, *, limits: LimitsSettings | None = None
) -> Iterator[ReadItem]:
    """Stream the records of a file. Raises ``InvalidInputError`` if it cannot be opened."""
    try:
        stream = path.open("rb")
    except OSError as exc:
        raise InvalidInputError(
            f"Cannot open {path}: {exc.strerror or exc}.",
            hint="Check the path and that the file is readable.",
        ) from exc
    return _closing(read_stream(stream, path.name, format_name, limits=limits), stream)


def _closing(items: Iterator[ReadItem], stream: BinaryIO) -> Iterator[ReadItem]:
    with stream:
        yield from items
