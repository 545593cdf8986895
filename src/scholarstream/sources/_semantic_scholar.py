"""Semantic Scholar (https://www.semanticscholar.org): the Academic Graph API.

Two search endpoints, chosen per query:

* ``/paper/search`` (relevance ranked, the default): pages by offset, and only reaches the
  first 1,000 matches.
* ``/paper/search/bulk``: not ranked, pages by an opaque token through any number of
  matches, up to 1,000 records per call (``limit`` is not honoured there), with boolean
  query syntax and sorting. Used when the ``mode=bulk`` filter or a ``sort`` is given,
  because only bulk search can sort.
"""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Sequence
from urllib.parse import quote

import httpx
from pydantic import Field

from scholarstream.errors import SourceQueryError
from scholarstream.papers import Author, Identifiers, Link, Paper, Provenance, Record
from scholarstream.sources._base import (
    LiteratureSource,
    SearchPage,
    SearchQuery,
    SourceContext,
    SourceInfo,
    check_filters,
    register_source,
)
from scholarstream.sources._responses import ResponseModel, map_records, read_json, unreadable

logger = logging.getLogger(__name__)

NAME = "semantic_scholar"
LABEL = "Semantic Scholar"
API = "https://api.semanticscholar.org/graph/v1"
# With a key Semantic Scholar grants 1 request/s, dedicated. Without one, requests come out
# of a pool shared by every anonymous client and are often refused with 429; asking faster
# than 1/s would only earn more of those, so both cases use 1/s.
PER_SECOND = 1.0
MAX_RELEVANCE_LIMIT = 100
# Relevance search serves only the first 1,000 matches (offset + limit <= 1000).
RELEVANCE_WINDOW = 1000
API_KEY_ENV = "SCHOLARSTREAM_SOURCES__SEMANTIC_SCHOLAR_API_KEY"

FIELDS = ",".join(
    (
        "paperId",
        "externalIds",
        "url",
        "title",
        "abstract",
        "venue",
        "year",
        "publicationDate",
        "publicationTypes",
        "journal",
        "authors",
        "fieldsOfStudy",
        "citationCount",
        "openAccessPdf",
    )
)

SORT_FIELDS = ("paperId", "publicationDate", "citationCount")
PASSED_THROUGH = ("year", "publicationTypes", "fieldsOfStudy", "venue", "minCitationCount")

FILTERS: dict[str, str] = {
    "mode": "'relevance' (default; first 1,000 matches) or 'bulk' (unranked, token paging "
    "through every match, up to 1,000 records per page, boolean syntax).",
    "sort": "Bulk mode only (implies it): 'paperId', 'publicationDate' or 'citationCount', "
    "optionally ':asc'/':desc', e.g. 'citationCount:desc'.",
    "year": "A year or range, e.g. '2019', '2016-2020', '2010-' or '-2015'.",
    "publicationTypes": "Comma-separated: Review, JournalArticle, CaseReport, "
    "ClinicalTrial, Conference, Dataset, Editorial, LettersAndComments, MetaAnalysis, News, "
    "Study, Book, BookSection.",
    "fieldsOfStudy": "Comma-separated, e.g. 'Medicine,Biology'.",
    "venue": "Comma-separated venue names or ISO4 abbreviations.",
    "minCitationCount": "Only papers cited at least this many times.",
    "openAccessPdf": "'true' for papers with a public PDF only.",
}

QUERY_SYNTAX = (
    "Relevance mode (default): plain keywords, matched against title, abstract and venue; "
    "no operators or field tags (hyphenated terms may match nothing, use spaces). Bulk mode "
    "(filter mode=bulk, or any sort): '+' for AND, '|' for OR, '-' to exclude, "
    "\"double quotes\" for a phrase, '*' as a prefix wildcard, parentheses for grouping, "
    "'~N' after a word for fuzzy matching or after a phrase for slop, e.g. "
    '\'("deep learning" | "neural network") + sepsis -pediatric\'. The date range is '
    "applied as publicationDateOrYear (papers without a full date match on their year)."
)


class _ExternalIds(ResponseModel):
    DOI: str | None = None
    PubMed: str | None = None
    PubMedCentral: str | None = None
    ArXiv: str | None = None


class _Journal(ResponseModel):
    name: str | None = None
    volume: str | None = None
    pages: str | None = None


class _Author(ResponseModel):
    name: str | None = None


class _OpenAccessPdf(ResponseModel):
    url: str | None = None


