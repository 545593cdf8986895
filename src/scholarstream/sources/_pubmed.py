"""PubMed through NCBI's E-utilities: ``esearch`` finds the PMIDs of a page, ``efetch``
returns their full records as PubMed XML, read by the same parser as imported files.

NCBI allows 3 requests a second without an API key and 10 with one; every request names
the tool (and the contact e-mail when set), as NCBI asks. Large pages keep the search on
NCBI's history server (``usehistory``) and fetch it in batches of 200 from there, so the
ids do not travel back and forth in the URL.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator, Sequence

import httpx
from lxml import etree
from pydantic import BaseModel, ConfigDict, Field

from scholarstream.errors import (
    InvalidInputError,
    SourceCredentialsError,
    SourceQueryError,
    SourceUnavailableError,
)
from scholarstream.papers import Paper, Record, normalize_pmid
from scholarstream.papers.formats import RECORD_TAGS, paper_from_pubmed
from scholarstream.sources._base import (
    SearchPage,
    SearchQuery,
    SourceContext,
    SourceInfo,
    check_filters,
    register_source,
)
from scholarstream.sources._http import Params
from scholarstream.sources._responses import (
    ResponseModel,
    json_object,
    read_xml,
    unreadable,
    validate,
)

logger = logging.getLogger(__name__)

NAME = "pubmed"
LABEL = "PubMed"
EUTILS = "https://eutils.ncbi.nlm.nih.gov/entrez/eutils"
ESEARCH_URL = f"{EUTILS}/esearch.fcgi"
EFETCH_URL = f"{EUTILS}/efetch.fcgi"
TOOL = "scholarstream"
API_KEY_SETTING = "SCHOLARSTREAM_SOURCES__NCBI_API_KEY"
EFETCH_BATCH = 200
"""Ids per efetch request: NCBI recommends at most 200 ids in a GET."""
HISTORY_ABOVE = EFETCH_BATCH
"""Pages larger than one efetch batch are fetched through the history server."""
MAX_RESULTS = 10_000
"""esearch cannot page past the first 10,000 matches of a PubMed query."""
RATE_WITHOUT_KEY = 3.0
RATE_WITH_KEY = 10.0

FILTERS: dict[str, str] = {
    "publication_type": 'Publication type, e.g. "Randomized Controlled Trial", "Review", '
    '"Meta-Analysis" (adds AND "<value>"[pt]).',
    "language": 'Language of the article, e.g. "english" (adds AND <value>[la]).',
    "journal": 'Journal title or its abbreviation, e.g. "Lancet" (adds AND "<value>"[ta]).',
    "mesh": 'A MeSH heading, e.g. "Asthma" (adds AND "<value>"[mh]).',
}
_FILTER_TAGS = {"publication_type": "pt", "language": "la", "journal": "ta", "mesh": "mh"}

QUERY_SYNTAX = (
    "PubMed's own query language, passed through unchanged: Boolean AND, OR, NOT (upper "
    'case) with parentheses; "quoted phrases"; field tags in brackets such as [tiab] (title '
    "and abstract), [ti], [au] (author, e.g. smith j[au]), [mh] or [MeSH] (MeSH heading), "
    "[majr] (major MeSH topic), [pt] (publication type), [ta] (journal), [dp] (date of "
    "publication) and [la] (language); a trailing * truncates a word. Untagged words go "
    "through PubMed's automatic term mapping. Example: "
    '("machine learning"[tiab] OR "deep learning"[tiab]) AND asthma[mh]. Only the first '
    "10,000 matches of a query can be paged through."
)


class _ESearchResult(ResponseModel):
    """The ``esearchresult`` object of an esearch JSON answer (the fields used here)."""

    model_config = ConfigDict(populate_by_name=True)

    count: int = 0
    retstart: int = 0
    idlist: list[str] = Field(default_factory=list)
    webenv: str | None = None
    querykey: str | None = None
    error: str | None = Field(default=None, alias="ERROR")
    errorlist: dict[str, list[str]] = Field(default_factory=dict)
    querytranslation: str | None = None


class _History(BaseModel):
    webenv: str
    query_key: str


class PubMedSource:
    """PubMed, through E-utilities."""

    def __init__(self, context: SourceContext) -> None:
        self._http = context.http
        settings = context.settings
        self._api_key = settings.ncbi_api_key.get_secret_value() if settings.ncbi_api_key else None
        self._email = settings.contact_email
        self._per_second = RATE_WITH_KEY if self._api_key else RATE_WITHOUT_KEY

    @property
    def info(self) -> SourceInfo:
        return SourceInfo(
            name=NAME,
            label=LABEL,
            description="MEDLINE and the rest of PubMed (NCBI): biomedical and life-science "
            "literature, with MeSH indexing, publication types and retraction notices.",
            record_kind="papers",
            query_syntax=QUERY_SYNTAX,
            filters=FILTERS,
            api_key="optional",
            api_key_setting=API_KEY_SETTING,
            configured=True,
            rate_limit="3 requests/s without an API key, 10/s with one (NCBI's limits; "
            f"set {API_KEY_SETTING} for the higher one).",
            added_date=ADDED_DATE,
        )

    async def search(self, query: SearchQuery) -> SearchPage:
        check_filters(NAME, query, FILTERS)
        offset = query.offset()
        if offset >= MAX_RESULTS:
            raise SourceQueryError(
                NAME,
                f"PubMed can only page through the first {MAX_RESULTS:,} matches of a query.",
                hint="Narrow the query (a date range or more specific terms) to see the rest.",
            )
        limit = min(query.limit, MAX_RESULTS - offset)
        found = await self._esearch(query, offset, limit)
        history = (
            _History(webenv=found.webenv, query_key=found.querykey)
            if found.webenv and found.querykey
            else None
        )
        papers = await self._efetch_page(found, history, offset)
        end = offset + len(found.idlist)
        more = bool(found.idlist) and end < min(found.count, MAX_RESULTS)
        return SearchPage(
            source=NAME,
            records=list(papers),
            total=found.count,
            next_page_token=str(end) if more else None,
        )

    async def fetch(self, ids: Sequence[str]) -> list[Record]:
        """Records for PMIDs, in the order asked; unknown or malformed PMIDs are left out."""
        pmids = list(dict.fromkeys(p for p in map(normalize_pmid, ids) if p))
        papers: dict[str, Paper] = {}
        for start in range(0, len(pmids), EFETCH_BATCH):
            batch = pmids[start : start + EFETCH_BATCH]
            for paper in await self._efetch({"id": ",".join(batch)}):
                if paper.ids.pmid:
                    papers[paper.ids.pmid] = paper
        return [papers[pmid] for pmid in pmids if pmid in papers]

    # --- esearch -------------------------------------------------------------------

    async def _esearch(self, query: SearchQuery, offset: int, limit: int) -> _ESearchResult:
        params: dict[str, str | int | None] = {
            "db": "pubmed",
            "term": _term(query),
            "retmode": "json",
            "retstart": offset,
            "retmax": limit,
            "usehistory": "y" if limit > HISTORY_ABOVE else None,
            **_date_params(query),
        }
        response = await self._get(ESEARCH_URL, params)
        result = _esearch_result(response)
        _raise_for_search_errors(result)
        return result

    # --- efetch --------------------------------------------------------------------

    async def _efetch_page(
        self, found: _ESearchResult, history: _History | None, offset: int
    ) -> list[Paper]:
        """The papers of the page in esearch's (relevance) order."""
        papers: dict[str, Paper] = {}
        for start in range(0, len(found.idlist), EFETCH_BATCH):
            batch = found.idlist[start : start + EFETCH_BATCH]
            params: dict[str, str | int | None]
            if history is not None:
                params = {
                    "WebEnv": history.webenv,
                    "query_key": history.query_key,
                    "retstart": offset + start,
                    "retmax": len(batch),
                }
            else:
                params = {"id": ",".join(batch)}
            for paper in await self._efetch(params):
                if paper.ids.pmid:
                    papers[paper.ids.pmid] = paper
        return [papers[pmid] for pmid in found.idlist if pmid in papers]

    async def _efetch(self, params: dict[str, str | int | None]) -> list[Paper]:
        response = await self._get(EFETCH_URL, {"db": "pubmed", "retmode": "xml", **params})
        return list(_papers_from_efetch(response))

    # --- HTTP ----------------------------------------------------------------------

    async def _get(self, url: str, params: Params) -> httpx.Response:
        """One E-utilities request with the identification NCBI asks for. A 400 is read
        here: NCBI answers an invalid API key with 400, not 401."""
        response = await self._http.get(
            NAME,
            url,
            per_second=self._per_second,
            params={**params, "tool": TOOL, "email": self._email, "api_key": self._api_key},
            accept_status=(400,),
            credentials_hint=_CREDENTIALS_HINT,
            label=LABEL,
        )
        if response.status_code == 400:
            _raise_for_bad_request(response)
        return response


