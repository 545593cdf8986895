"""Helpers the text-based file formats share: decoding, dates, names, pages, ISSNs, and
turning the fields a reader collected into a ``Paper`` or a ``RecordProblem``.

Every reference manager writes these fields a little differently ("1999/08//", "2006 Mar 1",
"134--137", "0964-6906 (Print)"); normalising them in one place means a record read from
RIS and the same record read from BibTeX or CSV compare equal, and a file we wrote reads
back to the same values.
"""

from __future__ import annotations

import codecs
import datetime as dt
import itertools
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import BinaryIO
from urllib.parse import unquote

from pydantic import ValidationError

from scholarstream.papers._model import (
    Author,
    Identifiers,
    Link,
    LinkKind,
    Paper,
    Provenance,
    Retraction,
    Trial,
)
from scholarstream.papers.formats._base import CUT, RecordProblem, looks_utf16
from scholarstream.validation_messages import describe_errors

# -- decoding -----------------------------------------------------------------------------

_UTF8_BOM = b"\xef\xbb\xbf"
_UTF16_BOMS = (b"\xff\xfe", b"\xfe\xff")
_CHUNK = 1 << 16


_HIGH_RUN = re.compile(rb"[\x80-\xff]+")
_HAN = re.compile("[\u3400-\u4dbf\u4e00-\u9fff]")
_KANA = re.compile("[\u3040-\u30ff]")
_HANGUL = re.compile("[\uac00-\ud7af]")
_NOT_ASCII = re.compile("[^\x00-\x7f]")


def _chinese(text: str) -> bool:
    return len(_HAN.findall(text)) == len(_NOT_ASCII.findall(text))


def _japanese(text: str) -> bool:
    kana, han = len(_KANA.findall(text)), len(_HAN.findall(text))
    return kana > 0 and kana + han >= 0.9 * len(_NOT_ASCII.findall(text))


def _korean(text: str) -> bool:
    return len(_HANGUL.findall(text)) >= 0.9 * len(_NOT_ASCII.findall(text))


_EAST_ASIAN: dict[str, Callable[[str], bool]] = {
    **dict.fromkeys(("gb18030", "gbk", "gb2312", "big5", "big5hkscs", "cp950"), _chinese),
    **dict.fromkeys(
        ("cp932", "shift_jis", "shift_jis_2004", "shift_jisx0213", "euc_jp", "euc_jis_2004"),
        _japanese,
    ),
    **dict.fromkeys(("cp949", "euc_kr", "johab"), _korean),
}
"""The double-byte encodings of Chinese, Japanese and Korean exports (a CSV saved by Excel
on a Chinese Windows is GBK), each with what text in it looks like: short lines fit
several (GBK bytes read as Korean give Hangul mixed with rare Hanzi), so a reading is
taken only when it looks like its language: Chinese all Han, Japanese with kana, Korean
nearly all Hangul."""


def _double_byte(raw: bytes) -> str | None:
    """``raw`` read in the East Asian encoding it is written in, or None. Asked only when
    its bytes beyond ASCII come in runs (a double-byte character is two), as a European
    line's accented letters rarely do."""
    runs = [len(run) for run in _HIGH_RUN.findall(raw)]
    high = sum(runs)
    if high < 4 or sum(n for n in runs if n >= 2) < 0.8 * high:
        return None
    from charset_normalizer import from_bytes  # imported on first use: rarely needed

    for match in from_bytes(raw):
        looks_right = _EAST_ASIAN.get(match.encoding)
        if looks_right is not None and looks_right(text := str(match)):
            return text
    return None


def _legacy(raw: bytes) -> str:
    """Windows exports are cp1252 more often than true latin-1; the five bytes cp1252
    leaves undefined fall back to latin-1 so decoding never fails."""
    try:
        return raw.decode("cp1252")
    except UnicodeDecodeError:
        return raw.decode("latin-1")


_BEYOND_ASCII = re.compile(r"[^\x00-\x7f\ufffd]")
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
"""Control characters no bibliographic text holds: a damaged byte (PostgreSQL cannot even
store a NUL). They become U+FFFD, so the damage shows."""


def without_controls(text: str) -> str:
    return _CONTROL.sub("\ufffd", text) if _CONTROL.search(text) else text


