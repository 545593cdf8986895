"""Crossref (https://www.crossref.org): the metadata publishers deposit with their DOIs.

Searches ``/works`` with ``query=`` and Crossref filters and pages by cursor; fetches by DOI.
Abstracts, when the publisher deposited one, are JATS XML fragments, turned to plain text.

Retractions: Crossref records an update (retraction, withdrawal, expression of concern ...)
twice. The retracted work lists it under ``updated-by``, and the notice itself lists the work
it updates under ``update-to``. Only the first makes the paper a retracted one; the notice is
marked with a ``retraction-notice`` publication type instead, so it is not mistaken for the
retracted paper.
"""

from __future__ import annotations

import datetime as dt
import html
import logging
import re
from collections.abc import Sequence
from urllib.parse import quote

import httpx
from pydantic import Field

from scholarstream.papers import (
    Author,
    Identifiers,
    Link,
    Paper,
    Provenance,
    Record,
    Retraction,
    normalize_doi,
)
from scholarstream.sources._base import (
    LiteratureSource,
    SearchPage,
    SearchQuery,
    SourceContext,
    SourceInfo,
    check_filters,
    register_source,
)
from scholarstream.sources._responses import ResponseModel, map_records, read_json

logger = logging.getLogger(__name__)

NAME = "crossref"
LABEL = "Crossref"
WORKS_URL = "https://api.crossref.org/works"
# Since December 2025 Crossref's public pool allows about 5 requests/s and its polite pool
# (mailto given) about 10; the figures change and come back in X-Rate-Limit headers. These
# stay under both, leaving room for retries.
PER_SECOND_PUBLIC = 3.0
PER_SECOND_POLITE = 8.0
MAX_ROWS = 1000

# Update types that mean the work should no longer be relied on.
RETRACTION_TYPES = frozenset(
    {"retraction", "partial_retraction", "withdrawal", "removal", "expression_of_concern"}
)

# Filter names sent as their own query parameters rather than inside ``filter=``.
PARAMETER_FILTERS = (
    "sort",
    "order",
    "query.author",
    "query.bibliographic",
    "query.container-title",
    "query.affiliation",
)

FILTERS: dict[str, str] = {
    "type": "Work type, e.g. 'journal-article', 'posted-content', 'proceedings-article', "
    "'book-chapter'.",
    "has-abstract": "'true' for works with a deposited abstract.",
    "has-orcid": "'true' for works with at least one ORCID.",
    "has-full-text": "'true' for works with full-text links.",
    "has-references": "'true' for works with deposited references.",
    "is-update": "'true' for update notices (corrections, retractions ...).",
    "update-type": "Notices of one kind, e.g. 'retraction'.",
    "issn": "Works in the journal with this ISSN.",
    "prefix": "Works whose DOI has this prefix, e.g. '10.1371'.",
    "member": "Works of this Crossref member id.",
    "funder": "Works funded by this funder (Open Funder Registry id).",
    "sort": "Not a filter: 'relevance' (default), 'published', 'is-referenced-by-count', "
    "'updated', 'deposited', 'indexed'.",
    "order": "Not a filter: 'asc' or 'desc', with sort.",
    "query.author": "Not a filter: also match this in author names.",
    "query.bibliographic": "Not a filter: match a citation string (title, authors, year...).",
    "query.container-title": "Not a filter: match the journal or book title.",
    "query.affiliation": "Not a filter: match author affiliations.",
}

QUERY_SYNTAX = (
    "Free-text keywords matched against all of a work's metadata (title, authors, journal, "
    "abstract where deposited), ranked by relevance; there are no boolean operators, "
    "phrases or field tags in the query itself. Narrow by field with the query.author, "
    "query.bibliographic and query.container-title filters, and by kind with filters such "
    "as type=journal-article or has-abstract=true. The date range becomes "
    "from-pub-date/until-pub-date (the earliest of print and online publication)."
)


class _DateParts(ResponseModel):
    # [[2021, 10, 8]], [[2021]], or [[null]] when the date is unknown.
    date_parts: list[list[int | None]] = Field(default_factory=list, alias="date-parts")


class _Affiliation(ResponseModel):
    name: str | None = None


class _Author(ResponseModel):
    given: str | None = None
    family: str | None = None
    name: str | None = None
    ORCID: str | None = None
    affiliation: list[_Affiliation] = Field(default_factory=list)


class _Update(ResponseModel):
    DOI: str | None = None
    type: str | None = None
    label: str | None = None
    updated: _DateParts | None = None


class _LinkEntry(ResponseModel):
    URL: str | None = None
    content_type: str | None = Field(default=None, alias="content-type")


class _Primary(ResponseModel):
    URL: str | None = None


class _Resource(ResponseModel):
    primary: _Primary | None = None


