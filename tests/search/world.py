"""A literature world for search tests: the real responses findpapers recorded from
PubMed, OpenAlex, Semantic Scholar and arXiv for one query (machine learning for natural
language processing), served by host through ``httpx.MockTransport``."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field

import httpx

from tests.conftest import SHARED_DATA

SAMPLES = SHARED_DATA / "api_fixtures" / "findpapers_collected_samples"
QUESTION = "machine learning for natural language processing"

_EMPTY: dict[str, tuple[str, bytes]] = {
    "pubmed": (
        "application/json",
        b'{"esearchresult": {"count": "0", "retmax": "0", "retstart": "0", "idlist": []}}',
    ),
    "openalex": ("application/json", b'{"meta": {"count": 0}, "results": []}'),
    "semantic_scholar": ("application/json", b'{"total": 0, "offset": 0, "data": []}'),
    "arxiv": (
        "application/atom+xml",
        b'<?xml version="1.0"?><feed xmlns="http://www.w3.org/2005/Atom" '
        b'xmlns:opensearch="http://a9.com/-/spec/opensearch/1.1/">'
        b"<opensearch:totalResults>0</opensearch:totalResults></feed>",
    ),
}


def _source_of(request: httpx.Request) -> str:
    host = request.url.host
    if "ncbi" in host:
        return "pubmed"
    if "openalex" in host:
        return "openalex"
    if "semanticscholar" in host:
        return "semantic_scholar"
    if "arxiv" in host:
        return "arxiv"
    return host


def _recorded(source: str, request: httpx.Request) -> tuple[str, bytes]:
    if source == "pubmed":
        if "efetch" in request.url.path:
            return "text/xml", (SAMPLES / "pubmed" / "efetch_response.xml").read_bytes()
        return "application/json", (SAMPLES / "pubmed" / "esearch_response.json").read_bytes()
    if source == "openalex":
        return "application/json", (SAMPLES / "openalex" / "sample_response.json").read_bytes()
    if source == "semantic_scholar":
        path = SAMPLES / "semanticscholar" / "relevance_search_response.json"
        return "application/json", path.read_bytes()
    if source == "arxiv":
        return "application/atom+xml", (SAMPLES / "arxiv" / "sample_response.xml").read_bytes()
    raise AssertionError(f"no recorded answer for {request.url}")


@dataclass
class LiteratureWorld:
    """``failing`` sources answer 401 (no retries), ``empty`` ones find nothing; ``offline``:
    no source can be reached (the name does not resolve)."""

    failing: Collection[str] = ()
    empty: Collection[str] = ()
    offline: bool = False
    requests: list[httpx.Request] = field(default_factory=list)

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        if self.offline:
            raise httpx.ConnectError(
                "[Errno -3] Temporary failure in name resolution", request=request
            )
        source = _source_of(request)
        if source in self.failing:
            return httpx.Response(401, json={"message": "key refused"})
        if source in self.empty:
            media, body = _EMPTY[source]
        else:
            media, body = _recorded(source, request)
        return httpx.Response(200, content=body, headers={"content-type": media})

    def transport(self) -> httpx.MockTransport:
        return httpx.MockTransport(self)

    def searched(self, source: str) -> list[httpx.Request]:
        return [r for r in self.requests if _source_of(r) == source]