_CREDENTIALS_HINT = (
    f"NCBI refused the API key: check {API_KEY_SETTING}, or unset it (PubMed works without "
    "a key, at 3 requests a second)."
)


@register_source(NAME)
def build(context: SourceContext) -> PubMedSource:
    return PubMedSource(context)


# --- query ---------------------------------------------------------------------------


def _term(query: SearchQuery) -> str:
    """The query text untouched; filters are ANDed on as tagged terms."""
    if not query.filters:
        return query.text
    clauses = [f"({query.text})"]
    for name, value in sorted(query.filters.items()):
        clean = " ".join(value.replace('"', " ").split())
        if not clean:
            raise SourceQueryError(
                NAME, f"The {name} filter is empty.", hint=f"{name}: {FILTERS[name]}"
            )
        clauses.append(f'"{clean}"[{_FILTER_TAGS[name]}]')
    return " AND ".join(clauses)


ADDED_DATE = "Entrez date (EDAT): the day PubMed added the record"
_DATE_TYPES = {"published": "pdat", "added": "edat"}
"""E-utilities' ``datetype``: ``pdat`` is the publication date, ``edat`` the Entrez date
(when the record entered PubMed). A record indexed today may carry a publication date
months back: only ``edat`` finds it in a search "since the last run"."""


