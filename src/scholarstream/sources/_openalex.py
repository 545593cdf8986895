"""OpenAlex (https://openalex.org): an open index of some 250 million works.

Searches ``/works`` with ``search=`` and OpenAlex filter syntax, pages by cursor, and maps a
work to a ``Paper``. OpenAlex gives no abstract text, only an inverted index (word ->
positions) for licensing reasons, so the abstract is rebuilt from it.
"""

from __future__ import annotations

import datetime as dt
import logging
import re
from collections.abc import Iterable, Sequence

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
    normalize_openalex_id,
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

NAME = "openalex"
LABEL = "OpenAlex"
WORKS_URL = "https://api.openalex.org/works"
# OpenAlex allows 100 requests/s; a tenth of that is ample for interactive searching and
# leaves room for other tasks of the process that share the limiter.
PER_SECOND = 10.0
MAX_PER_PAGE = 200
# Values in one OR filter (``openalex:W1|W2|...``); OpenAlex accepts up to 100.
FETCH_BATCH = 50
API_KEY_ENV = "SCHOLARSTREAM_SOURCES__OPENALEX_API_KEY"

# The top-level fields the mapping reads; ``select`` keeps each page a fraction of the size.
SELECT = ",".join(
    (
        "id",
        "doi",
        "title",
        "display_name",
        "publication_year",
        "publication_date",
        "ids",
        "language",
        "primary_location",
        "best_oa_location",
        "open_access",
        "type",
        "authorships",
        "biblio",
        "cited_by_count",
        "is_retracted",
        "keywords",
        "topics",
        "mesh",
        "abstract_inverted_index",
    )
)

FILTERS: dict[str, str] = {
    "type": "Work type, e.g. 'article', 'review', 'preprint', 'book-chapter' ('a|b' for either).",
    "is_oa": "'true' for open-access works only.",
    "oa_status": "'gold', 'green', 'hybrid', 'bronze' or 'closed'.",
    "has_doi": "'true' for works with a DOI.",
    "has_abstract": "'true' for works with an abstract.",
    "has_fulltext": "'true' for works whose full text OpenAlex indexed.",
    "is_retracted": "'true' or 'false'.",
    "language": "ISO 639-1 code, e.g. 'en'.",
    "publication_year": "A year or a range, e.g. '2020' or '2018-2022'.",
    "cited_by_count": "e.g. '>100'.",
    "authorships.author.id": "OpenAlex author id(s), e.g. 'A5023888391'.",
    "authorships.institutions.id": "OpenAlex institution id(s), e.g. 'I136199984'.",
    "primary_location.source.id": "OpenAlex source (journal) id(s), e.g. 'S137773608'.",
    "topics.id": "OpenAlex topic id(s), e.g. 'T10017'.",
    "sort": "Not a filter: the sort order, e.g. 'cited_by_count:desc' or "
    "'publication_date:desc' (default: relevance).",
}

QUERY_SYNTAX = (
    "Free text searched in titles, abstracts and full text. Boolean operators AND, OR and NOT "
    "(upper case) and parentheses combine terms; double quotes match an exact phrase, e.g. "
    '\'("machine learning" OR "deep learning") AND sepsis NOT pediatric\'. Stemming is '
    "applied; there are no field tags in the query itself: restrict by field with the filters "
    "(type, is_oa, publication_year, authorships.author.id ...), each in OpenAlex filter "
    "syntax ('a|b' is either value, '!a' excludes a, '>n'/'<n' compare numbers). The date "
    "range becomes from_publication_date/to_publication_date."
)


class _Source(ResponseModel):
    display_name: str | None = None
    issn_l: str | None = None
    host_organization_name: str | None = None


class _Location(ResponseModel):
    landing_page_url: str | None = None
    pdf_url: str | None = None
    source: _Source | None = None


class _OpenAccess(ResponseModel):
    oa_url: str | None = None


class _AuthorRef(ResponseModel):
    display_name: str | None = None
    orcid: str | None = None


class _Named(ResponseModel):
    display_name: str | None = None


class _Authorship(ResponseModel):
    author: _AuthorRef = Field(default_factory=_AuthorRef)
    institutions: list[_Named] = Field(default_factory=list)
    raw_affiliation_strings: list[str] = Field(default_factory=list)


class _Ids(ResponseModel):
    openalex: str | None = None
    doi: str | None = None
    pmid: str | None = None
    pmcid: str | None = None


class _Biblio(ResponseModel):
    volume: str | None = None
    issue: str | None = None
    first_page: str | None = None
    last_page: str | None = None


class _Mesh(ResponseModel):
    descriptor_name: str | None = None


