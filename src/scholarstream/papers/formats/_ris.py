"""RIS (``TY  - JOUR`` ... ``ER  - ``): the lingua franca of reference managers and
bibliographic databases (Zotero, EndNote, Mendeley, Scopus, Web of Science, Ovid).

Read line by line rather than with ``rispy.load`` so that a file of any size streams, a
broken record costs only itself, and each problem names the line its record starts on.
Exporters disagree on tags (Ovid puts the journal in JF and a translated title in T2,
Scopus the PubMed id in C2, EndNote the PMID in AN with ``DP - NLM``); the mapping below
takes each where it is known to be.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import BinaryIO, TextIO

from scholarstream.errors import InvalidInputError
from scholarstream.papers._identifiers import normalize_doi, normalize_pmid
from scholarstream.papers._model import LinkKind, Paper, Trial
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
    as_paper,
    clean,
    grown,
    issn_text,
    join_pages,
    logical_lines,
    make_links,
    parse_date,
    people,
    person_text,
    sniff_text,
    split_pages,
    unique,
    valid_year,
)
from scholarstream.settings import LimitsSettings

_TAG = re.compile(r"^([A-Z][A-Z0-9])  ?-(?: (.*))?$")
_SNIFF = re.compile(r"^\s*TY  ?- ", re.MULTILINE)
_GLUED = re.compile(r"^ER  ?-[^A-Z]{0,3}(TY  ?- .*)$")
_DAMAGED_ER = re.compile(r"^ER  ?-\S")

RIS_TYPES: dict[str, str] = {
    "ABST": "Abstract",
    "ADVS": "Audiovisual Material",
    "AGGR": "Aggregated Database",
    "ANCIENT": "Ancient Text",
    "ART": "Artwork",
    "BILL": "Bill",
    "BLOG": "Blog",
    "BOOK": "Book",
    "CASE": "Case",
    "CHAP": "Book Section",
    "CHART": "Chart",
    "CLSWK": "Classical Work",
    "COMP": "Computer Program",
    "CONF": "Conference Proceedings",
    "CPAPER": "Conference Paper",
    "CTLG": "Catalog",
    "DATA": "Dataset",
    "DBASE": "Online Database",
    "DICT": "Dictionary",
    "EBOOK": "Electronic Book",
    "ECHAP": "Electronic Book Section",
    "EDBOOK": "Edited Book",
    "EJOUR": "Electronic Article",
    "ELEC": "Web Page",
    "ENCYC": "Encyclopedia",
    "EQUA": "Equation",
    "FIGURE": "Figure",
    "GOVDOC": "Government Document",
    "GRANT": "Grant",
    "HEAR": "Hearing",
    "ICOMM": "Internet Communication",
    "INPR": "In Press",
    "JFULL": "Journal",
    "JOUR": "Journal Article",
    "LEGAL": "Legal Rule or Regulation",
    "MANSCPT": "Manuscript",
    "MAP": "Map",
    "MGZN": "Magazine Article",
    "MPCT": "Motion Picture",
    "MULTI": "Online Multimedia",
    "MUSIC": "Music",
    "NEWS": "Newspaper Article",
    "PAMP": "Pamphlet",
    "PAT": "Patent",
    "PCOMM": "Personal Communication",
    "RPRT": "Report",
    "SER": "Serial",
    "SLIDE": "Slide",
    "SOUND": "Sound Recording",
    "STAND": "Standard",
    "STAT": "Statute",
    "THES": "Thesis",
    "UNPB": "Unpublished Work",
    "VIDEO": "Video Recording",
}
"""RIS type codes and the publication type each stands for; ``GEN`` (generic) says nothing
and is left out."""

_TYPE_CODES: dict[str, str] = {
    **{name.lower(): code for code, name in RIS_TYPES.items()},
    "article": "JOUR",
    "review": "JOUR",
    "editorial": "JOUR",
    "letter": "JOUR",
    "comment": "JOUR",
    "book chapter": "CHAP",
    "incollection": "CHAP",
    "proceedings paper": "CPAPER",
    "dissertation": "THES",
    "preprint": "UNPB",
}
"""Publication type (lower case) -> the RIS code an export uses for it."""

_CLASSIFICATION = re.compile(r"\[\d+\]\s*$")
"""PsycINFO (via Ovid) puts a classification code like ``Psychopharmacology [2580]`` in M3."""
_MEDLINE_DATABASE = re.compile(r"pubmed|medline|\bnlm\b", re.IGNORECASE)
_OVID_MEDLINE_LINK = re.compile(r"[?&]D=(?:med|prem)", re.IGNORECASE)

_TITLE_TAGS = ("TI", "T1", "CT", "ST", "BT")
_VENUE_TAGS = ("JF", "T2", "JO", "JA", "J1", "J2")
_ONE_PER_LINE = frozenset({"KW", "AU", "A1", "A2", "UR", "L1", "L2", "LK"})
"""Tags whose untagged follow-on lines are further values (EndNote writes its keywords as
one ``KW`` line followed by one keyword per line), not a wrapped value."""
_LINK_TAGS: dict[str, LinkKind] = {"UR": "landing", "LK": "landing", "L1": "pdf", "L2": "full_text"}


@dataclass
class _Raw:
    """One record's tags as read, in order, before mapping."""

    number: int
    line: int
    typed: bool
    tags: list[tuple[str, str]] = field(default_factory=list)
    size: int = 0
    """Characters collected; past the record limit nothing more is kept (``oversized``)."""
    oversized: int | None = None
    _grouped: dict[str, list[str]] | None = field(default=None, init=False, repr=False)

    def room(self, text: str, most: int) -> bool:
        """Is there room in the record for ``text``? Once there is not, it stays full
        (its first tag is always kept: a record has one)."""
        self.size += len(text)
        if self.size > most:
            self.oversized = most
        return self.oversized is None or not self.tags

    def values(self, *tags: str) -> list[str]:
        if self._grouped is None:
            self._grouped = {}
            for tag, value in self.tags:
                if value.strip():
                    self._grouped.setdefault(tag, []).append(value)
        if len(tags) == 1:
            return self._grouped.get(tags[0], [])
        return [value for tag in tags for value in self._grouped.get(tag, [])]

    def first(self, *tags: str) -> str | None:
        for tag in tags:
            values = self.values(tag)
            if values:
                return values[0]
        return None