def _date_params(query: SearchQuery) -> dict[str, str | int | None]:
    """Publication (or Entrez) date range; E-utilities needs both ends, so an open end is
    filled with PubMed's own open-range bounds."""
    if query.date_from is None and query.date_to is None:
        return {}
    start = query.date_from.strftime("%Y/%m/%d") if query.date_from else "1000/01/01"
    end = query.date_to.strftime("%Y/%m/%d") if query.date_to else "3000/12/31"
    return {"datetype": _DATE_TYPES[query.dates], "mindate": start, "maxdate": end}


# --- answers -------------------------------------------------------------------------


def _esearch_result(response: httpx.Response) -> _ESearchResult:
    body = json_object(NAME, LABEL, response)
    if "error" in body and "esearchresult" not in body:
        raise SourceQueryError(NAME, f"PubMed refused the search: {body['error']}.")
    inner = body.get("esearchresult")
    if not isinstance(inner, dict):
        # Without it there is no count and no id: reading it as "nothing found" would hide
        # a broken answer behind an empty page.
        raise unreadable(NAME, LABEL, "JSON without the 'esearchresult' every answer has")
    if "count" not in inner and "ERROR" not in inner:
        raise unreadable(NAME, LABEL, "JSON without the 'esearchresult.count' every answer has")
    return validate(NAME, LABEL, _ESearchResult, inner)


def _raise_for_search_errors(result: _ESearchResult) -> None:
    """``ERROR`` means the search itself failed. In ``errorlist``, an unknown field tag
    is always a query error; phrases PubMed does not know are dropped by PubMed and the
    rest searched, so they are an error only when nothing was found."""
    if result.error:
        if result.error.lower().startswith("search backend failed"):
            raise SourceUnavailableError(NAME, f"PubMed's search failed: {result.error}.")
        raise SourceQueryError(NAME, f"PubMed rejected the query: {result.error}.")
    fields = [f for f in result.errorlist.get("fieldsnotfound", []) if f]
    if fields:
        raise SourceQueryError(
            NAME,
            f"PubMed does not know the field tag(s) {', '.join(fields)}.",
            hint="Use PubMed field tags such as [tiab], [ti], [au], [mh], [pt], [dp].",
        )
    phrases = [p for p in result.errorlist.get("phrasesnotfound", []) if p]
    if phrases and result.count == 0:
        raise SourceQueryError(
            NAME,
            f"PubMed found nothing: it does not know {', '.join(map(repr, phrases))}.",
            hint="Check the spelling, or search for a broader term.",
        )


def _raise_for_bad_request(response: httpx.Response) -> None:
    message: object = None
    try:
        body: object = json.loads(response.content)
    except ValueError:
        body = None
    if isinstance(body, dict):
        message = body.get("error") or body.get("ERROR")
    text = str(message) if message else " ".join(response.text.split())[:300]
    if "api key" in text.lower() or "api_key" in text.lower():
        raise SourceCredentialsError(
            NAME, f"NCBI refused the API key (HTTP 400: {text}).", hint=_CREDENTIALS_HINT
        )
    raise SourceQueryError(NAME, f"PubMed rejected the request (HTTP 400): {text}")


_EFETCH_PARSER = etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False)


def _papers_from_efetch(response: httpx.Response) -> Iterator[Paper]:
    """A ``PubmedArticleSet`` of at most one batch (a few MB). A record that cannot be
    read is logged and left out, as an unknown PMID would be; an answer that is not a
    whole article set (cut short, an error page) fails the batch."""
    root = read_xml(NAME, LABEL, response, _EFETCH_PARSER, ("PubmedArticleSet", "eFetchResult"))
    if root.tag == "eFetchResult":  # efetch's own error document
        error = " ".join(str(text) for text in root.itertext()).strip() or "no detail given"
        raise SourceQueryError(NAME, f"PubMed could not return the records: {error}.")
    for element in root.iterchildren(*RECORD_TAGS):
        try:
            yield paper_from_pubmed(element)
        except InvalidInputError as exc:
            logger.warning("pubmed: %s", exc.message)
