"""Cutting an XML file of records into one piece per record, for the XML formats.

The file is scanned for each record's opening and closing tag (EndNote's ``<record>``,
PubMed's ``<PubmedArticle>``), and every record is parsed on its own. An XML parser stops
(or guesses) at the first error in a document; parsing record by record, broken markup
costs only the record it is in, a file cut off loses only the record it ends in, text
outside any record (a record whose opening tag was damaged) is reported, and memory
holds one record however large the file.
"""

from __future__ import annotations

import codecs
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import BinaryIO

from lxml import etree

from scholarstream.papers.formats._base import ReadItem, RecordProblem, too_large
from scholarstream.papers.formats._fields import decode_text

_CHUNK = 1 << 16
_TAG_TAIL = 64
"""Bytes kept from the end of a chunk when looking for a tag: one may be cut in two."""
_MAX_GAP = 1 << 20
"""Text between records held at most, then judged and dropped, so junk cannot fill memory."""
_DECLARED = re.compile(rb"""<\?xml[^>]*?encoding\s*=\s*["']([A-Za-z0-9._-]+)["']""")
_ELEMENT = re.compile(rb"<([A-Za-z_][\w.:-]*)[\s/>]")
_POSITION = re.compile(r",? line \d+, column \d+\s*$")
_TAG = re.compile(rb"<[^<>]*>")
_MARKUP_LEFT = b"<>[] \t\r\n\x00"
_CUT_TAG = re.compile(rb"<[^<>]*$")
_CONTROL_BYTES = re.compile(rb"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


STRAY_TEXT = "text outside any record (a record whose opening tag is damaged, or junk); skipped"


def unclosed(tag: str) -> str:
    return (
        f"the XML is broken: the record has no closing </{tag}> tag (the file ends, or the "
        "next record starts, inside it); skipped"
    )


@dataclass(frozen=True)
class Piece:
    """One record's bytes (opening to closing tag), a record that is never closed, or
    text found outside any record."""

    number: int
    line: int
    tag: str
    data: bytes
    closed: bool = True
    stray: bool = False
    oversized: int | None = None
    """The record limit (bytes) when the record passed it: its bytes were dropped."""


class XmlRecordError(Exception):
    """A piece that does not parse: the parser's complaint and the file's line."""

    def __init__(self, message: str, line: int) -> None:
        super().__init__(message)
        self.message = message
        self.line = line


def _alternatives(names: tuple[str, ...]) -> bytes:
    return b"|".join(re.escape(name.encode()) for name in names)


class XmlRecords:
    """The pieces of ``stream``; ``ends`` maps each record tag to the tags whose opening
    means it was never closed (``PubmedArticle`` holds a ``MedlineCitation``, so that
    one does not end it). Elements named in ``ignored`` may stand between records (PubMed's
    ``DeleteCitation``); a ``wrapper`` element is put around each record parsed, so it
    has a parent as it would in the file. ``root`` and ``encoding`` are known after the
    first piece."""

    def __init__(
        self,
        stream: BinaryIO,
        ends: Mapping[str, tuple[str, ...]],
        *,
        wrapper: str | None = None,
        ignored: tuple[str, ...] = (),
        most: int | None = None,
    ) -> None:
        self._stream = stream
        self._most = most
        self._wrapper = wrapper
        self._ignored = [(f"<{name}".encode(), f"</{name}>".encode()) for name in ignored]
        self._open = re.compile(rb"<(" + _alternatives(tuple(ends)) + rb")[\s>/]")
        self._close = {
            name: re.compile(rb"</" + re.escape(name.encode()) + rb"\s*>") for name in ends
        }
        self._ends = {
            name: re.compile(rb"<(?:" + _alternatives(others) + rb")[\s>/]")
            for name, others in ends.items()
        }
        self.root: str | None = None
        self.encoding = "utf-8"
        self.cut_off_at: int | None = None
        """Set at the end of a file whose root element is never closed: the last line."""
        self._prolog_read = False
        self._parsers: dict[bool, etree.XMLParser] = {}

    # -- cutting ---------------------------------------------------------------------------

    def __iter__(self) -> Iterator[Piece]:
        buffer = bytearray()
        pos = 0  # where the part of the buffer not yet cut starts
        line = 1  # the line ``pos`` is on
        eof = False
        number = 0

        def more() -> bool:
            chunk = self._stream.read(_CHUNK)
            buffer.extend(chunk)
            return bool(chunk)

        while True:
            if pos >= _CHUNK:
                del buffer[:pos]
                pos = 0
            opening = self._open.search(buffer, pos)
            if opening is None:
                if not eof and len(buffer) - pos <= _MAX_GAP:
                    eof = not more()
                    continue
                keep = len(buffer) if eof else len(buffer) - _TAG_TAIL
                stray = self._gap(bytes(buffer[pos:keep]), number + 1, line, at_end=eof)
                if stray is not None:
                    number += 1
                    yield stray
                line += buffer.count(b"\n", pos, keep)
                if eof and not self._root_closed(bytes(buffer[pos:keep])):
                    self.cut_off_at = line
                pos = keep
                if eof:
                    return
                continue
            stray = self._gap(bytes(buffer[pos : opening.start()]), number + 1, line)
            if stray is not None:
                number += 1
                yield stray
            line += buffer.count(b"\n", pos, opening.start())
            tag = opening.group(1).decode()
            if self.root is None:
                self.root = tag  # no element before the first record: it is the root
            start, scanned = opening.start(), opening.end()
            dropped_lines, oversized = 0, None
            while True:
                closing = self._close[tag].search(buffer, scanned)
                following = self._ends[tag].search(buffer, scanned)
                if closing is not None and (
                    following is None or closing.start() < following.start()
                ):
                    end, closed = closing.end(), True
                    break
                if following is not None:
                    end, closed = following.start(), False
                    break
                if eof:
                    end, closed = len(buffer), False
                    break
                if self._most is not None and len(buffer) - start > self._most:
                    # Too large to hold: drop its bytes as they come, up to its end.
                    oversized = self._most
                    keep = len(buffer) - _TAG_TAIL
                    dropped_lines += buffer.count(b"\n", start, keep)
                    del buffer[start:keep]
                    scanned = start
                else:
                    scanned = max(scanned, len(buffer) - _TAG_TAIL)
                eof = not more()
            number += 1
            data = bytes(buffer[start:end])
            if oversized is not None:
                yield Piece(number, line, tag, b"", closed=closed, oversized=oversized)
            else:
                yield Piece(number, line, tag, data, closed=closed)
            line += dropped_lines + data.count(b"\n")
            pos = end

    def _gap(self, text: bytes, number: int, line: int, *, at_end: bool = False) -> Piece | None:
        """Text between records: the prolog and the wrapper tags are expected, anything
        else is reported (a tag cut off by the end of the file is only a lost wrapper)."""
        if not self._prolog_read:
            self._prolog_read = True
            self._read_prolog(text)
        left = text
        for opening, closing in [(b"<!--", b"-->"), (b"<![CDATA[", b"]]>"), *self._ignored]:
            left = _without(left, opening, closing)
        left = _TAG.sub(b"", left)
        if at_end:
            left = _CUT_TAG.sub(b"", left)
        if not left.strip(_MARKUP_LEFT):
            return None
        skipped = len(text) - len(text.lstrip())
        return Piece(number, line + text.count(b"\n", 0, skipped), "", text.strip(), stray=True)

    def _root_closed(self, tail: bytes) -> bool:
        """Does the file after its last record close the root element (or is there no
        separate root: a record is the whole document)?"""
        if self.root is None or self.root in self._close:
            return True
        return re.search(rb"</" + re.escape(self.root.encode()) + rb"\s*>", tail) is not None

    def _read_prolog(self, text: bytes) -> None:
        declared = _DECLARED.search(text[:1024])
        if declared is not None:
            name = declared.group(1).decode("ascii")
            try:
                codec = codecs.lookup(name).name
            except LookupError:
                codec = "utf-8"
            # UTF-16 files reach the readers converted to UTF-8 (``open_records``).
            self.encoding = "utf-8" if codec.startswith(("utf-16", "utf-32")) else codec
        element = _ELEMENT.search(text)
        self.root = element.group(1).decode("ascii", errors="replace") if element else None

    # -- parsing ---------------------------------------------------------------------------

    def _parser(self, *, from_bytes: bool) -> etree.XMLParser:
        """Parsers for bytes in the declared encoding and for decoded text."""
        parser = self._parsers.get(from_bytes)
        if parser is None:
            encoding = self.encoding if from_bytes and self.encoding != "utf-8" else None
            try:
                parser = _make_parser(encoding)
            except LookupError:  # an encoding Python knows and libxml2 does not
                parser = _make_parser(None)
            self._parsers[from_bytes] = parser
        return parser

    def parse(self, piece: Piece) -> etree._Element:
        """The piece as an element. Control characters (damage; XML allows none) become
        U+FFFD; bytes that are not in the declared encoding (a latin-1 file that says
        nothing, a damaged byte) are decoded as the text formats decode them before
        giving up. Raises ``XmlRecordError``."""
        opening, closing = (
            (f"<{self._wrapper}>", f"</{self._wrapper}>") if self._wrapper else ("", "")
        )
        data = piece.data
        if _CONTROL_BYTES.search(data):
            data = _CONTROL_BYTES.sub(b"\xef\xbf\xbd" if self.encoding == "utf-8" else b"?", data)
        try:
            return _record(
                etree.fromstring(
                    opening.encode() + data + closing.encode(), self._parser(from_bytes=True)
                ),
                wrapped=bool(opening),
            )
        except etree.XMLSyntaxError as exc:
            error = exc
        text = decode_text(data, self.encoding)
        if text is not None:
            try:
                return _record(
                    etree.fromstring(opening + text + closing, self._parser(from_bytes=False)),
                    wrapped=bool(opening),
                )
            except (etree.XMLSyntaxError, ValueError):
                pass
        message = " ".join(_POSITION.sub("", error.msg or "not well-formed").split())
        lineno = max(error.lineno or 1, 1)
        raise XmlRecordError(message, piece.line + lineno - 1)


def _without(text: bytes, opening: bytes, closing: bytes) -> bytes:
    """``text`` without what stands from each ``opening`` to its ``closing`` (to the end
    when it is never closed): one pass, whatever junk it is given."""
    if opening not in text:
        return text
    kept, pos = [], 0
    while (start := text.find(opening, pos)) >= 0:
        kept.append(text[pos:start])
        end = text.find(closing, start + len(opening))
        pos = len(text) if end < 0 else end + len(closing)
    kept.append(text[pos:])
    return b"".join(kept)


def _record(element: etree._Element, *, wrapped: bool) -> etree._Element:
    return element[0] if wrapped and len(element) else element


def _make_parser(encoding: str | None) -> etree.XMLParser:
    return etree.XMLParser(
        encoding=encoding,
        resolve_entities=False,
        no_network=True,
        load_dtd=False,
        huge_tree=True,
        remove_comments=True,
        remove_pis=True,
    )


# -- reading ---------------------------------------------------------------------------------


@dataclass
class Tally:
    """What ``read_pieces`` saw: records, the last piece's number, whether the last record
    was closed, and the problems held back because no record has shown the file to be of
    the reader's kind yet (text before the first record of a file that is not)."""

    records: int = 0
    last_number: int = 0
    last_closed: bool = True
    held: list[RecordProblem] = field(default_factory=list)


def read_pieces(
    pieces: XmlRecords,
    filename: str,
    build: Callable[[etree._Element, Piece], ReadItem],
    tally: Tally,
) -> Iterator[ReadItem]:
    """One item per piece: ``build``'s for a record that parses, a ``RecordProblem`` for
    one never closed, one with broken markup and text outside any record."""
    for piece in pieces:
        tally.last_number = piece.number
        if piece.stray:
            problem = RecordProblem(filename, piece.number, STRAY_TEXT, piece.line)
            if tally.records:
                yield problem
            else:
                tally.held.append(problem)
            continue
        tally.records += 1
        yield from tally.held
        tally.held.clear()
        tally.last_closed = piece.closed
        if piece.oversized is not None:
            yield too_large(filename, piece.number, piece.oversized, piece.line)
            continue
        if not piece.closed:
            yield RecordProblem(filename, piece.number, unclosed(piece.tag), piece.line)
            continue
        try:
            element = pieces.parse(piece)
        except XmlRecordError as exc:
            yield RecordProblem(
                filename,
                piece.number,
                f"the record's XML is broken ({exc.message}, line {exc.line}); skipped",
                piece.line,
            )
            continue
        yield build(element, piece)


def ending(pieces: XmlRecords, filename: str, tally: Tally) -> Iterator[RecordProblem]:
    """After the last piece of a file that is of the reader's kind: the problems held
    back, and a root element never closed (the file is cut off between records)."""
    yield from tally.held
    if pieces.cut_off_at is not None and tally.last_closed:
        yield RecordProblem(
            filename,
            tally.last_number + 1,
            f"the file ends at line {pieces.cut_off_at} before its closing </{pieces.root}> "
            "tag: it is cut off, and any records after that point are missing. Download or "
            "export it again",
        )
