"""PubMed XML: what E-utilities ``efetch`` returns (``PubmedArticleSet``) and what the
MEDLINE/PubMed baseline files hold (the older ``MedlineCitationSet``, bare
``MedlineCitation`` elements).

Files run to hundreds of megabytes, so the reader streams: the file is cut into its
record elements as it is read and each is parsed on its own (see ``_xml_records``), so
memory holds one record whatever the file's size, and a record with broken markup, or
one the file ends inside, costs only itself.
``paper_from_pubmed`` is public because the PubMed source parses ``efetch`` answers too.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterable, Iterator
from functools import partial
from typing import BinaryIO

from lxml import etree
from pydantic import ValidationError

from scholarstream.errors import InvalidInputError
from scholarstream.papers._identifiers import normalize_doi, normalize_pmcid, normalize_pmid
from scholarstream.papers._model import (
    Author,
    Identifiers,
    Link,
    Paper,
    Provenance,
    Retraction,
)
from scholarstream.papers.formats._base import (
    DEFAULT_LIMITS,
    FileFormat,
    ReadItem,
    RecordProblem,
    record_chars,
    register_format,
)
from scholarstream.papers.formats._xml_records import (
    Piece,
    Tally,
    XmlRecords,
    ending,
    read_pieces,
)
from scholarstream.settings import LimitsSettings
from scholarstream.validation_messages import describe_errors

SOURCE_NAME = "pubmed"
RECORD_TAGS = ("PubmedArticle", "PubmedBookArticle", "MedlineCitation")
_SET_TAGS = ("PubmedArticleSet", "MedlineCitationSet", "PubmedBookArticleSet")
_SNIFF = re.compile(rb"<(?:PubmedArticleSet|MedlineCitationSet|PubmedArticle|MedlineCitation)[\s>]")
_MONTHS = {
    name: number
    for number, name in enumerate(
        ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"),
        start=1,
    )
}
_YEAR = re.compile(r"\b(1\d{3}|2\d{3})\b")
_ORCID = re.compile(r"(\d{4}-\d{4}-\d{4}-\d{3}[\dX])", re.IGNORECASE)

Element = etree._Element


# --- reading a file ------------------------------------------------------------------


def sniff_pubmed_xml(head: bytes) -> bool:
    """A PubMed set (or a bare record) as an element. EndNote XML (``<xml><records>``)
    and other XML never name these elements, so they are not claimed."""
    return _SNIFF.search(head) is not None


def read_pubmed_xml(
    stream: BinaryIO, filename: str, limits: LimitsSettings = DEFAULT_LIMITS
) -> Iterator[ReadItem]:
    """One ``Paper`` per record, one ``RecordProblem`` per record that cannot be read
    (then skipped): broken markup, a record the file ends inside, text outside any
    record. Each record is parsed on its own, so the records around a damaged one are
    read."""
    pieces = XmlRecords(
        stream,
        _RECORD_ENDS,
        wrapper="PubmedArticleSet",
        ignored=("DeleteCitation",),
        most=record_chars(limits),
    )
    tally = Tally()
    yield from read_pieces(pieces, filename, partial(_read_record, filename=filename), tally)
    if tally.records == 0 and pieces.root not in (*_SET_TAGS, *RECORD_TAGS):
        what = f"its root element is <{pieces.root}>" if pieces.root else "it holds no XML"
        yield RecordProblem(filename, 1, f"This XML is not PubMed XML: {what}.")
        return
    yield from ending(pieces, filename, tally)


_RECORD_ENDS = {
    "PubmedArticle": ("PubmedArticle", "PubmedBookArticle"),
    "PubmedBookArticle": ("PubmedArticle", "PubmedBookArticle"),
    "MedlineCitation": RECORD_TAGS,
}
"""Record tag -> the openings that mean it was never closed (a ``PubmedArticle`` holds
its ``MedlineCitation``)."""


def _read_record(element: Element, piece: Piece, *, filename: str) -> ReadItem:
    try:
        return paper_from_pubmed(element)
    except InvalidInputError as exc:
        return RecordProblem(filename, piece.number, exc.message, line=piece.line)


# --- one record ----------------------------------------------------------------------


def paper_from_pubmed(element: Element) -> Paper:
    """A ``PubmedArticle``, ``PubmedBookArticle`` or bare ``MedlineCitation`` as a Paper.

    Raises ``InvalidInputError`` when the record has no title (or is otherwise unusable),
    naming its PMID when it has one.
    """
    if element.tag == "PubmedBookArticle":
        return _book_paper(element)
    citation = element if element.tag == "MedlineCitation" else element.find("MedlineCitation")
    if citation is None:
        raise InvalidInputError(
            f"A <{element.tag}> record has no MedlineCitation.",
            hint="Export the records from PubMed again as XML.",
        )
    pmid = normalize_pmid(_text(citation.find("PMID")))
    article = citation.find("Article")
    if article is None:
        raise _unusable(pmid, "has no Article element")
    title = _text(article.find("ArticleTitle")) or _text(article.find("VernacularTitle"))
    if not title:
        raise _unusable(pmid, "has no title")
    journal = article.find("Journal")
    journal_issue = journal.find("JournalIssue") if journal is not None else None
    published, year = _pub_date(
        journal_issue.find("PubDate") if journal_issue is not None else None
    )
    if year is None:
        published, year = _pub_date(article.find("ArticleDate"))
    ids = _identifiers(pmid, citation, article, element.find("PubmedData/ArticleIdList"))
    publication_types = _texts(article.iterfind("PublicationTypeList/PublicationType"))
    fields: dict[str, object] = {
        "record_id": pmid,
        "ids": ids,
        "title": title,
        "abstract": _abstract(article.find("Abstract")),
        "authors": _authors(article.find("AuthorList")),
        "venue": _text(journal.find("Title")) if journal is not None else None,
        "volume": _text(journal_issue.find("Volume")) if journal_issue is not None else None,
        "issue": _text(journal_issue.find("Issue")) if journal_issue is not None else None,
        "pages": _pages(article.find("Pagination")),
        "issn": _issn(journal, citation),
        "language": _text(article.find("Language")),
        "published": published,
        "year": year,
        "publication_types": publication_types,
        "mesh_terms": _texts(citation.iterfind("MeshHeadingList/MeshHeading/DescriptorName")),
        "keywords": _keywords(citation),
        "retraction": _retraction(citation, publication_types),
    }
    return _build(pmid, ids, fields)


def _book_paper(element: Element) -> Paper:
    """Books and chapters (e.g. GeneReviews) come as ``PubmedBookArticle``: no journal,
    a publisher instead, a single ``PublicationType`` list without its wrapper."""
    document = element.find("BookDocument")
    if document is None:
        raise InvalidInputError(
            "A <PubmedBookArticle> record has no BookDocument.",
            hint="Export the records from PubMed again as XML.",
        )
    pmid = normalize_pmid(_text(document.find("PMID")))
    book = document.find("Book")
    book_title = _text(book.find("BookTitle")) if book is not None else None
    title = _text(document.find("ArticleTitle")) or book_title
    if not title:
        raise _unusable(pmid, "has no title")
    published, year = _pub_date(book.find("PubDate") if book is not None else None)
    ids = _identifiers(pmid, document, None, element.find("PubmedBookData/ArticleIdList"))
    publication_types = _texts(document.iterfind("PublicationType"))
    fields: dict[str, object] = {
        "record_id": pmid,
        "ids": ids,
        "title": title,
        "abstract": _abstract(document.find("Abstract")),
        "authors": _authors(document.find("AuthorList")),
        "venue": book_title if book_title != title else None,
        "publisher": _text(book.find("Publisher/PublisherName")) if book is not None else None,
        "language": _text(document.find("Language")),
        "published": published,
        "year": year,
        "publication_types": publication_types,
        "keywords": _keywords(document),
        "retraction": _retraction(document, publication_types),
    }
    return _build(pmid, ids, fields)


def _build(pmid: str | None, ids: Identifiers, fields: dict[str, object]) -> Paper:
    fields["links"] = _links(ids)
    fields["provenance"] = [Provenance(source=SOURCE_NAME, source_id=pmid)]
    try:
        return Paper.model_validate(fields)
    except ValidationError as exc:
        problem = describe_errors(exc.errors()[:1], whole="record")[0]
        raise _unusable(pmid, f"has an unusable {problem.label}: {problem.text}") from exc


def _unusable(pmid: str | None, what: str) -> InvalidInputError:
    record = f"PubMed record {pmid}" if pmid else "A PubMed record without a PMID"
    return InvalidInputError(
        f"{record} {what}; it was skipped.",
        hint="Fix the record in the file or fetch it from PubMed again.",
    )


# --- fields --------------------------------------------------------------------------


def _text(element: Element | None) -> str | None:
    """All text under ``element`` (inline markup such as <i> or <sup> flattened),
    whitespace collapsed; ``None`` when empty."""
    if element is None:
        return None
    text = " ".join("".join(t for t in element.itertext() if isinstance(t, str)).split())
    return text or None


def _texts(elements: Iterable[Element]) -> list[str]:
    return [text for text in map(_text, elements) if text]


def _keywords(citation: Element) -> list[str]:
    """Author keywords, without the list punctuation some records keep ("MRI,")."""
    cleaned = (k.rstrip(",;").strip() for k in _texts(citation.iterfind("KeywordList/Keyword")))
    return [keyword for keyword in cleaned if keyword]


def _identifiers(
    pmid: str | None,
    citation: Element,
    article: Element | None,
    article_ids: Element | None,
) -> Identifiers:
    """``PubmedData/ArticleIdList`` is authoritative; the references further down carry
    ArticleIdLists of their own, so only this one list is read. Older MEDLINE files have
    none: their DOI is an ``ELocationID`` and their PMC id an ``OtherID``."""
    found: dict[str, str] = {}
    for article_id in article_ids.iterfind("ArticleId") if article_ids is not None else ():
        kind, value = article_id.get("IdType"), _text(article_id)
        if kind in ("doi", "pmc") and value and kind not in found:
            found[kind] = value
    if "doi" not in found and article is not None:
        for location in article.iterfind("ELocationID"):
            value = _text(location)
            if location.get("EIdType") == "doi" and location.get("ValidYN") != "N" and value:
                found["doi"] = value
                break
    if "pmc" not in found:
        for other in citation.iterfind("OtherID"):
            value = _text(other)
            if value and value.upper().startswith("PMC"):
                found["pmc"] = value.split()[0]
                break
    return Identifiers(
        pmid=pmid,
        doi=normalize_doi(found.get("doi")),
        pmcid=normalize_pmcid(found.get("pmc")),
    )


def _abstract(abstract: Element | None) -> str | None:
    """Structured abstracts keep their section labels: ``BACKGROUND: ... METHODS: ...``."""
    if abstract is None:
        return None
    sections: list[str] = []
    for part in abstract.iterfind("AbstractText"):
        text = _text(part)
        if not text:
            continue
        label = (part.get("Label") or "").strip()
        sections.append(f"{label}: {text}" if label else text)
    return " ".join(sections) or None


def _authors(author_list: Element | None) -> list[Author]:
    if author_list is None:
        return []
    authors: list[Author] = []
    for element in author_list.iterfind("Author"):
        if element.get("ValidYN") == "N":  # a name PubMed itself marks as wrong
            continue
        author = _author(element)
        if author is not None:
            authors.append(author)
    return authors


def _author(element: Element) -> Author | None:
    affiliations = _texts(element.iterfind("AffiliationInfo/Affiliation")) or _texts(
        element.iterfind("Affiliation")
    )
    orcid = _orcid(element)
    collective = _text(element.find("CollectiveName"))
    if collective:
        return Author(name=collective, orcid=orcid, affiliations=affiliations)
    given = _text(element.find("ForeName")) or _text(element.find("Initials"))
    return Author.from_parts(
        _text(element.find("LastName")), given, orcid=orcid, affiliations=affiliations
    )


def _orcid(element: Element) -> str | None:
    """The bare ORCID iD; PubMed gives it bare or as an orcid.org URL."""
    for identifier in element.iterfind("Identifier"):
        if (identifier.get("Source") or "").upper() == "ORCID":
            match = _ORCID.search(_text(identifier) or "")
            if match:
                return match.group(1).upper()
    return None


def _pages(pagination: Element | None) -> str | None:
    if pagination is None:
        return None
    medline = _text(pagination.find("MedlinePgn"))
    if medline:
        return medline
    start, end = _text(pagination.find("StartPage")), _text(pagination.find("EndPage"))
    if start and end:
        return f"{start}-{end}"
    return start


def _issn(journal: Element | None, citation: Element) -> str | None:
    issn = _text(journal.find("ISSN")) if journal is not None else None
    return issn or _text(citation.find("MedlineJournalInfo/ISSNLinking"))


def _pub_date(date: Element | None) -> tuple[dt.date | None, int | None]:
    """``(published, year)``. Year, month and day give the date, year and month the
    first of the month; a year alone, a season or a ``MedlineDate`` range
    ("1998 Dec-1999 Jan") give the (first) year only."""
    if date is None:
        return None, None
    year_text = _text(date.find("Year")) or _text(date.find("MedlineDate")) or ""
    match = _YEAR.search(year_text)
    if match is None:
        return None, None
    year = int(match.group(1))
    if date.find("Year") is None:
        return None, year
    month = _month(_text(date.find("Month")))
    if month is None:
        return None, year
    day_text = _text(date.find("Day")) or "1"
    try:
        return dt.date(year, month, int(day_text) if day_text.isdigit() else 1), year
    except ValueError:
        return None, year


def _month(text: str | None) -> int | None:
    """``"Dec"``, ``"December"`` or ``"12"``."""
    if not text:
        return None
    if text.isdigit():
        number = int(text)
        return number if 1 <= number <= 12 else None
    return _MONTHS.get(text[:3].lower())


def _retraction(citation: Element, publication_types: list[str]) -> Retraction | None:
    """From a ``RetractionIn`` comment (the notice itself is cited), else from the
    "Retracted Publication" type; an expression of concern is kept as a notice too."""
    for ref_type, prefix in (
        ("RetractionIn", "Retracted"),
        ("ExpressionOfConcernIn", "Expression of concern"),
    ):
        for comment in citation.iterfind("CommentsCorrectionsList/CommentsCorrections"):
            if comment.get("RefType") != ref_type:
                continue
            source = _text(comment.find("RefSource"))
            notice_pmid = normalize_pmid(_text(comment.find("PMID")))
            details = ", ".join(
                part for part in (source, f"PMID {notice_pmid}" if notice_pmid else None) if part
            )
            return Retraction(
                notice=f"{prefix}: {details}" if details else prefix,
                doi=normalize_doi(source),
            )
    if any(kind.lower() == "retracted publication" for kind in publication_types):
        return Retraction(notice="PubMed lists this article as a Retracted Publication.")
    return None


def _links(ids: Identifiers) -> list[Link]:
    links: list[Link] = []
    if ids.pmid:
        links.append(Link(url=f"https://pubmed.ncbi.nlm.nih.gov/{ids.pmid}/", kind="landing"))
    if ids.doi:
        links.append(Link(url=f"https://doi.org/{ids.doi}", kind="doi"))
    if ids.pmcid:
        links.append(
            Link(url=f"https://pmc.ncbi.nlm.nih.gov/articles/{ids.pmcid}/", kind="full_text")
        )
    return links


PUBMED_XML = register_format(
    FileFormat(
        name="pubmed-xml",
        aliases=("pubmed",),
        label="PubMed XML",
        extensions=(".xml",),
        sniff=sniff_pubmed_xml,
        read=read_pubmed_xml,
        media_type="application/xml",
        line_based=False,
    )
)
