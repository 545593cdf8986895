"""arXiv (https://arxiv.org): preprints in physics, mathematics, computer science,
quantitative biology and finance, statistics, electrical engineering and economics.

The export API answers in Atom. It asks clients to wait 3 seconds between calls, and
reports a bad query not as an HTTP error alone but as a feed whose one entry is titled
"Error", which becomes a ``SourceQueryError`` carrying arXiv's explanation.
"""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Sequence

import httpx
from lxml import etree

from scholarstream.errors import SourceQueryError, SourceUnavailableError
from scholarstream.papers import (
    Author,
    Identifiers,
    Link,
    Paper,
    Provenance,
    Record,
    normalize_arxiv_id,
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
from scholarstream.sources._responses import map_records, read_xml

logger = logging.getLogger(__name__)

NAME = "arxiv"
LABEL = "arXiv"
API_URL = "https://export.arxiv.org/api/query"
# arXiv's terms of use: no more than one request every three seconds.
PER_SECOND = 1 / 3
FETCH_BATCH = 100

NS = {
    "atom": "http://www.w3.org/2005/Atom",
    "arxiv": "http://arxiv.org/schemas/atom",
    "opensearch": "http://a9.com/-/spec/opensearch/1.1/",
}

SORT_BY = ("relevance", "lastUpdatedDate", "submittedDate")
SORT_ORDER = ("ascending", "descending")

FILTERS: dict[str, str] = {
    "sortBy": "'relevance' (default), 'lastUpdatedDate' or 'submittedDate'.",
    "sortOrder": "'descending' (default) or 'ascending'.",
}

QUERY_SYNTAX = (
    "arXiv's field syntax: prefix a term with ti: (title), au: (author), abs: (abstract), "
    "co: (comment), jr: (journal reference), cat: (category, e.g. cat:cs.LG) or all: "
    "(every field; the default for a bare term). Combine with AND, OR and ANDNOT (upper "
    "case) and group with parentheses; double quotes make a phrase, e.g. "
    "'ti:\"graph neural network\" AND cat:q-bio.QM ANDNOT au:smith'. The date range is "
    "added as submittedDate:[YYYYMMDD0000 TO YYYYMMDD2359] (first submission)."
)

_PARSER = etree.XMLParser(resolve_entities=False, no_network=True, huge_tree=False)


def _text(element: etree._Element, path: str) -> str | None:
    value = element.findtext(path, namespaces=NS)
    text = " ".join((value or "").split())
    return text or None


def _date(value: str | None) -> dt.date | None:
    if not value:
        return None
    try:
        return dt.date.fromisoformat(value[:10])
    except ValueError:
        return None


def _author(element: etree._Element) -> Author | None:
    author = Author.parse(_text(element, "atom:name") or "")
    if author is None:
        return None
    affiliations = [
        " ".join(a.text.split())
        for a in element.findall("arxiv:affiliation", namespaces=NS)
        if a.text and a.text.strip()
    ]
    return author.model_copy(update={"affiliations": affiliations})


def _links(entry: etree._Element, arxiv_id: str, doi: str | None) -> list[Link]:
    landing = f"https://arxiv.org/abs/{arxiv_id}"
    pdf = f"https://arxiv.org/pdf/{arxiv_id}"
    for link in entry.findall("atom:link", namespaces=NS):
        href = link.get("href")
        if not href:
            continue
        if link.get("rel") == "alternate":
            landing = href
        elif link.get("title") == "pdf":
            pdf = href
    links = [Link(url=landing, kind="landing"), Link(url=pdf, kind="pdf")]
    if doi:
        links.append(Link(url=f"https://doi.org/{doi}", kind="doi"))
    return links


def entry_to_paper(entry: etree._Element) -> Paper | None:
    """One Atom entry as a Paper; ``None`` when it lacks an arXiv id or a title."""
    raw_id = _text(entry, "atom:id")
    arxiv_id = normalize_arxiv_id(raw_id)
    title = _text(entry, "atom:title")
    if arxiv_id is None or title is None:
        logger.debug("arxiv entry %r has no usable id or title; left out", raw_id)
        return None
    primary = entry.find("arxiv:primary_category", namespaces=NS)
    categories = [primary.get("term")] if primary is not None else []
    categories += [c.get("term") for c in entry.findall("atom:category", namespaces=NS)]
    doi = normalize_doi(_text(entry, "arxiv:doi"))
    return Paper(
        ids=Identifiers(arxiv_id=arxiv_id, doi=doi),
        title=title,
        abstract=_text(entry, "atom:summary"),
        authors=[
            a for e in entry.findall("atom:author", namespaces=NS) if (a := _author(e)) is not None
        ],
        venue=_text(entry, "arxiv:journal_ref"),
        published=_date(_text(entry, "atom:published")),
        publication_types=["preprint"],
        keywords=list(dict.fromkeys(c for c in categories if c)),
        links=_links(entry, arxiv_id, doi),
        provenance=[Provenance(source=NAME, source_id=arxiv_id)],
    )


class _Feed:
    """A parsed answer: its entries, or the error arXiv reported in place of them."""

    def __init__(self, response: httpx.Response) -> None:
        try:
            self.root = read_xml(NAME, LABEL, response, _PARSER, (f"{{{NS['atom']}}}feed",))
        except SourceUnavailableError as exc:
            if response.status_code >= 400:
                raise SourceQueryError(
                    NAME, f"arXiv rejected the query (HTTP {response.status_code})."
                ) from exc
            raise
        self.entries = self.root.findall("atom:entry", namespaces=NS)
        for entry in self.entries:
            entry_id = _text(entry, "atom:id") or ""
            if _text(entry, "atom:title") == "Error" or "/api/errors" in entry_id:
                raise SourceQueryError(
                    NAME,
                    f"arXiv rejected the query: {_text(entry, 'atom:summary') or entry_id}.",
                    hint="Check the arXiv syntax (ti:, au:, abs:, cat:, AND/OR/ANDNOT) and ids "
                    "such as 2104.12255 or hep-th/9901001.",
                )
        if response.status_code >= 400:
            raise SourceQueryError(NAME, f"arXiv rejected the query (HTTP {response.status_code}).")

    def total(self) -> int | None:
        value = _text(self.root, "opensearch:totalResults")
        return int(value) if value and value.isdigit() else None

    def papers(self) -> list[Record]:
        return map_records(NAME, LABEL, self.entries, entry_to_paper)


ADDED_DATE = "submission date of the first version (when arXiv received the paper)"
"""arXiv's ``submittedDate`` is the first version's submission, which is also the
paper's publication date here: one filter serves ``dates='published'`` and ``'added'``."""


def _search_query(query: SearchQuery) -> str:
    text = query.text.strip()
    if query.date_from is None and query.date_to is None:
        return text
    start = (query.date_from or dt.date(1991, 1, 1)).strftime("%Y%m%d")
    end = (query.date_to or dt.datetime.now(dt.UTC).date()).strftime("%Y%m%d")
    return f"({text}) AND submittedDate:[{start}0000 TO {end}2359]"


def _choice(query: SearchQuery, name: str, allowed: Sequence[str]) -> str | None:
    value = query.filters.get(name)
    if value is not None and value not in allowed:
        raise SourceQueryError(
            NAME,
            f"arXiv has no {name} {value!r}.",
            hint=f"Use one of: {', '.join(allowed)}.",
        )
    return value


class ArxivSource:
    def __init__(self, context: SourceContext) -> None:
        self._http = context.http

    @property
    def info(self) -> SourceInfo:
        return SourceInfo(
            name=NAME,
            label=LABEL,
            description="Open-access preprints (2.5 million+) in physics, mathematics, "
            "computer science, quantitative biology, statistics and related fields.",
            query_syntax=QUERY_SYNTAX,
            filters=FILTERS,
            api_key="none",
            rate_limit="1 request every 3 seconds, as arXiv's API terms require.",
            added_date=ADDED_DATE,
        )

    async def _get(self, params: dict[str, str | int | float | None]) -> _Feed:
        response = await self._http.get(
            NAME, API_URL, per_second=PER_SECOND, params=params, accept_status=(400,), label=LABEL
        )
        return _Feed(response)

    async def search(self, query: SearchQuery) -> SearchPage:
        check_filters(NAME, query, FILTERS)
        start = query.offset()
        feed = await self._get(
            {
                "search_query": _search_query(query),
                "start": start,
                "max_results": query.limit,
                "sortBy": _choice(query, "sortBy", SORT_BY),
                "sortOrder": _choice(query, "sortOrder", SORT_ORDER),
            }
        )
        records = feed.papers()
        total = feed.total()
        following = start + len(feed.entries)
        more = bool(feed.entries) and (total is None or following < total)
        return SearchPage(
            source=NAME,
            records=records,
            total=total,
            next_page_token=str(following) if more else None,
        )

    async def fetch(self, ids: Sequence[str]) -> list[Record]:
        """Papers by arXiv id (new style 2104.12255 or old style hep-th/9901001; a version
        suffix is ignored, the latest version is returned). Ids that are not arXiv ids, or
        that arXiv does not know, are left out."""
        wanted = list(dict.fromkeys(i for i in map(normalize_arxiv_id, ids) if i))
        records: list[Record] = []
        for start in range(0, len(wanted), FETCH_BATCH):
            batch = wanted[start : start + FETCH_BATCH]
            feed = await self._get({"id_list": ",".join(batch), "max_results": len(batch)})
            records.extend(feed.papers())
        return records


@register_source(NAME)
def _build(context: SourceContext) -> LiteratureSource:
    return ArxivSource(context)