class _Paper(ResponseModel):
    paperId: str  # noqa: N815  (the API's field name)
    externalIds: _ExternalIds | None = None  # noqa: N815
    url: str | None = None
    title: str | None = None
    abstract: str | None = None
    venue: str | None = None
    year: int | None = None
    publicationDate: dt.date | None = None  # noqa: N815
    publicationTypes: list[str] | None = None  # noqa: N815
    journal: _Journal | None = None
    authors: list[_Author] = Field(default_factory=list)
    fieldsOfStudy: list[str] | None = None  # noqa: N815
    citationCount: int | None = None  # noqa: N815
    openAccessPdf: _OpenAccessPdf | None = None  # noqa: N815


class _RelevancePage(ResponseModel):
    # Every search answer says its total, even one that found nothing ({"total": 0,
    # "offset": 0}, without "data"): a body without it is not a search answer.
    total: int
    offset: int = 0
    next: int | None = None
    data: list[_Paper] | None = None


class _BulkPage(ResponseModel):
    total: int
    token: str | None = None
    data: list[_Paper] = Field(default_factory=list)


def _clean(text: str | None) -> str | None:
    text = " ".join((text or "").split())
    return text or None


def paper_from_s2(item: _Paper) -> Paper | None:
    """One Semantic Scholar paper as a Paper; ``None`` for one without a title."""
    title = _clean(item.title)
    if title is None:
        logger.debug("semantic scholar paper %s has no title; left out", item.paperId)
        return None
    external = item.externalIds or _ExternalIds()
    journal = item.journal or _Journal()
    links: list[Link] = []
    pdf = _clean(item.openAccessPdf.url if item.openAccessPdf else None)
    if pdf:
        links.append(Link(url=pdf, kind="pdf"))
    if item.url:
        links.append(Link(url=item.url, kind="source"))
    year = item.year if item.year is not None and 1000 <= item.year <= 2999 else None
    return Paper(
        ids=Identifiers(
            s2_id=item.paperId,
            doi=external.DOI,
            pmid=external.PubMed,
            pmcid=external.PubMedCentral,
            arxiv_id=external.ArXiv,
        ),
        title=title,
        abstract=_clean(item.abstract),
        authors=[a for author in item.authors if (a := Author.parse(author.name or ""))],
        venue=_clean(journal.name) or _clean(item.venue),
        volume=_clean(journal.volume),
        pages=_clean(journal.pages),
        published=item.publicationDate,
        year=year,
        publication_types=list(item.publicationTypes or []),
        keywords=list(item.fieldsOfStudy or []),
        links=links,
        citation_count=item.citationCount,
        provenance=[Provenance(source=NAME, source_id=item.paperId)],
    )


def _date_range(query: SearchQuery) -> str | None:
    """``publicationDateOrYear``: the search has no filter on when Semantic Scholar added a
    paper, so ``dates='added'`` is not offered (info.added_date is None) and the
    publication date is filtered either way."""
    if query.date_from is None and query.date_to is None:
        return None
    start = query.date_from.isoformat() if query.date_from else ""
    end = query.date_to.isoformat() if query.date_to else ""
    return f"{start}:{end}"


def _sort(value: str) -> str:
    field, _, order = value.partition(":")
    if field not in SORT_FIELDS or order not in ("", "asc", "desc"):
        raise SourceQueryError(
            NAME,
            f"Semantic Scholar cannot sort by {value!r}.",
            hint=f"Sort by one of {', '.join(SORT_FIELDS)}, optionally with ':asc' or ':desc'.",
        )
    return value


def _is_true(value: str) -> bool:
    return value.strip().lower() in ("true", "1", "yes")


