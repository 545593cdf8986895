"""Google Scholar, through SerpAPI (https://serpapi.com/google-scholar-api).

Google Scholar has no API of its own; SerpAPI runs the search and returns the result page
as JSON, one paid search credit per call, so an API key is required. What a result page
holds is thin, and this source is honest about it:

* the "abstract" of a record is Scholar's *snippet*, a fragment of the text around the
  matched words (often cut with "…"), not the paper's abstract;
* authors, venue and year are parsed, best effort, from a one-line summary such as
  "JC Robinson, VG Saúco - 2010 - books.google.com", where Scholar shortens long author
  lists and venue names;
* there are no identifiers besides Scholar's own result id (and a DOI when the link
  itself carries one);
* there is no lookup by id, so ``fetch`` returns nothing.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from urllib.parse import urlsplit

import httpx
from pydantic import BaseModel, Field

from scholarstream.errors import (
    SourceCredentialsError,
    SourceQueryError,
    SourceUnavailableError,
)
from scholarstream.papers import Author, Identifiers, Link, Paper, Provenance, Record, normalize_doi
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

NAME = "google_scholar"
LABEL = "Google Scholar (SerpAPI)"
SEARCH_URL = "https://serpapi.com/search.json"
# Each call costs a search credit; SerpAPI's own throughput limit is per hour and far
# above this, so 1/s only keeps a runaway loop from spending the month's credits at once.
PER_SECOND = 1.0
MAX_NUM = 20
# Google Scholar shows no result past the 1,000th.
RESULT_WINDOW = 1000
API_KEY_ENV = "SCHOLARSTREAM_SOURCES__SERPAPI_API_KEY"
CREDENTIALS_HINT = (
    f"Set {API_KEY_ENV} to your SerpAPI key (https://serpapi.com/manage-api-key) and restart."
)
_NO_RESULTS = "hasn't returned any results"

FILTERS: dict[str, str] = {
    "hl": "Interface language of the results, e.g. 'en'.",
    "lr": "Restrict to documents in these languages, e.g. 'lang_en|lang_fr'.",
    "as_sdt": "'0' excludes patents (default), '7' includes them; '4' searches case law.",
    "as_vis": "'1' leaves out citations (results without a link).",
    "as_rr": "'1' for review articles only.",
    "scisbd": "'1' sorts by date, abstracts only; '2' sorts by date, everything.",
    "cites": "Scholar's cites id: only articles citing that article.",
}

QUERY_SYNTAX = (
    'Google Scholar syntax: plain words, "double quotes" for a phrase, OR between '
    "alternatives, a leading '-' to exclude a word, author:\"j smith\" for an author, "
    'source:"Journal Name" for a publication, intitle: for a word in the title. The '
    "date range is applied by year only (as_ylo/as_yhi). At most 20 results per page and "
    "1,000 in all."
)


class _CitedBy(ResponseModel):
    total: int | None = None


class _InlineLinks(ResponseModel):
    cited_by: _CitedBy | None = None


class _PublicationAuthor(ResponseModel):
    name: str | None = None


class _PublicationInfo(ResponseModel):
    summary: str | None = None
    authors: list[_PublicationAuthor] = Field(default_factory=list)


class _Resource(ResponseModel):
    link: str | None = None
    file_format: str | None = None


class _Result(ResponseModel):
    title: str | None = None
    result_id: str | None = None
    type: str | None = None
    link: str | None = None
    snippet: str | None = None
    publication_info: _PublicationInfo | None = None
    resources: list[_Resource] = Field(default_factory=list)
    inline_links: _InlineLinks | None = None


class _SearchInformation(ResponseModel):
    total_results: int | None = None


class _Response(ResponseModel):
    error: str | None = None
    search_information: _SearchInformation | None = None
    # SerpAPI answers a search that found nothing with an "error"; without one, a body
    # without organic results is not a result page.
    organic_results: list[_Result] | None = None


_YEAR = re.compile(r"(?:^|[\s,])(1[5-9]\d\d|20\d\d)\s*$")
_TRUNCATED = ("…", "...")


class Summary(BaseModel):
    """What a Scholar summary line says: authors, venue, year (each may be missing)."""

    authors: list[str] = Field(default_factory=list)
    venue: str | None = None
    year: int | None = None


def parse_summary(summary: str | None) -> Summary:
    """``"NW Simmonds - The Evolution of the Bananas., 1962 - cabdirect.org"`` ->
    authors ["NW Simmonds"], venue "The Evolution of the Bananas.", year 1962.

    The line is "authors - venue, year - host"; the venue part may be only a year, and a
    trailing "…" marks a list or name Scholar cut short (the cut item is dropped).
    """
    if not summary:
        return Summary()
    parts = [part.strip() for part in summary.replace("\xa0", " ").split(" - ")]
    authors = [
        name.strip()
        for name in parts[0].split(",")
        if name.strip() and not name.strip().endswith(_TRUNCATED)
    ]
    if len(parts) < 3:
        # "authors - host": no venue or year given.
        return Summary(authors=authors)
    middle = " - ".join(parts[1:-1]).strip()
    year: int | None = None
    match = _YEAR.search(middle)
    if match:
        year = int(match.group(1))
        middle = middle[: match.start()].strip()
    venue = middle.strip(" ,")
    if venue.endswith(_TRUNCATED):
        venue = venue.rstrip(".… ").strip()
    return Summary(authors=authors, venue=venue or None, year=year)


def _doi_from_link(link: str | None) -> str | None:
    """A DOI, when the link is a doi.org URL or a publisher's ``/doi/`` path."""
    if not link:
        return None
    parts = urlsplit(link)
    if parts.netloc.endswith("doi.org") or "/doi/" in parts.path:
        return normalize_doi(parts.path)
    return None