def decode_text(raw: bytes, encoding: str = "utf-8") -> str | None:
    """``raw`` as text when it is not valid ``encoding`` (``None`` when it is): a Chinese,
    Japanese or Korean double-byte encoding when it reads as one; UTF-8 that elsewhere
    decodes to non-ASCII text is taken as UTF-8 with damaged bytes (replaced by U+FFFD,
    so the damage shows), anything else as a legacy single-byte encoding."""
    try:
        raw.decode(encoding)
    except UnicodeDecodeError:
        pass
    except LookupError:
        encoding = "utf-8"
    else:
        return None
    # Before the damaged-UTF-8 test: a pair of GBK bytes can happen to be valid UTF-8.
    double = _double_byte(raw)
    if double is not None:
        return double
    replaced = raw.decode("utf-8", errors="replace")
    if _BEYOND_ASCII.search(replaced):
        return replaced
    return _legacy(raw)


def decoded_lines(stream: BinaryIO) -> Iterator[str]:
    """The stream's lines as text, each with its line ending, one at a time.

    UTF-8 (BOM dropped); a line that is not is read by ``decode_text``: as a legacy
    single-byte encoding (cp1252, else latin-1) when it holds no UTF-8 at all, else as
    UTF-8 with damaged bytes. Deciding line by line, a latin-1 export reads right and a
    damaged byte in a UTF-8 file costs its own line nothing more. UTF-16 files (with a
    BOM) are decoded as such. Control characters (damage) become U+FFFD.
    """
    for line in _decoded(stream):
        yield without_controls(line)


def _decoded(stream: BinaryIO) -> Iterator[str]:
    first = stream.readline()
    if first[:2] in _UTF16_BOMS and looks_utf16(first):
        yield from _utf16_lines(first, stream)
        return
    for raw in itertools.chain([first.removeprefix(_UTF8_BOM)], stream):
        if raw:
            text = decode_text(raw)
            yield raw.decode("utf-8") if text is None else text


def _utf16_lines(start: bytes, stream: BinaryIO) -> Iterator[str]:
    decoder = codecs.getincrementaldecoder("utf-16")(errors="replace")
    buffer = ""
    chunk = start
    while True:
        final = not chunk
        buffer += decoder.decode(chunk, final=final)
        *lines, buffer = buffer.split("\n")
        for line in lines:
            yield line + "\n"
        if final:
            break
        chunk = stream.read(_CHUNK)
    if buffer:
        yield buffer


def logical_lines(stream: BinaryIO) -> Iterator[tuple[int, str]]:
    """``(line_number, text)`` with CR, LF and CRLF all ending a line (Web of Science RIS
    separates tags with a bare CR), the ending removed; numbered from 1 as editors show."""
    number = 0
    for physical in decoded_lines(stream):
        body = physical[:-2] if physical.endswith("\r\n") else physical.removesuffix("\n")
        if "\r" not in body:
            number += 1
            yield number, body
            continue
        parts = body.split("\r")
        if not physical.endswith("\n") and parts[-1] == "":
            parts.pop()  # the file's last line ends with a bare CR
        for part in parts:
            number += 1
            yield number, part


def grown(value: str, separator: str, more: str, most: int) -> str:
    """``value`` continued by ``more``, but never past ``most`` characters: a value that
    would is cut there and marked ``CUT`` (its record is then reported, not imported),
    and a value already cut grows no more."""
    if value.endswith(CUT):
        return value
    if len(value) + len(separator) + len(more) <= most:
        return f"{value}{separator}{more}"
    return f"{value}{separator}{more}"[: most + 1] + CUT


def sniff_text(head: bytes) -> str:
    """The head of a file as text, for content sniffing (BOMs and bad bytes tolerated)."""
    if head[:2] in _UTF16_BOMS:
        return head.decode("utf-16", errors="ignore")
    return head.removeprefix(_UTF8_BOM).decode("utf-8", errors="ignore")


# -- plain text ---------------------------------------------------------------------------


_SPACES = re.compile(r"\s+")
_LINE_SPACES = re.compile(r"[^\S\n]+")
_BLANK_LINES = re.compile(r" ?\n[\s]*")


def _irregular(text: str) -> bool:
    """Whitespace other than single spaces? Most values have none, and skipping the
    rewrite (C-speed checks, no regex scan) keeps long abstracts cheap."""
    return "  " in text or not text.isprintable()


def clean(text: str | None) -> str | None:
    """Whitespace collapsed; ``None`` for empty text."""
    if text is None:
        return None
    if _irregular(text):
        text = _SPACES.sub(" ", text)
    return text.strip() or None