def sniff_ris(head: bytes) -> bool:
    return _SNIFF.search(sniff_text(head)) is not None


def read_ris(
    stream: BinaryIO, filename: str, limits: LimitsSettings = DEFAULT_LIMITS
) -> Iterator[ReadItem]:
    """Records between ``TY`` and ``ER``; lines without a tag continue the tag before
    them (or, for list tags, add a value). Text between records (Ovid's numbering, its
    "Link to the Ovid Full Text" lines, stray tags after ``ER`` like Ovid's ``NL``) is
    skipped, unless it holds a title or an author, or an ``ER`` closes it: then it was a
    record that lost its ``TY`` line, and is reported. A value stops growing at the
    field limit, a record at the record limit (then reported, see ``base``)."""
    most, record_most = limits.import_field_chars, record_chars(limits)
    current: _Raw | None = None
    orphan: _Raw | None = None
    count = 0
    other_text = False
    for number, text in _unglued(logical_lines(stream)):
        match = _TAG.match(text)
        if match is None:
            if current is not None and current.tags and text.strip():
                if not current.room(text, record_most):
                    continue
                tag, value = current.tags[-1]
                if tag in _ONE_PER_LINE:
                    current.tags.append((tag, text.strip()))
                else:
                    current.tags[-1] = (tag, grown(value, "\n", text.strip(), most))
            elif current is None and text.strip():
                other_text = True
            continue
        tag, value = match.group(1), (match.group(2) or "").strip()
        if tag == "TY":
            if current is not None:
                yield _unterminated(current, filename)
            if orphan is not None and orphan.values(*_TITLE_TAGS, "AU", "A1"):
                count += 1
                yield _record(_Raw(count, orphan.line, typed=False), filename)
            count += 1
            current, orphan = _Raw(count, number, typed=True), None
        elif tag == "ER":
            if current is None and orphan is not None:
                count += 1
                current, orphan = _Raw(count, orphan.line, typed=False), None
            if current is not None:
                yield _record(current, filename)
            current = None
            continue
        elif current is None:
            orphan = orphan or _Raw(0, number, typed=False)
            if orphan.room(value, record_most):
                orphan.tags.append((tag, value))
            continue
        if current.room(value, record_most):
            current.tags.append((tag, value))
    if current is not None:
        yield _unterminated(current, filename)
    if count == 0 and (other_text or orphan is not None):
        raise InvalidInputError(
            f"{filename} is not a RIS file: no record starts with a 'TY  - ' line.",
            hint="Check the file's format, or pass the right one explicitly.",
        )
    if orphan is not None and orphan.values(*_TITLE_TAGS, "AU", "A1"):
        yield _record(_Raw(count + 1, orphan.line, typed=False), filename)


