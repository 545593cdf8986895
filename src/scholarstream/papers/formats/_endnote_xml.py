"""EndNote XML (``<xml><records><record>...``), as EndNote, Zotero and Mendeley export it.

Read only: the file is cut into its ``<record>`` elements as it streams and each is parsed
on its own with ``lxml`` (see ``_xml_records``), so a large library streams in bounded
memory and broken markup costs only its record. EndNote wraps text in ``<style>`` elements
(``<title><style face="normal">...</style></title>``), so every value is the element's
whole text, not its ``.text``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from functools import partial
from typing import BinaryIO

from lxml import etree

from scholarstream.errors import InvalidInputError
from scholarstream.papers._identifiers import normalize_pmid
from scholarstream.papers._model import LinkKind
from scholarstream.papers.formats._base import (
    DEFAULT_LIMITS,
    FileFormat,
    ReadItem,
    record_chars,
    register_format,
)
from scholarstream.papers.formats._fields import (
    Draft,
    clean,
    clean_block,
    issn_text,
    make_links,
    parse_date,
    people,
    valid_year,
)
from scholarstream.papers.formats._xml_records import (
    Piece,
    Tally,
    XmlRecords,
    ending,
    read_pieces,
)
from scholarstream.settings import LimitsSettings

_SNIFF = re.compile(rb"<xml>\s*<records\b")
_OTHER_DATABASE = re.compile(r"embase|scopus|web of science|psycinfo|cinahl", re.IGNORECASE)
_URL_KINDS: dict[str, LinkKind] = {
    "urls/related-urls/url": "landing",
    "urls/web-urls/url": "landing",
    "urls/pdf-urls/url": "pdf",
    "urls/text-urls/url": "full_text",
}
_NOT_A_TYPE = frozenset({"generic", ""})


def sniff_endnote_xml(head: bytes) -> bool:
    """EndNote's own root pair; PubMed XML (``<PubmedArticleSet>``) never has it."""
    return _SNIFF.search(head) is not None


def _all_text(element: etree._Element) -> str:
    """Text of the element and its ``<style>`` children (lxml yields ``str`` here)."""
    return "".join(part for part in element.itertext() if isinstance(part, str))


def _text(element: etree._Element | None) -> str | None:
    return None if element is None else clean(_all_text(element))


def _first(record: etree._Element, *paths: str) -> str | None:
    for path in paths:
        for element in record.iterfind(path):
            text = _text(element)
            if text:
                return text
    return None


def _all(record: etree._Element, path: str) -> list[str]:
    return [text for element in record.iterfind(path) if (text := _text(element))]


def _pmid(record: etree._Element) -> str | None:
    """``accession-num`` is the PMID for records from PubMed (Mendeley, EndNote's PubMed
    connection); other databases' accession numbers are left alone."""
    accession = _first(record, "accession-num")
    database = " ".join(
        _all(record, "remote-database-name") + _all(record, "remote-database-provider")
    )
    if accession is None or _OTHER_DATABASE.search(database):
        return None
    pmid = normalize_pmid(accession)
    return pmid if pmid and len(pmid) <= 8 else None


def _draft(record: etree._Element) -> Draft:
    year = valid_year(parse_date(_first(record, "dates/year"))[0])
    date_text = _first(record, "dates/pub-dates/date")
    date_year, published = parse_date(date_text, year)
    ref_type = record.find("ref-type")
    kind = (ref_type.get("name") or "") if ref_type is not None else ""
    abstract = record.find("abstract")
    return Draft(
        record_id=_first(record, "rec-number"),
        title=_first(record, "titles/title"),
        abstract=clean_block(_all_text(abstract)) if abstract is not None else None,
        authors=people(_all(record, "contributors/authors/author")),
        venue=_first(
            record,
            "titles/secondary-title",
            "periodical/full-title",
            "alt-periodical/full-title",
            "periodical/abbr-1",
        ),
        volume=_first(record, "volume"),
        issue=_first(record, "number", "issue"),
        pages=_first(record, "pages"),
        publisher=_first(record, "publisher"),
        issn=issn_text(_all(record, "isbn")),
        language=_first(record, "language"),
        year=year or date_year,
        published=published,
        publication_types=[] if kind.strip().lower() in _NOT_A_TYPE else [kind],
        keywords=_all(record, "keywords/keyword"),
        links=make_links(
            (url, kind) for path, kind in _URL_KINDS.items() for url in _all(record, path)
        ),
        doi=_first(record, "electronic-resource-num"),
        pmid=_pmid(record),
        pmcid=next((v for v in _all(record, "custom2") if v.upper().startswith("PMC")), None),
    )


def read_endnote_xml(
    stream: BinaryIO, filename: str, limits: LimitsSettings = DEFAULT_LIMITS
) -> Iterator[ReadItem]:
    """Each ``<record>`` is parsed on its own: a record with broken markup, one the file
    ends inside, and text outside any record are reported (with the line they start
    on) and skipped, and the records around them read on."""
    pieces = XmlRecords(stream, {"record": ("record",)}, most=record_chars(limits))
    tally = Tally()
    yield from read_pieces(pieces, filename, partial(_build, filename=filename), tally)
    if tally.records == 0 and pieces.root != "xml":
        raise InvalidInputError(
            f"{filename} is not EndNote XML: "
            + (f"its root element is <{pieces.root}>." if pieces.root else "it holds no XML."),
            hint="Check the file's format, or pass the right one explicitly.",
        )
    yield from ending(pieces, filename, tally)


def _build(record: etree._Element, piece: Piece, *, filename: str) -> ReadItem:
    return _draft(record).build(
        source="endnote-xml", file=filename, number=piece.number, line=piece.line
    )


ENDNOTE_XML = register_format(
    FileFormat(
        name="endnote-xml",
        label="EndNote XML",
        extensions=(".xml",),
        sniff=sniff_endnote_xml,
        read=read_endnote_xml,
        media_type="application/xml",
        line_based=False,
        aliases=("endnote",),
    )
)