class SemanticScholarSource:
    def __init__(self, context: SourceContext) -> None:
        self._settings = context.settings
        self._http = context.http

    @property
    def info(self) -> SourceInfo:
        keyed = self._settings.semantic_scholar_api_key is not None
        return SourceInfo(
            name=NAME,
            label=LABEL,
            description="AI2's index of ~200 million papers across all fields, with "
            "abstracts, fields of study, citation counts and open-access PDF links.",
            query_syntax=QUERY_SYNTAX,
            filters=FILTERS,
            api_key="optional",
            api_key_setting=API_KEY_ENV,
            rate_limit="1 request/s. With an API key that rate is dedicated to us; without "
            "one requests share a public pool and are often refused (HTTP 429), so a key is "
            "recommended." + ("" if keyed else " No key is configured."),
        )

    def _headers(self) -> dict[str, str]:
        key = self._settings.semantic_scholar_api_key
        return {"x-api-key": key.get_secret_value()} if key is not None else {}

    async def _get(
        self,
        path: str,
        params: dict[str, str | int | float | None],
        *,
        accept_status: Sequence[int] = (),
    ) -> httpx.Response:
        return await self._http.get(
            NAME,
            f"{API}{path}",
            per_second=PER_SECOND,
            params=params,
            headers=self._headers(),
            accept_status=accept_status,
            credentials_hint=f"Check {API_KEY_ENV}; unset it to use the shared public pool.",
            label=LABEL,
        )

    def _filter_params(self, query: SearchQuery) -> dict[str, str | int | float | None]:
        params: dict[str, str | int | float | None] = {
            name: query.filters[name] for name in PASSED_THROUGH if name in query.filters
        }
        if _is_true(query.filters.get("openAccessPdf", "")):
            params["openAccessPdf"] = ""
        params["publicationDateOrYear"] = _date_range(query)
        return params

    async def search(self, query: SearchQuery) -> SearchPage:
        check_filters(NAME, query, FILTERS)
        mode = query.filters.get("mode", "relevance").strip().lower()
        if mode not in ("relevance", "bulk"):
            raise SourceQueryError(
                NAME,
                f"Semantic Scholar has no search mode {mode!r}.",
                hint="Use mode=relevance (the default) or mode=bulk.",
            )
        if mode == "bulk" or "sort" in query.filters:
            return await self._bulk(query)
        return await self._relevance(query)

    async def _relevance(self, query: SearchQuery) -> SearchPage:
        offset = query.offset()
        if offset >= RELEVANCE_WINDOW:
            raise SourceQueryError(
                NAME,
                "Semantic Scholar's relevance search only reaches the first "
                f"{RELEVANCE_WINDOW} matches.",
                hint="Narrow the query, or page through every match with the filter mode=bulk.",
            )
        limit = min(query.limit, MAX_RELEVANCE_LIMIT, RELEVANCE_WINDOW - offset)
        response = await self._get(
            "/paper/search",
            {
                "query": query.text,
                "fields": FIELDS,
                "offset": offset,
                "limit": limit,
                **self._filter_params(query),
            },
        )
        page = read_json(NAME, LABEL, _RelevancePage, response)
        if page.data is None and page.total > page.offset:
            raise unreadable(
                NAME, LABEL, f"JSON without the 'data' of the {page.total:,} matches it counts"
            )
        data = page.data or []
        records: list[Record] = map_records(NAME, LABEL, data, paper_from_s2)
        next_offset = page.next if data and page.next is not None else None
        if next_offset is not None and next_offset >= RELEVANCE_WINDOW:
            next_offset = None
        return SearchPage(
            source=NAME,
            records=records,
            total=page.total,
            next_page_token=str(next_offset) if next_offset is not None else None,
        )

    async def _bulk(self, query: SearchQuery) -> SearchPage:
        sort = query.filters.get("sort")
        response = await self._get(
            "/paper/search/bulk",
            {
                "query": query.text,
                "fields": FIELDS,
                "token": query.page_token,
                "sort": _sort(sort) if sort else None,
                **self._filter_params(query),
            },
        )
        page = read_json(NAME, LABEL, _BulkPage, response)
        records: list[Record] = map_records(NAME, LABEL, page.data, paper_from_s2)
        return SearchPage(
            source=NAME,
            records=records,
            total=page.total,
            next_page_token=page.token if page.data else None,
        )

    async def fetch(self, ids: Sequence[str]) -> list[Record]:
        """Papers by Semantic Scholar id: a paperId, or a prefixed id such as
        ``DOI:10.1000/x``, ``ARXIV:2106.15928``, ``PMID:19872477``, ``CorpusId:215416146``.

        One GET per id: ``POST /paper/batch`` would take 500 at once, but the shared HTTP
        layer only has GET. Unknown ids (404) are left out.
        """
        records: list[Record] = []
        for raw in dict.fromkeys(i.strip() for i in ids if i.strip()):
            response = await self._get(
                f"/paper/{quote(raw, safe=':/')}", {"fields": FIELDS}, accept_status=(404,)
            )
            if response.status_code == 404:
                continue
            item = read_json(NAME, LABEL, _Paper, response)
            records.extend(map_records(NAME, LABEL, [item], paper_from_s2))
        return records


@register_source(NAME)
def _build(context: SourceContext) -> LiteratureSource:
    return SemanticScholarSource(context)