def clean_block(text: str | None) -> str | None:
    """Like ``clean`` but paragraphs (line breaks) kept: for abstracts."""
    if text is None:
        return None
    if _irregular(text):
        text = _LINE_SPACES.sub(" ", text.replace("\r\n", "\n").replace("\r", "\n"))
        text = _BLANK_LINES.sub("\n", text)
    return text.strip() or None


def unique(values: Iterable[str | None]) -> list[str]:
    """Cleaned, empty ones dropped, first occurrence kept, order kept."""
    seen: dict[str, None] = {}
    for value in values:
        text = clean(value)
        if text is not None:
            seen.setdefault(text, None)
    return list(seen)


# -- dates --------------------------------------------------------------------------------

_MONTH_NAMES = [
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
]
MONTHS: dict[str, int] = {name[:3]: index for index, name in enumerate(_MONTH_NAMES, 1)}
_MONTH_WORDS: dict[str, int] = {
    **MONTHS,
    **{name: index for index, name in enumerate(_MONTH_NAMES, 1)},
    "sept": 9,
}
_ISO_DATE = re.compile(r"^\s*(\d{4})(?:[-/.](\d{1,2})(?:[-/.](\d{1,2}))?)?(?!\d)")
_COMPACT_DATE = re.compile(r"^\s*(\d{4})(\d{2})(\d{2})\s*$")
_TOKENS = re.compile(r"[A-Za-z]+|\d+")
_LETTERS = re.compile(r"[A-Za-z]")
_YEAR = re.compile(r"^\s*(\d{4})(?:\.0*)?\s*$")
"""A year, also as spreadsheets and pandas write it (``1999.0``)."""


def valid_year(value: int | str | None) -> int | None:
    """Years the model accepts (1000-2999); anything else is not a year."""
    if value is None:
        return None
    match = _YEAR.match(str(value))
    year = int(match.group(1)) if match else 0
    return year if 1000 <= year <= 2999 else None


def _full_date(year: int | None, month: int | None, day: int | None) -> dt.date | None:
    if year is None or month is None or day is None:
        return None
    try:
        return dt.date(year, month, day)
    except ValueError:
        return None


def parse_date(text: str | None, year_hint: int | None = None) -> tuple[int | None, dt.date | None]:
    """``(year, date)`` from the many ways files write a date.

    ``date`` is set only when the day is known ("2006 Mar 1", "2019-03-12", "Mar 16" with a
    year hint): the model has no month precision, and the first of the month would claim a
    day nobody gave. ``year_hint`` supplies the year when the text has none (RIS DA "Mar 16"
    next to PY "2012").
    """
    if not text or not text.strip():
        return year_hint, None
    match = _COMPACT_DATE.match(text) or _ISO_DATE.match(text)
    if match and (match.group(2) or not _LETTERS.search(text, match.end())):
        year = valid_year(match.group(1))
        month = int(match.group(2)) if match.group(2) else None
        day = int(match.group(3)) if match.group(3) else None
        month = month if month and 1 <= month <= 12 else None
        return year or year_hint, _full_date(year, month, day if month else None)
    year = month = day = None
    for token in _TOKENS.findall(text):
        if token.isdigit():
            if len(token) == 4 and year is None:
                year = valid_year(token)
            elif len(token) <= 2 and day is None and 1 <= int(token) <= 31:
                day = int(token)
        elif month is None:
            month = _MONTH_WORDS.get(token.lower())
    year = year or year_hint
    return year, _full_date(year, month, day)


def date_from_parts(year: int | None, month: str | None, day: str | None) -> dt.date | None:
    """A date from separate year, month (``3``, ``Mar``, ``March``) and day fields."""
    if year is None or not month or not day:
        return None
    month = month.strip()
    text = f"{year}-{month}-{day.strip()}" if month.isdigit() else f"{month} {day}"
    return parse_date(text, year)[1]


# -- identifiers, pages, ISSNs, links ------------------------------------------------------

_ISSN = re.compile(r"(?<![\dXx-])(\d{4})-?(\d{3}[\dXx])(?![\dXx-])")
_ORCID = re.compile(r"(\d{4}-\d{4}-\d{4}-\d{3}[\dX])")
_PERCENT_ESCAPE = re.compile(r"%[0-9A-Fa-f]{2}")
_URL = re.compile(r"^(?:https?|ftp)://\S+$", re.IGNORECASE)
_DOI_URL = re.compile(r"^https?://(?:dx\.)?doi\.org/", re.IGNORECASE)


