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
from scholarstream.papers.formats._fields import (
    Draft,
    clean,
    issn_text,
    logical_lines,
    orcid,
    parse_date,
    parse_person,
    sniff_text,
    unique,
)
from scholarstream.papers.formats.base import FileFormat, ReadItem, register_format
from scholarstream.papers.identifiers import normalize_doi
from scholarstream.papers.model import Author, Retraction

_TAG = re.compile(r"^([A-Z][A-Z0-9]{0,3}) *- ?(.*)$")
_SNIFF = re.compile(r"^PMID- ?\d", re.MULTILINE)
_ID_KIND = re.compile(r"^(.*?)\s*\[(\w+)\]\s*$")
_DOI_IN_TEXT = re.compile(r"doi:\s*(10\.\S+)", re.IGNORECASE)


@dataclass
class _Raw:
    number: int
    line: int
    tags: list[tuple[str, str]] = field(default_factory=list)

    def values(self, *tags: str) -> list[str]:
        return [value for tag in tags for t, value in self.tags if t == tag and value]

    def first(self, *tags: str) -> str | None:
        values = self.values(*tags)
        return values[0] if values else None


def sniff_medline(head: bytes) -> bool:
    return _SNIFF.search(sniff_text(head)) is not None


def read_medline(stream: BinaryIO, filename: str) -> Iterator[ReadItem]:
    """A record runs from its ``PMID-`` line to the next blank line or ``PMID-`` line."""
    current: _Raw | None = None
    count = 0
    other_text = False
    for number, text in logical_lines(stream):
        if not text.strip():
            if current is not None:
                yield _draft(current).build(
                    source="medline", file=filename, number=current.number, line=current.line
                )
            current = None
            continue
        match = _TAG.match(text)
        if match is None or text.startswith(" "):
            if current is not None and current.tags:
                tag, value = current.tags[-1]
                current.tags[-1] = (tag, f"{value} {text.strip()}")
            else:
                other_text = True
            continue
        tag, value = match.group(1), match.group(2).strip()
        if tag == "PMID":
            if current is not None:
                yield _draft(current).build(
                    source="medline", file=filename, number=current.number, line=current.line
                )
            count += 1
            current = _Raw(count, number)
        if current is not None:
            current.tags.append((tag, value))
        else:
            other_text = True
    if current is not None:
        yield _draft(current).build(
            source="medline", file=filename, number=current.number, line=current.line
        )
    if count == 0 and other_text:
        raise InvalidInputError(
            f"{filename} is not a MEDLINE (.nbib) file: no record starts with a 'PMID- ' line.",
            hint="Check the file's format, or pass the right one explicitly.",
        )


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
