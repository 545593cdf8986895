"""MEDLINE text (PubMed's "PubMed" format, saved as ``.nbib`` or ``.txt``): records of
``TAG - value`` lines starting at ``PMID-``, values continued on lines indented six spaces.

Read only: PubMed produces it, and the formats we export carry the same fields. Authors
come as ``FAU`` (full name) followed by ``AU`` (initials) and then that author's ``AD``
affiliations and ``AUID`` ORCID; older records give one ``AD`` before the authors, which
was the first author's.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import BinaryIO

from scholarstream.errors import InvalidInputError
from scholarstream.papers._identifiers import normalize_doi
from scholarstream.papers._model import Author, Paper, Retraction
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
    Draft,
    clean,
    grown,
    issn_text,
    logical_lines,
    orcid,
    parse_date,
    parse_person,
    sniff_text,
    unique,
)
from scholarstream.settings import LimitsSettings

_TAG = re.compile(r"^([A-Z][A-Z0-9]{0,3}) *- ?(.*)$")
_SNIFF = re.compile(r"^PMID- ?\d", re.MULTILINE)
_GLUED = re.compile(r"^(.*?)(PMID- ?\d+\s*)$")
"""A PMID line run into the line before it, or indented by damage."""
_ID_KIND = re.compile(r"^(.*?)\s*\[(\w+)\]\s*$")
_DOI_IN_TEXT = re.compile(r"doi:\s*(10\.\S+)", re.IGNORECASE)


@dataclass
class _Raw:
    number: int
    line: int
    tags: list[tuple[str, str]] = field(default_factory=list)
    damaged: int | None = None
    """The first line in the record that is neither a tag nor an indented continuation."""
    size: int = 0
    oversized: int | None = None
    """The record limit, once the record passed it (nothing more is kept)."""

    def room(self, text: str, most: int) -> bool:
        """Is there room in the record for ``text``? Once there is not, it stays full
        (its first tag is always kept: a record has one)."""
        self.size += len(text)
        if self.size > most:
            self.oversized = most
        return self.oversized is None or not self.tags

    def values(self, *tags: str) -> list[str]:
        return [value for tag in tags for t, value in self.tags if t == tag and value]

    def first(self, *tags: str) -> str | None:
        values = self.values(*tags)
        return values[0] if values else None


def sniff_medline(head: bytes) -> bool:
    return _SNIFF.search(sniff_text(head)) is not None


def read_medline(
    stream: BinaryIO, filename: str, limits: LimitsSettings = DEFAULT_LIMITS
) -> Iterator[ReadItem]:
    """A record runs from its ``PMID-`` line to the next blank line or ``PMID-`` line.

    Tagged lines after a blank line but before any ``PMID-`` line are a record whose PMID
    line is damaged: reported, not silently dropped. The format has no end-of-record
    mark, so a file cut off inside its last record would look complete. PubMed ends
    every record with the same tag (``SO``): when the earlier records all end with
    ``SO`` (or, from another tool, at least two end with one same tag) and the file's
    last record with another, that record was cut off, and is reported instead of
    imported half-read.
    """
    reader = _Reader(filename, limits)
    for number, text in logical_lines(stream):
        glued = _GLUED.match(text) if "PMID-" in text else None
        if glued is not None:  # a record's first line run into the line before it
            if glued.group(1).strip():
                yield from reader.line(number, glued.group(1))
            text = glued.group(2)
        yield from reader.line(number, text)
    yield from reader.finish()
    if reader.records == 0 and reader.other_text:
        raise InvalidInputError(
            f"{filename} is not a MEDLINE (.nbib) file: no record starts with a 'PMID- ' line.",
            hint="Check the file's format, or pass the right one explicitly.",
        )


class _Reader:
    """Lines in, records and problems out; problems before the first record are held
    back (the file may not be MEDLINE at all, and is then refused as a whole)."""

    def __init__(self, filename: str, limits: LimitsSettings) -> None:
        self.filename = filename
        self.most = limits.import_field_chars
        self.record_most = record_chars(limits)
        self.current: _Raw | None = None
        self.orphan: _Raw | None = None  # tags before any PMID line
        self.count = 0  # records numbered, PMID-less ones too
        self.records = 0
        self.other_text = False
        self.held: list[RecordProblem] = []  # before the first record: maybe not MEDLINE
        self.end_tags: set[str] = set()
        self.ended = 0

    def line(self, number: int, text: str) -> Iterator[ReadItem]:
        if not text.strip():
            yield from self._close()
            return
        match = _TAG.match(text)
        open_record = self.current or self.orphan
        if match is None or text[:1].isspace():
            if open_record is not None and open_record.tags:
                if not open_record.room(text, self.record_most):
                    return
                tag, value = open_record.tags[-1]
                open_record.tags[-1] = (tag, grown(value, " ", text.strip(), self.most))
                if not text[:1].isspace() and open_record.damaged is None:
                    open_record.damaged = number
            else:
                self.other_text = True
            return
        tag, value = match.group(1), match.group(2).strip()
        if tag == "PMID":
            yield from self._close()
            yield from self.held
            self.held.clear()
            self.records += 1
            self.count += 1
            self.current = _Raw(self.count, number)
        record = self.current or self.orphan
        if record is None:
            record = self.orphan = _Raw(0, number)
        if record.room(value, self.record_most):
            record.tags.append((tag, value))

    def _close(self) -> Iterator[ReadItem]:
        if self.current is not None:
            self.end_tags.add(self.current.tags[-1][0])
            self.ended += 1
            yield _build(self.current, self.filename)
            self.current = None
        if self.orphan is not None:
            self.other_text = True
            self.count += 1
            problem = RecordProblem(
                self.filename,
                self.count,
                "the record does not start with a 'PMID- ' line (is that line damaged?); skipped",
                self.orphan.line,
            )
            self.orphan = None
            if self.records:
                yield problem
            else:
                self.held.append(problem)

    def finish(self) -> Iterator[ReadItem]:
        current = self.current
        if current is None:
            yield from self._close()
            return
        last_tag = current.tags[-1][0]
        if _cut_off(last_tag, self.end_tags, self.ended):
            self.current = None
            yield RecordProblem(
                self.filename,
                current.number,
                f"the file ends inside this record (it stops at its {last_tag} field, where "
                f"the other records end with {next(iter(self.end_tags))}): it is cut off; "
                "skipped. Download the file again to import it whole",
                current.line,
            )
        yield from self._close()


def _cut_off(last_tag: str, end_tags: set[str], ended: int) -> bool:
    if len(end_tags) != 1 or last_tag in end_tags:
        return False
    return end_tags == {"SO"} or ended >= 2


def _build(raw: _Raw, filename: str) -> Paper | RecordProblem:
    if raw.oversized is not None:
        return too_large(filename, raw.number, raw.oversized, raw.line)
    if raw.damaged is not None:
        return RecordProblem(
            filename,
            raw.number,
            f"line {raw.damaged} in the record is damaged: it is neither a 'TAG - value' line "
            "nor an indented continuation (the next record may have run into this one); "
            "skipped",
            raw.line,
        )
    return _draft(raw).build(source="medline", file=filename, number=raw.number, line=raw.line)


def _authors(raw: _Raw) -> list[Author]:
    """``FAU``/``AU`` pairs (or either alone), each followed by its ``AD`` and ``AUID``."""
    authors: list[Author] = []
    details: list[tuple[list[str], str | None]] = []
    leading: list[str] = []
    last_tag = ""
    for tag, value in raw.tags:
        if tag in ("FAU", "AU", "CN"):
            if not (tag == "AU" and last_tag == "FAU"):
                author = Author(name=value) if tag == "CN" else parse_person(value)
                if author is not None:
                    authors.append(author)
                    details.append(([], None))
            last_tag = tag
        elif tag == "AD":
            (details[-1][0] if details else leading).append(value)
        elif tag == "AUID" and details and orcid(value):
            details[-1] = (details[-1][0], orcid(value))
    if leading and details:
        details[0] = (leading + details[0][0], details[0][1])
    return [
        author.model_copy(update={"affiliations": unique(affiliations), "orcid": author_orcid})
        for author, (affiliations, author_orcid) in zip(authors, details, strict=True)
    ]


def _identifier(raw: _Raw, kind: str) -> str | None:
    """``AID``/``LID`` values are ``10.1000/x [doi]`` or ``S0140-6736(20)30183-5 [pii]``."""
    for value in raw.values("AID", "LID"):
        match = _ID_KIND.match(value)
        if match and match.group(2).lower() == kind:
            return match.group(1)
    return None


def _retraction(raw: _Raw) -> Retraction | None:
    notice = raw.first("RIN")
    label = "Retraction in"
    if notice is None:
        notice, label = raw.first("ECI"), "Expression of concern in"
    if notice is None:
        return None
    doi = _DOI_IN_TEXT.search(notice)
    return Retraction(notice=f"{label}: {notice}", doi=normalize_doi(doi.group(1) if doi else None))


def _mesh(heading: str) -> str:
    """``Sequence Alignment/*methods`` -> ``Sequence Alignment`` (major-topic star and
    subheadings dropped: the heading is what a search matches)."""
    return heading.split("/", 1)[0].lstrip("*").strip()


def _draft(raw: _Raw) -> Draft:
    dp = raw.first("DP")
    year, published = parse_date(dp)
    if published is None:
        dep_year, dep = parse_date(raw.first("DEP"))
        published = dep if dep is not None and dep_year == (year or dep_year) else None
    pmid = raw.first("PMID")
    return Draft(
        record_id=pmid,
        title=raw.first("TI", "BTI", "TT"),
        abstract=raw.first("AB"),
        authors=_authors(raw),
        venue=raw.first("JT", "TA"),
        volume=raw.first("VI"),
        issue=raw.first("IP"),
        pages=raw.first("PG"),
        publisher=raw.first("PB"),
        issn=issn_text(raw.values("IS")),
        language=clean(raw.first("LA")),
        year=year,
        published=published,
        publication_types=raw.values("PT"),
        mesh_terms=[_mesh(value) for value in raw.values("MH")],
        keywords=raw.values("OT"),
        doi=_identifier(raw, "doi"),
        pmid=pmid,
        pmcid=raw.first("PMC"),
        retraction=_retraction(raw),
    )


MEDLINE = register_format(
    FileFormat(
        name="medline",
        label="MEDLINE / PubMed (.nbib)",
        extensions=(".nbib", ".txt", ".medline"),
        sniff=sniff_medline,
        read=read_medline,
        media_type="application/nbib",
        aliases=("nbib",),
    )
)