def result_to_paper(result: _Result) -> Paper | None:
    title = " ".join((result.title or "").split())
    if not title:
        return None
    info = result.publication_info or _PublicationInfo()
    summary = parse_summary(info.summary)
    names = summary.authors or [a.name for a in info.authors if a.name]
    links: list[Link] = []
    if result.link:
        links.append(Link(url=result.link, kind="landing"))
    links.extend(
        Link(url=r.link, kind="pdf" if (r.file_format or "").upper() == "PDF" else "full_text")
        for r in result.resources
        if r.link
    )
    cited_by = result.inline_links.cited_by if result.inline_links else None
    return Paper(
        ids=Identifiers(doi=_doi_from_link(result.link)),
        title=title,
        # Scholar's snippet: text around the matched words, not the abstract.
        abstract=" ".join((result.snippet or "").split()) or None,
        authors=[a for name in names if (a := Author.parse(name)) is not None],
        venue=summary.venue,
        year=summary.year,
        publication_types=[result.type] if result.type else [],
        links=links,
        citation_count=cited_by.total if cited_by else None,
        provenance=[Provenance(source=NAME, source_id=result.result_id)],
    )


class ScholarSource:
    def __init__(self, context: SourceContext) -> None:
        self._settings = context.settings
        self._http = context.http

    @property
    def info(self) -> SourceInfo:
        configured = self._settings.serpapi_api_key is not None
        return SourceInfo(
            name=NAME,
            label=LABEL,
            description="Google Scholar's ranking across journals, books, theses, preprints "
            "and court opinions, via SerpAPI. Records are thin: a snippet instead of an "
            "abstract, shortened author lists, no identifiers; fetch by id is not possible.",
            query_syntax=QUERY_SYNTAX,
            filters=FILTERS,
            api_key="required",
            api_key_setting=API_KEY_ENV,
            configured=configured,
            rate_limit="1 request/s; each page costs one search credit of your SerpAPI plan.",
            problem=None if configured else f"No SerpAPI key: set {API_KEY_ENV}.",
        )

    async def search(self, query: SearchQuery) -> SearchPage:
        key = self._settings.serpapi_api_key
        if key is None:
            raise SourceCredentialsError(
                NAME, "Google Scholar needs a SerpAPI key.", hint=CREDENTIALS_HINT
            )
        check_filters(NAME, query, FILTERS)
        start = query.offset()
        if start >= RESULT_WINDOW:
            raise SourceQueryError(
                NAME,
                f"Google Scholar shows no results past the first {RESULT_WINDOW}.",
                hint="Narrow the query (words, author:, source:, the date range).",
            )
        response = await self._http.get(
            NAME,
            SEARCH_URL,
            per_second=PER_SECOND,
            params={
                "engine": "google_scholar",
                "q": query.text,
                "api_key": key.get_secret_value(),
                "num": min(query.limit, MAX_NUM),
                "start": start,
                # Google Scholar filters by publication year only: dates='added' is not
                # offered (info.added_date is None), the year is filtered either way.
                "as_ylo": query.date_from.year if query.date_from else None,
                "as_yhi": query.date_to.year if query.date_to else None,
                **query.filters,
            },
            # SerpAPI explains a refusal in the body's "error"; read it rather than the status.
            accept_status=(400, 401, 403),
            credentials_hint=CREDENTIALS_HINT,
            label=LABEL,
        )
        body = _read(response)
        if body.error:
            if _NO_RESULTS in body.error:
                return SearchPage(source=NAME, records=[], total=0, next_page_token=None)
            _raise_for_error(body.error, response.status_code)
        if body.organic_results is None:
            raise unreadable(
                NAME, LABEL, "JSON without the 'organic_results' (or 'error') every answer has"
            )
        results = body.organic_results
        records: list[Record] = map_records(NAME, LABEL, results, result_to_paper)
        total = body.search_information.total_results if body.search_information else None
        following = start + len(results)
        more = bool(results) and following < RESULT_WINDOW and (total is None or following < total)
        return SearchPage(
            source=NAME,
            records=records,
            total=total,
            next_page_token=str(following) if more else None,
        )

    async def fetch(self, ids: Sequence[str]) -> list[Record]:
        """Always empty: Google Scholar (and SerpAPI) cannot look a record up by id."""
        return []


def _raise_for_error(error: str, status: int) -> None:
    lowered = error.lower()
    if status in (401, 403) or "api key" in lowered or "api_key" in lowered:
        raise SourceCredentialsError(NAME, f"SerpAPI: {error}", hint=CREDENTIALS_HINT)
    if "run out of searches" in lowered:
        raise SourceUnavailableError(
            NAME,
            f"SerpAPI: {error}",
            hint="The SerpAPI plan's searches are used up; wait for the next period or "
            "upgrade the plan.",
        )
    raise SourceQueryError(NAME, f"SerpAPI: {error}")


def _read(response: httpx.Response) -> _Response:
    try:
        return read_json(NAME, LABEL, _Response, response)
    except SourceUnavailableError as exc:
        if response.status_code in (401, 403):
            raise SourceCredentialsError(
                NAME,
                f"SerpAPI refused our credentials (HTTP {response.status_code}).",
                hint=CREDENTIALS_HINT,
            ) from exc
        if response.status_code == 400:
            raise SourceQueryError(NAME, "SerpAPI rejected the request (HTTP 400).") from exc
        raise


@register_source(NAME)
def _build(context: SourceContext) -> LiteratureSource:
    return ScholarSource(context)