def issn_text(values: Iterable[str | None]) -> str | None:
    """Every ISSN in the values as ``NNNN-NNNN``, ``"; "``-joined (print and electronic
    ISSNs both help matching); ISBNs and other numbers are left out."""
    found = unique(
        f"{match.group(1)}-{match.group(2).upper()}"
        for value in values
        if value
        for match in _ISSN.finditer(value)
    )
    return "; ".join(found) or None


def clean_doi(text: str | None) -> str | None:
    """DOIs from URLs sometimes arrive percent-encoded (Ovid: ``%2876%29``)."""
    if not text:
        return None
    if _PERCENT_ESCAPE.search(text):
        text = unquote(text)
    return text.strip() or None


def orcid(text: str | None) -> str | None:
    match = _ORCID.search((text or "").upper())
    return match.group(1) if match else None


def clean_pages(text: str | None) -> str | None:
    """``134--137``, ``134 \u2013 137`` (en dash) -> ``134-137``; other page text kept."""
    text = clean(text)
    if text is None:
        return None
    text = re.sub(r"\s*(?:--+|[\u2010-\u2015])\s*", "-", text)
    return re.sub(r"\s*-\s*", "-", text)


def join_pages(start: str | None, end: str | None) -> str | None:
    start, end = clean(start), clean(end)
    if start and end:
        return clean_pages(f"{start}-{end}")
    return clean_pages(start or end)


def split_pages(pages: str | None) -> tuple[str | None, str | None]:
    """The inverse of ``join_pages``: ``"1535-41"`` -> ``("1535", "41")``."""
    if not pages:
        return None, None
    start, dash, end = pages.partition("-")
    return (start or None), (end if dash and end else None)


def link_kind(url: str, default: LinkKind) -> LinkKind:
    return "doi" if _DOI_URL.match(url) else default


def make_links(urls: Iterable[tuple[str | None, LinkKind]]) -> list[Link]:
    """Links for the web addresses among the values (local file paths and Zotero
    ``internal-pdf://`` attachments are not addresses anyone else can open)."""
    links: dict[str, Link] = {}
    for url, kind in urls:
        url = (url or "").strip().rstrip(",;")
        if _URL.match(url) and url not in links:
            links[url] = Link(url=url, kind=link_kind(url, kind))
    return list(links.values())


# -- names --------------------------------------------------------------------------------

_INITIALS = r"(?:[A-Z]{1,4}|(?:[A-Z]\.\s?){1,4})"
_VANCOUVER_NAME = re.compile(rf"^[^\s,;]+(?: [^\s,;]+)* {_INITIALS}$")
_TRAILING_INITIALS = re.compile(rf"^(.+?) ({_INITIALS})$")


def parse_person(text: str | None) -> Author | None:
    """``"Smith, John"``, ``"John Smith"`` and MEDLINE/Vancouver ``"Smith JA"``."""
    text = clean(text)
    if text is None:
        return None
    if "," not in text:
        match = _TRAILING_INITIALS.match(text)
        if match:
            return Author.from_parts(match.group(1), match.group(2).strip())
    return Author.parse(text)


def split_people(text: str | None) -> list[str]:
    """One author field holding several people: ``;``-separated, BibTeX-style ``and``, or a
    Vancouver list ``"Griffiths RR, Johnson MW"`` (Cochrane CENTRAL via Ovid)."""
    text = clean(text)
    if text is None:
        return []
    if ";" in text:
        return [part for part in (p.strip() for p in text.split(";")) if part]
    if re.search(r"\s+and\s+", text):
        return [part for part in re.split(r"\s+and\s+", text) if part.strip()]
    parts = [part.strip() for part in text.split(",")]
    if len(parts) > 1 and all(_VANCOUVER_NAME.match(part) for part in parts):
        return parts
    return [text]


_ET_AL = re.compile(r"^et\.? al\.?$", re.IGNORECASE)


def people(values: Iterable[str | None]) -> list[Author]:
    """Every person in the values; an "et al." stand-in is not one."""
    authors = []
    for value in values:
        for part in split_people(value):
            if _ET_AL.match(part.strip()):
                continue
            author = parse_person(part)
            if author is not None:
                authors.append(author)
    return authors


def person_text(author: Author) -> str:
    """``"Family, Given"`` when split, else the name as given."""
    if author.family:
        return f"{author.family}, {author.given}" if author.given else author.family
    return author.name


# -- building records ----------------------------------------------------------------------