class _Work(ResponseModel):
    id: str
    doi: str | None = None
    title: str | None = None
    display_name: str | None = None
    publication_year: int | None = None
    publication_date: dt.date | None = None
    ids: _Ids = Field(default_factory=_Ids)
    language: str | None = None
    primary_location: _Location | None = None
    best_oa_location: _Location | None = None
    open_access: _OpenAccess | None = None
    type: str | None = None
    authorships: list[_Authorship] = Field(default_factory=list)
    biblio: _Biblio = Field(default_factory=_Biblio)
    cited_by_count: int | None = None
    is_retracted: bool | None = None
    keywords: list[_Named] = Field(default_factory=list)
    topics: list[_Named] = Field(default_factory=list)
    mesh: list[_Mesh] = Field(default_factory=list)
    abstract_inverted_index: dict[str, list[int]] | None = None


class _Meta(ResponseModel):
    count: int | None = None
    next_cursor: str | None = None


class _WorksPage(ResponseModel):
    # Every /works answer has both, even an empty one: without them the body is not one.
    meta: _Meta
    results: list[_Work]


def rebuild_abstract(inverted_index: dict[str, list[int]] | None) -> str | None:
    """The abstract text from OpenAlex's ``abstract_inverted_index`` (word -> positions)."""
    if not inverted_index:
        return None
    positioned = sorted(
        (position, word) for word, positions in inverted_index.items() for position in positions
    )
    text = " ".join(word for _, word in positioned).strip()
    return text or None


_ORCID = re.compile(r"\d{4}-\d{4}-\d{4}-\d{3}[\dX]", re.IGNORECASE)
_TRAILING_NUMBER = re.compile(r"(\d+)/?$")


def _orcid(value: str | None) -> str | None:
    match = _ORCID.search(value or "")
    return match.group(0).upper() if match else None


def _trailing_number(url: str | None) -> str | None:
    """``https://pubmed.ncbi.nlm.nih.gov/25599636`` -> ``25599636`` (OpenAlex gives URLs)."""
    match = _TRAILING_NUMBER.search((url or "").strip())
    return match.group(1) if match else None


def _year(value: int | None) -> int | None:
    return value if value is not None and 1000 <= value <= 2999 else None


def _dedupe(values: Iterable[str | None]) -> list[str]:
    kept: list[str] = []
    seen: set[str] = set()
    for value in values:
        text = " ".join((value or "").split())
        if text and text.lower() not in seen:
            seen.add(text.lower())
            kept.append(text)
    return kept


def _author(authorship: _Authorship) -> Author | None:
    name = " ".join((authorship.author.display_name or "").split())
    author = Author.parse(name) if name else None
    if author is None:
        return None
    affiliations = _dedupe(inst.display_name for inst in authorship.institutions)
    if not affiliations:
        affiliations = _dedupe(authorship.raw_affiliation_strings)
    return author.model_copy(
        update={"orcid": _orcid(authorship.author.orcid), "affiliations": affiliations}
    )


def _pages(biblio: _Biblio) -> str | None:
    first, last = biblio.first_page, biblio.last_page
    if first and last and first != last:
        return f"{first}-{last}"
    return first or last


def _links(work: _Work, doi: str | None) -> list[Link]:
    candidates: list[Link] = []
    primary = work.primary_location
    if primary and primary.landing_page_url:
        candidates.append(Link(url=primary.landing_page_url, kind="landing"))
    pdf = (work.best_oa_location.pdf_url if work.best_oa_location else None) or (
        primary.pdf_url if primary else None
    )
    if pdf is None and work.open_access and work.open_access.oa_url:
        pdf = work.open_access.oa_url
    if pdf:
        candidates.append(Link(url=pdf, kind="pdf"))
    if doi:
        candidates.append(Link(url=f"https://doi.org/{doi}", kind="doi"))
    candidates.append(Link(url=work.id, kind="source"))
    unique: dict[str, Link] = {}
    for link in candidates:
        unique.setdefault(link.url, link)
    return list(unique.values())


def work_to_paper(work: _Work) -> Paper | None:
    """One OpenAlex work as a Paper; ``None`` for the rare work without a title."""
    title = " ".join((work.title or work.display_name or "").split())
    if not title:
        logger.debug("openalex work %s has no title; left out", work.id)
        return None
    openalex_id = normalize_openalex_id(work.ids.openalex or work.id)
    doi = normalize_doi(work.doi or work.ids.doi)
    source = work.primary_location.source if work.primary_location else None
    retraction = (
        Retraction(notice="Flagged as retracted by OpenAlex.") if work.is_retracted else None
    )
    authors = [author for a in work.authorships if (author := _author(a)) is not None]
    return Paper(
        ids=Identifiers(
            doi=doi,
            openalex_id=openalex_id,
            pmid=_trailing_number(work.ids.pmid),
            pmcid=_trailing_number(work.ids.pmcid),
        ),
        title=title,
        abstract=rebuild_abstract(work.abstract_inverted_index),
        authors=authors,
        venue=source.display_name if source else None,
        volume=work.biblio.volume,
        issue=work.biblio.issue,
        pages=_pages(work.biblio),
        publisher=source.host_organization_name if source else None,
        issn=source.issn_l if source else None,
        language=work.language,
        published=work.publication_date,
        year=_year(work.publication_year),
        publication_types=[work.type] if work.type else [],
        mesh_terms=_dedupe(term.descriptor_name for term in work.mesh),
        keywords=_dedupe(
            [k.display_name for k in work.keywords] + [t.display_name for t in work.topics]
        ),
        links=_links(work, doi),
        citation_count=work.cited_by_count,
        retraction=retraction,
        provenance=[Provenance(source=NAME, source_id=openalex_id)],
    )