def _unglued(lines: Iterator[tuple[int, str]]) -> Iterator[tuple[int, str]]:
    """An ``ER`` line and the next record's ``TY`` line run together (the line break
    between them lost) are two lines again: else the two records would silently be one.
    An ``ER`` line with a damaged byte after its dash still ends its record."""
    for number, text in lines:
        glued = _GLUED.match(text)
        if glued is not None:
            yield number, "ER  - "
            yield number, glued.group(1)
        elif _DAMAGED_ER.match(text):
            yield number, "ER  - "  # ``ER`` has no value: what follows it is damage
        else:
            yield number, text


def _unterminated(raw: _Raw, filename: str) -> RecordProblem:
    return RecordProblem(
        filename,
        raw.number,
        "the record has no 'ER  - ' line before the next record or the end of the file "
        "(unterminated); skipped",
        raw.line,
    )


def _record(raw: _Raw, filename: str) -> Paper | RecordProblem:
    if raw.oversized is not None:
        return too_large(filename, raw.number, raw.oversized, raw.line)
    if not raw.typed:
        message = "the record does not start with a 'TY  - ' line; skipped"
        return RecordProblem(filename, raw.number, message, raw.line)
    return _draft(raw).build(source="ris", file=filename, number=raw.number, line=raw.line)


def _draft(raw: _Raw) -> Draft:
    year = next(
        (y for y in (valid_year(parse_date(v)[0]) for v in raw.values("PY", "Y1", "DA")) if y),
        None,
    )
    published = next(
        (d for d in (parse_date(v, year)[1] for v in raw.values("DA", "PY", "Y1")) if d), None
    )
    start = raw.first("SP")
    links = make_links(
        (url, _LINK_TAGS[tag])
        for tag, value in raw.tags
        if tag in _LINK_TAGS
        for url in value.split()
    )
    return Draft(
        record_id=raw.first("ID"),
        title=raw.first(*_TITLE_TAGS),
        abstract=raw.first("AB", "N2"),
        authors=people(raw.values("AU", "A1")) or people(raw.values("A2")),
        venue=raw.first(*_VENUE_TAGS),
        volume=raw.first("VL"),
        issue=raw.first("IS", "CP"),
        pages=start if start and "-" in start else join_pages(start, raw.first("EP")),
        publisher=raw.first("PB"),
        issn=issn_text(raw.values("SN")),
        language=raw.first("LA"),
        year=year,
        published=published,
        publication_types=_types(raw),
        keywords=raw.values("KW"),
        links=links,
        doi=raw.first("DO", "DI")
        or next((link.url for link in links if link.kind == "doi"), None)
        or next((value for value in raw.values("M3") if normalize_doi(value)), None),
        pmid=_pmid(raw),
        pmcid=next((v for v in raw.values("C2") if v.upper().startswith("PMC")), None),
    )