class _Work(ResponseModel):
    DOI: str
    title: list[str] = Field(default_factory=list)
    abstract: str | None = None
    author: list[_Author] = Field(default_factory=list)
    container_title: list[str] = Field(default_factory=list, alias="container-title")
    volume: str | None = None
    issue: str | None = None
    page: str | None = None
    publisher: str | None = None
    ISSN: list[str] = Field(default_factory=list)
    language: str | None = None
    issued: _DateParts | None = None
    published: _DateParts | None = None
    type: str | None = None
    subject: list[str] = Field(default_factory=list)
    is_referenced_by_count: int | None = Field(default=None, alias="is-referenced-by-count")
    update_to: list[_Update] = Field(default_factory=list, alias="update-to")
    updated_by: list[_Update] = Field(default_factory=list, alias="updated-by")
    link: list[_LinkEntry] = Field(default_factory=list)
    URL: str | None = None
    resource: _Resource | None = None


class _WorkList(ResponseModel):
    total_results: int | None = Field(default=None, alias="total-results")
    next_cursor: str | None = Field(default=None, alias="next-cursor")
    # Every work list has its items, even an empty one: without them the body is not one.
    items: list[_Work]


class _ListResponse(ResponseModel):
    message: _WorkList


class _WorkResponse(ResponseModel):
    message: _Work


_JATS_TITLE = re.compile(r"<(?:jats:)?title\b[^>]*>(.*?)</(?:jats:)?title>", re.DOTALL)
_JATS_BLOCK_END = re.compile(r"</(?:jats:)?(?:p|sec|list-item)>")
_TAG = re.compile(r"<[^>]+>")
_ORCID = re.compile(r"\d{4}-\d{4}-\d{4}-\d{3}[\dX]", re.IGNORECASE)


def jats_to_text(abstract: str | None) -> str | None:
    """A JATS abstract as plain text: paragraphs kept apart by a blank line, section titles
    as 'Title: ' prefixes, headings that only say 'Abstract' dropped."""
    if not abstract:
        return None

    def title(match: re.Match[str]) -> str:
        text = " ".join(_TAG.sub("", match.group(1)).split())
        if not text or text.rstrip(":.").lower() == "abstract":
            return "\n\n"
        return f"\n\n{text.rstrip(':.')}: "

    text = _JATS_TITLE.sub(title, abstract)
    text = _JATS_BLOCK_END.sub("\n\n", text)
    text = html.unescape(_TAG.sub("", text))
    paragraphs = (" ".join(block.split()) for block in text.split("\n\n"))
    return "\n\n".join(p for p in paragraphs if p) or None


def _date(parts: _DateParts | None) -> tuple[int | None, dt.date | None]:
    """(year, full date): the date only when Crossref gives year, month and day."""
    if parts is None or not parts.date_parts or not parts.date_parts[0]:
        return None, None
    values = parts.date_parts[0]
    year = values[0]
    if year is None or not 1000 <= year <= 2999:
        return None, None
    if len(values) >= 3 and values[1] is not None and values[2] is not None:
        try:
            return year, dt.date(year, values[1], values[2])
        except (ValueError, OverflowError):  # no such day, or a number past any date
            return year, None
    return year, None


def _author(entry: _Author) -> Author | None:
    extra: dict[str, object] = {
        "orcid": _orcid(entry.ORCID),
        "affiliations": [a.name.strip() for a in entry.affiliation if a.name and a.name.strip()],
    }
    author = Author.from_parts(entry.family, entry.given, **extra)
    if author is None and entry.name and entry.name.strip():
        # Organisations (and, in some deposits, affiliations) come as a bare name.
        author = Author.model_validate({"name": " ".join(entry.name.split()), **extra})
    return author


def _orcid(value: str | None) -> str | None:
    match = _ORCID.search(value or "")
    return match.group(0).upper() if match else None


def _retraction(work: _Work) -> Retraction | None:
    for update in work.updated_by:
        kind = (update.type or "").lower()
        if kind in RETRACTION_TYPES:
            _, when = _date(update.updated)
            notice = update.label or kind.replace("_", " ").capitalize()
            return Retraction(notice=notice, doi=normalize_doi(update.DOI), date=when)
    return None


def _links(work: _Work, doi: str | None) -> list[Link]:
    candidates: list[Link] = []
    if work.resource and work.resource.primary and work.resource.primary.URL:
        candidates.append(Link(url=work.resource.primary.URL, kind="landing"))
    candidates.extend(
        Link(url=entry.URL, kind="pdf")
        for entry in work.link
        if entry.URL and (entry.content_type or "").lower() == "application/pdf"
    )
    if doi:
        candidates.append(Link(url=work.URL or f"https://doi.org/{doi}", kind="doi"))
    unique: dict[str, Link] = {}
    for link in candidates:
        unique.setdefault(link.url, link)
    return list(unique.values())