class OpenAlexSource:
    def __init__(self, context: SourceContext) -> None:
        self._settings = context.settings
        self._http = context.http

    @property
    def info(self) -> SourceInfo:
        return SourceInfo(
            name=NAME,
            label=LABEL,
            description="Open index of ~250 million scholarly works across all disciplines, "
            "with authors, institutions, topics, citation counts and open-access links.",
            query_syntax=QUERY_SYNTAX,
            filters=FILTERS,
            api_key="optional",
            api_key_setting=API_KEY_ENV,
            rate_limit=f"{PER_SECOND:.0f} requests/s from this process (OpenAlex allows 100/s). "
            "Daily usage is metered: an API key raises the free daily allowance; contact_email "
            "is sent as mailto.",
        )

    def _base_params(self) -> dict[str, str | int | float | None]:
        params: dict[str, str | int | float | None] = {"select": SELECT}
        if self._settings.contact_email:
            params["mailto"] = self._settings.contact_email
        key = self._settings.openalex_api_key
        if key is not None:
            params["api_key"] = key.get_secret_value()
        return params

    async def _get_page(self, params: dict[str, str | int | float | None]) -> _WorksPage:
        response = await self._http.get(
            NAME,
            WORKS_URL,
            per_second=PER_SECOND,
            params={**self._base_params(), **params},
            credentials_hint=f"Check {API_KEY_ENV}, or unset it to use OpenAlex without a key.",
            label=LABEL,
        )
        return _read_page(response)

    async def search(self, query: SearchQuery) -> SearchPage:
        check_filters(NAME, query, FILTERS)
        filters = [f"{name}:{value}" for name, value in query.filters.items() if name != "sort"]
        # OpenAlex's from_created_date / from_updated_date filters are reserved to paid
        # (Premium) plans, so dates='added' is not offered (info.added_date is None): the
        # publication date is filtered either way, and monitoring looks back further.
        if query.date_from:
            filters.append(f"from_publication_date:{query.date_from.isoformat()}")
        if query.date_to:
            filters.append(f"to_publication_date:{query.date_to.isoformat()}")
        page = await self._get_page(
            {
                "search": query.text,
                "filter": ",".join(filters) or None,
                "sort": query.filters.get("sort"),
                "per-page": min(query.limit, MAX_PER_PAGE),
                "cursor": query.page_token or "*",
            }
        )
        records: list[Record] = map_records(NAME, LABEL, page.results, work_to_paper)
        return SearchPage(
            source=NAME,
            records=records,
            total=page.meta.count,
            next_page_token=page.meta.next_cursor if page.results else None,
        )

    async def fetch(self, ids: Sequence[str]) -> list[Record]:
        """Works by OpenAlex id (``W123``, or its URL) or by DOI, in the order asked."""
        work_ids = list(dict.fromkeys(i for i in map(normalize_openalex_id, ids) if i))
        dois = list(
            dict.fromkeys(
                d for raw in ids if not normalize_openalex_id(raw) and (d := normalize_doi(raw))
            )
        )
        found: list[Paper] = []
        for key, values in (("openalex", work_ids), ("doi", dois)):
            # A DOI holding ',' or '|' would break the OR filter; such DOIs are left out.
            usable = [v for v in values if "," not in v and "|" not in v]
            for start in range(0, len(usable), FETCH_BATCH):
                batch = usable[start : start + FETCH_BATCH]
                page = await self._get_page(
                    {"filter": f"{key}:{'|'.join(batch)}", "per-page": len(batch)}
                )
                found.extend(map_records(NAME, LABEL, page.results, work_to_paper))
        return _in_requested_order(found, ids)


def _in_requested_order(papers: list[Paper], ids: Sequence[str]) -> list[Record]:
    by_key: dict[str, Paper] = {}
    for paper in papers:
        for key in (paper.ids.openalex_id, paper.ids.doi):
            if key:
                by_key.setdefault(key, paper)
    ordered: list[Record] = []
    seen: set[int] = set()
    for raw in ids:
        match = by_key.get(normalize_openalex_id(raw) or normalize_doi(raw) or "")
        if match is not None and id(match) not in seen:
            seen.add(id(match))
            ordered.append(match)
    return ordered


def _read_page(response: httpx.Response) -> _WorksPage:
    return read_json(NAME, LABEL, _WorksPage, response)


@register_source(NAME)
def _build(context: SourceContext) -> LiteratureSource:
    return OpenAlexSource(context)