def _types(raw: _Raw) -> list[str]:
    kind = RIS_TYPES.get((raw.first("TY") or "").upper())
    extra = [value for value in raw.values("M3") if _names_a_type(value)]
    return unique([kind, *extra])


def _names_a_type(m3: str) -> bool:
    """EndNote and some databases put the DOI or an accession number in M3, PsycINFO a
    classification code: those are no publication type."""
    return (
        not _CLASSIFICATION.search(m3)
        and normalize_doi(m3) is None
        and any(character.isalpha() for character in m3)
    )


def _pmid(raw: _Raw) -> str | None:
    """RIS has no PMID tag; it is the accession number when the database is PubMed."""
    database = " ".join(raw.values("DB", "DP"))
    accession = raw.first("AN")
    if accession and (_MEDLINE_DATABASE.search(database) or accession.upper().startswith("PMID")):
        return normalize_pmid(accession)
    if "scopus" in database.lower():
        return next((p for p in map(normalize_pmid, raw.values("C2")) if p), None)
    links = " ".join(raw.values("L2", "UR"))
    if _OVID_MEDLINE_LINK.search(links):
        return normalize_pmid(raw.first("ID"))
    return None


# -- writing -----------------------------------------------------------------------------


def write_ris(records: Iterable[Paper | Trial], out: TextIO) -> int:
    count = 0
    for record in records:
        out.write("".join(f"{line}\n" for line in _lines(as_paper(record))))
        out.write("\n")
        count += 1
    return count


def _tag(tag: str, value: str | None) -> Iterator[str]:
    """One tag line; a value on several lines (an abstract's paragraphs) continues on
    untagged lines, indented when a paragraph would otherwise look like a tag."""
    if not value:
        return
    first, *rest = value.splitlines() or [""]
    yield f"{tag}  - {first}"
    for line in rest:
        yield f" {line}" if _TAG.match(line) else line


def _ris_type(paper: Paper) -> tuple[str, str | None]:
    for kind in paper.publication_types:
        code = _TYPE_CODES.get(kind.lower())
        if code:
            return code, RIS_TYPES[code]
    return ("JOUR", None) if paper.venue else ("GEN", None)


def _lines(paper: Paper) -> Iterator[str]:
    code, implied = _ris_type(paper)
    start, end = split_pages(paper.pages)
    ids = paper.ids
    yield from _tag("TY", code)
    yield from _tag("ID", paper.record_id)
    yield from _tag("TI", paper.title)
    for author in paper.authors:
        yield from _tag("AU", person_text(author))
    yield from _tag("PY", str(paper.year) if paper.year else None)
    yield from _tag("DA", paper.published.strftime("%Y/%m/%d") if paper.published else None)
    yield from _tag("T2", paper.venue)
    yield from _tag("VL", paper.volume)
    yield from _tag("IS", paper.issue)
    yield from _tag("SP", start)
    yield from _tag("EP", end)
    yield from _tag("PB", paper.publisher)
    for issn in (paper.issn or "").split(";"):
        yield from _tag("SN", clean(issn))
    yield from _tag("LA", paper.language)
    yield from _tag("AB", paper.abstract)
    yield from _tag("DO", ids.doi)
    if ids.pmid:
        yield from _tag("AN", ids.pmid)
        yield from _tag("DB", "PubMed")
    yield from _tag("C2", ids.pmcid)
    for keyword in unique([*paper.keywords, *paper.mesh_terms]):
        yield from _tag("KW", keyword)
    for kind in paper.publication_types:
        if kind != implied:
            yield from _tag("M3", kind)
    for link in paper.links:
        yield from _tag({"pdf": "L1", "full_text": "L2"}.get(link.kind, "UR"), link.url)
    yield "ER  - "


RIS = register_format(
    FileFormat(
        name="ris",
        label="RIS",
        extensions=(".ris", ".txt"),
        sniff=sniff_ris,
        read=read_ris,
        write=write_ris,
        media_type="application/x-research-info-systems",
        export_extension=".ris",
    )
)