@dataclass
class Draft:
    """The fields a reader collected for one record, before validation.

    Readers fill it field by field; ``build`` makes the ``Paper`` or, when the record cannot
    be one (no title, a value the model refuses), the ``RecordProblem`` that says why.
    """

    record_id: str | None = None
    title: str | None = None
    abstract: str | None = None
    authors: list[Author] = field(default_factory=list)
    venue: str | None = None
    volume: str | None = None
    issue: str | None = None
    pages: str | None = None
    publisher: str | None = None
    issn: str | None = None
    language: str | None = None
    year: int | None = None
    published: dt.date | None = None
    publication_types: list[str] = field(default_factory=list)
    mesh_terms: list[str] = field(default_factory=list)
    keywords: list[str] = field(default_factory=list)
    links: list[Link] = field(default_factory=list)
    doi: str | None = None
    pmid: str | None = None
    pmcid: str | None = None
    arxiv_id: str | None = None
    openalex_id: str | None = None
    s2_id: str | None = None
    nct_id: str | None = None
    citation_count: int | None = None
    retraction: Retraction | None = None

    def build(
        self, *, source: str, file: str, number: int, line: int | None = None
    ) -> Paper | RecordProblem:
        title = clean(self.title)
        record_id = clean(self.record_id)
        if title is None:
            known = [
                f"{name} {value}"
                for name, value in (("PMID", self.pmid), ("DOI", clean_doi(self.doi)))
                if value
            ]
            named = f" ({', '.join(known)})" if known else ""
            return RecordProblem(
                file,
                number,
                f"the record{named} has no title; skipped (a record without one cannot be "
                "screened or matched with its copies): add its title to the file and import it "
                "again",
                line,
                record_id=record_id,
                whole=True,
            )
        try:
            return Paper(
                record_id=record_id,
                ids=Identifiers(
                    doi=clean_doi(self.doi),
                    pmid=self.pmid,
                    pmcid=self.pmcid,
                    arxiv_id=self.arxiv_id,
                    openalex_id=self.openalex_id,
                    s2_id=self.s2_id,
                    nct_id=self.nct_id,
                ),
                title=title,
                abstract=clean_block(self.abstract),
                authors=self.authors,
                venue=clean(self.venue),
                volume=clean(self.volume),
                issue=clean(self.issue),
                pages=clean_pages(self.pages),
                publisher=clean(self.publisher),
                issn=self.issn,
                language=clean(self.language),
                year=self.year,
                published=self.published,
                publication_types=unique(self.publication_types),
                mesh_terms=unique(self.mesh_terms),
                keywords=unique(self.keywords),
                links=self.links,
                citation_count=self.citation_count,
                retraction=self.retraction,
                provenance=[Provenance(source=source, source_id=record_id)],
            )
        except ValidationError as exc:
            return RecordProblem(
                file,
                number,
                f"{validation_message(exc)}; skipped",
                line,
                record_id=record_id,
                whole=True,
            )


_RECORD_MESSAGES = {"extra_forbidden": lambda _error: "is not a field of a record"}


def validation_message(exc: ValidationError, limit: int = 3) -> str:
    """Pydantic's report condensed to a few problems a user can act on, in our words
    ("year must be a whole number"; ``scholarstream.validation_messages``)."""
    errors = [
        {**error, "loc": tuple(p for p in error["loc"] if p not in ("paper", "trial"))}
        for error in exc.errors()
    ]
    problems = describe_errors(errors, whole="the record", overrides=_RECORD_MESSAGES)
    parts = [problem.message for problem in problems[:limit]]
    more = len(problems) - limit
    if more > 0:
        parts.append(f"and {more} more")
    return "; ".join(parts)


def as_paper(record: Paper | Trial) -> Paper:
    """A trial seen as a bibliographic record, for the formats that only hold those.

    Only JSON keeps a ``Trial`` as such; RIS, BibTeX and CSV get its registry entry: the
    title, the summary as abstract, ClinicalTrials.gov as venue, the first-posted (else
    start) date and its identifiers and links.
    """
    if isinstance(record, Paper):
        return record
    date = record.first_posted or record.start_date
    return Paper(
        record_id=record.record_id,
        ids=record.ids,
        title=record.title,
        abstract=record.summary,
        venue="ClinicalTrials.gov",
        published=date,
        publication_types=["Clinical Trial Registration"],
        mesh_terms=record.mesh_terms,
        keywords=record.keywords,
        links=record.links,
    )