def work_to_paper(work: _Work) -> Paper | None:
    """One Crossref work as a Paper; ``None`` for one without a title."""
    title = " ".join(" ".join(work.title).split()) if work.title else ""
    if not title:
        logger.debug("crossref work %s has no title; left out", work.DOI)
        return None
    doi = normalize_doi(work.DOI)
    year, published = _date(work.issued)
    if year is None:
        year, published = _date(work.published)
    types = [work.type] if work.type else []
    if any((u.type or "").lower() in RETRACTION_TYPES for u in work.update_to):
        types.append("retraction-notice")
    return Paper(
        ids=Identifiers(doi=doi),
        title=title,
        abstract=jats_to_text(work.abstract),
        authors=[a for entry in work.author if (a := _author(entry)) is not None],
        venue=work.container_title[0].strip() if work.container_title else None,
        volume=work.volume,
        issue=work.issue,
        pages=work.page,
        publisher=work.publisher,
        issn=work.ISSN[0] if work.ISSN else None,
        language=work.language,
        published=published,
        year=year,
        publication_types=types,
        keywords=list(dict.fromkeys(s.strip() for s in work.subject if s.strip())),
        links=_links(work, doi),
        citation_count=work.is_referenced_by_count,
        retraction=_retraction(work),
        provenance=[Provenance(source=NAME, source_id=doi or work.DOI)],
    )


ADDED_DATE = "created date: when the DOI's metadata was first deposited with Crossref"
_DATE_FILTERS = {"published": "pub", "added": "created"}
"""Crossref's ``from-pub-date`` bounds the publication date, ``from-created-date`` the day
the record was created (its first deposit): the latter for ``dates='added'``. (The index
date, ``from-index-date``, moves whenever a record is re-indexed: old works come back.)"""


class CrossrefSource:
    def __init__(self, context: SourceContext) -> None:
        self._settings = context.settings
        self._http = context.http

    @property
    def info(self) -> SourceInfo:
        return SourceInfo(
            name=NAME,
            label=LABEL,
            description="Metadata deposited by publishers for ~160 million DOIs: titles, "
            "authors, journals, dates, funders, abstracts where deposited, and retractions.",
            query_syntax=QUERY_SYNTAX,
            filters=FILTERS,
            api_key="none",
            rate_limit=f"{PER_SECOND_POLITE:.0f} requests/s with contact_email set (sent as "
            f"mailto, Crossref's polite pool), {PER_SECOND_PUBLIC:.0f}/s without.",
            added_date=ADDED_DATE,
        )

    @property
    def _per_second(self) -> float:
        return PER_SECOND_POLITE if self._settings.contact_email else PER_SECOND_PUBLIC

    async def _get(
        self,
        url: str,
        params: dict[str, str | int | float | None],
        *,
        accept_status: Sequence[int] = (),
    ) -> httpx.Response:
        return await self._http.get(
            NAME,
            url,
            per_second=self._per_second,
            params={**params, "mailto": self._settings.contact_email},
            accept_status=accept_status,
            label=LABEL,
        )

    async def search(self, query: SearchQuery) -> SearchPage:
        check_filters(NAME, query, FILTERS)
        filters = [
            f"{name}:{value}"
            for name, value in query.filters.items()
            if name not in PARAMETER_FILTERS
        ]
        kind = _DATE_FILTERS[query.dates]
        if query.date_from:
            filters.append(f"from-{kind}-date:{query.date_from.isoformat()}")
        if query.date_to:
            filters.append(f"until-{kind}-date:{query.date_to.isoformat()}")
        rows = min(query.limit, MAX_ROWS)
        response = await self._get(
            WORKS_URL,
            {
                "query": query.text,
                "filter": ",".join(filters) or None,
                "rows": rows,
                "cursor": query.page_token or "*",
                **{name: query.filters.get(name) for name in PARAMETER_FILTERS},
            },
        )
        page = read_json(NAME, LABEL, _ListResponse, response).message
        records: list[Record] = map_records(NAME, LABEL, page.items, work_to_paper)
        # Crossref hands out a next cursor even on the last page; a short page is the end.
        more = len(page.items) >= rows and page.next_cursor
        return SearchPage(
            source=NAME,
            records=records,
            total=page.total_results,
            next_page_token=page.next_cursor if more else None,
        )

    async def fetch(self, ids: Sequence[str]) -> list[Record]:
        """Works by DOI, one request each; DOIs Crossref does not know (404) are left out."""
        records: list[Record] = []
        for doi in dict.fromkeys(d for d in map(normalize_doi, ids) if d):
            response = await self._get(
                f"{WORKS_URL}/{quote(doi, safe='/')}", {}, accept_status=(404,)
            )
            if response.status_code == 404:
                continue
            work = read_json(NAME, LABEL, _WorkResponse, response).message
            records.extend(map_records(NAME, LABEL, [work], work_to_paper))
        return records


@register_source(NAME)
def _build(context: SourceContext) -> LiteratureSource:
    return CrossrefSource(context)
