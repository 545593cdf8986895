"""Semantic Scholar against real recorded Graph API bodies: findpapers' relevance and bulk
search pages, and the semanticscholar client's Paper.json and not-found answers."""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Sequence
from typing import Any

import httpx
import pytest

from scholarstream.errors import SourceQueryError
from scholarstream.papers import Paper, Record
from scholarstream.sources import SearchQuery, SemanticScholarSource, build_source
from tests.sources.conftest import FakeClock, MakeContext, Recorder, fixture_path

RELEVANCE = ("findpapers_collected_samples", "semanticscholar", "relevance_search_response.json")
BULK = ("findpapers_collected_samples", "semanticscholar", "bulk_search_response.json")
TURING_ID = "2d5673caa9e6af3a7b82a43f19ee920992db07ad"


def load(parts: tuple[str, ...]) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(fixture_path(*parts).read_text(encoding="utf-8"))
    return data


def papers(records: Sequence[Record]) -> list[Paper]:
    found = [r for r in records if isinstance(r, Paper)]
    assert len(found) == len(records)
    return found


async def test_relevance_search_maps_papers_and_sends_key_dates_and_fields(
    make_context: MakeContext,
) -> None:
    body = load(RELEVANCE)
    recorder = Recorder(lambda request: httpx.Response(200, json=body))
    source = SemanticScholarSource(make_context(recorder, semantic_scholar_api_key="s2-key"))

    page = await source.search(
        SearchQuery(
            text="machine learning deep learning nlp natural language processing",
            limit=50,
            date_from=dt.date(2020, 1, 1),
            date_to=dt.date(2022, 12, 31),
            filters={"fieldsOfStudy": "Computer Science,Medicine", "openAccessPdf": "true"},
        )
    )

    (request,) = recorder.requests
    assert request.url.path == "/graph/v1/paper/search"
    params = request.url.params
    assert params["query"] == "machine learning deep learning nlp natural language processing"
    assert (params["offset"], params["limit"]) == ("0", "50")
    assert params["publicationDateOrYear"] == "2020-01-01:2022-12-31"
    assert params["fieldsOfStudy"] == "Computer Science,Medicine"
    assert params["openAccessPdf"] == ""
    assert {"paperId", "externalIds", "abstract", "authors", "openAccessPdf"} <= set(
        params["fields"].split(",")
    )
    assert request.headers["x-api-key"] == "s2-key"

    assert page.total == 11626
    assert page.next_page_token == "50"
    records = papers(page.records)
    assert len(records) == 50

    first = records[0]
    assert first.ids.s2_id == "39d8cc728d5c5cd477d128a3a73f265e2d94780a"
    assert first.ids.doi == "10.1109/soli54607.2021.9672398"
    assert first.title.startswith("An Analysis of Machine Learning Algorithms and Deep Neural")
    assert first.abstract is not None
    assert first.abstract.startswith("Due to the extensive use of technology in our daily lives")
    assert [a.name for a in first.authors] == [
        "Moh. Arie Hasan",
        "Syed Mahbubuz Zaman",
        "Md. Asif Talukdar",
        "A. Siddika",
        "Md. Golam Rabiul Alam",
    ]
    assert (first.authors[0].family, first.authors[0].given) == ("Hasan", "Moh. Arie")
    assert first.venue == (
        "2021 IEEE International Conference on Service Operations and Logistics, and "
        "Informatics (SOLI)"
    )
    assert first.pages == "1-6"
    assert first.published == dt.date(2021, 12, 11)
    assert first.year == 2021
    assert first.publication_types == ["JournalArticle", "Conference"]
    assert first.keywords == ["Computer Science"]
    assert first.citation_count == 6
    # openAccessPdf.url is "" for this paper: no PDF link, only the Semantic Scholar page.
    assert [(link.kind, link.url) for link in first.links] == [
        (
            "source",
            "https://www.semanticscholar.org/paper/39d8cc728d5c5cd477d128a3a73f265e2d94780a",
        )
    ]
    assert [(p.source, p.source_id) for p in first.provenance] == [
        ("semantic_scholar", "39d8cc728d5c5cd477d128a3a73f265e2d94780a")
    ]

    by_id = {r.ids.s2_id: r for r in records}
    pubmed = by_id["cb991711d64f4d92ca339b95d037b3e40b0e2bac"]
    assert (pubmed.ids.pmid, pubmed.ids.pmcid, pubmed.ids.doi) == (
        "35654878",
        "PMC9582109",
        "10.1007/s10278-022-00633-8",
    )
    assert ("pdf", "https://link.springer.com/content/pdf/10.1007/s10278-022-00633-8.pdf") in {
        (link.kind, link.url) for link in pubmed.links
    }
    assert by_id["ebdb02f9d0f31d3a13070f61fa07fe2fa11cb531"].ids.arxiv_id == "2106.07410"


async def test_relevance_paging_and_its_1000_window(make_context: MakeContext) -> None:
    first_body = load(RELEVANCE)
    # The second page: the same recorded papers, as Semantic Scholar ends a result list.
    last_body = {**first_body, "offset": 50}
    del last_body["next"]

    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(
            200, json=first_body if request.url.params["offset"] == "0" else last_body
        )

    recorder = Recorder(handler)
    source = SemanticScholarSource(make_context(recorder))
    query = SearchQuery(text="nlp", limit=50)

    page1 = await source.search(query)
    page2 = await source.search(query.model_copy(update={"page_token": page1.next_page_token}))
    assert page1.next_page_token == "50"
    assert page2.next_page_token is None
    assert recorder.requests[1].url.params["offset"] == "50"
    assert "x-api-key" not in recorder.requests[0].headers
    assert "publicationDateOrYear" not in recorder.requests[0].url.params

    # Near the end of the window the limit shrinks; past it the query is refused.
    await source.search(SearchQuery(text="nlp", limit=100, page_token="980"))
    assert recorder.requests[-1].url.params["limit"] == "20"
    with pytest.raises(SourceQueryError, match="first 1000") as caught:
        await source.search(SearchQuery(text="nlp", page_token="1000"))
    assert caught.value.hint is not None and "mode=bulk" in caught.value.hint
    assert len(recorder.requests) == 3


async def test_bulk_mode_pages_by_token(make_context: MakeContext, clock: FakeClock) -> None:
    first_body = load(BULK)
    token = first_body["token"]
    last_body = {key: value for key, value in first_body.items() if key != "token"}

    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, json=last_body if "token" in request.url.params else first_body)

    recorder = Recorder(handler)
    source = SemanticScholarSource(make_context(recorder))
    query = SearchQuery(
        text='("machine learning" | "deep learning") "natural language processing"',
        filters={"mode": "bulk", "year": "2020-2022"},
    )

    page1 = await source.search(query)
    assert page1.total == 8269
    assert page1.next_page_token == token
    records = papers(page1.records)
    assert records[0].ids.s2_id == "000170e0e67cae990b5cebce7f9f2f7b0f72c496"
    assert records[0].title == (
        "Auxiliary Stacked Denoising Autoencoder based Collaborative Filtering Recommendation"
    )
    assert records[0].venue == "KSII Trans. Internet Inf. Syst."
    assert (records[0].volume, records[0].pages) == ("14", "2310-2332")
    assert [a.name for a in records[0].authors] == ["Ruihui Mu", "Xiaoqin Zeng"]

    page2 = await source.search(query.model_copy(update={"page_token": token}))
    assert page2.next_page_token is None

    first_request, second_request = recorder.requests
    for request in recorder.requests:
        assert request.url.path == "/graph/v1/paper/search/bulk"
        assert request.url.params["year"] == "2020-2022"
        assert "offset" not in request.url.params
        assert "limit" not in request.url.params
    assert "token" not in first_request.url.params
    assert second_request.url.params["token"] == token
    # 1 request/s: the second call waited a second on the fake clock.
    assert clock.sleeps == [1.0]


async def test_a_sort_selects_bulk_search(make_context: MakeContext) -> None:
    body = load(BULK)
    recorder = Recorder(lambda request: httpx.Response(200, json=body))
    source = SemanticScholarSource(make_context(recorder))
    await source.search(SearchQuery(text="nlp", filters={"sort": "citationCount:desc"}))
    assert recorder.requests[0].url.path == "/graph/v1/paper/search/bulk"
    assert recorder.requests[0].url.params["sort"] == "citationCount:desc"

    with pytest.raises(SourceQueryError, match="cannot sort by 'title'"):
        await source.search(SearchQuery(text="nlp", filters={"sort": "title"}))
    with pytest.raises(SourceQueryError, match="no search mode 'fast'"):
        await source.search(SearchQuery(text="nlp", filters={"mode": "fast"}))
    with pytest.raises(SourceQueryError, match="no filter 'author'"):
        await source.search(SearchQuery(text="nlp", filters={"author": "Turing"}))
    assert len(recorder.requests) == 1


async def test_fetch_gets_each_id_and_leaves_out_unknown_ones(make_context: MakeContext) -> None:
    paper_body = fixture_path("semanticscholar_graph_api", "Paper.json").read_bytes()

    def handler(request: httpx.Request) -> httpx.Response:
        if request.url.path in (
            f"/graph/v1/paper/{TURING_ID}",
            "/graph/v1/paper/DOI:10.1093/mind/lix.236.433",
        ):
            return httpx.Response(200, content=paper_body)
        # Semantic Scholar's recorded answer for an unknown id.
        return httpx.Response(404, json={"error": "Paper with id 0 not found"})

    recorder = Recorder(handler)
    source = SemanticScholarSource(make_context(recorder))
    records = papers(await source.fetch([TURING_ID, "0", "DOI:10.1093/mind/lix.236.433"]))

    assert [r.url.path for r in recorder.requests] == [
        f"/graph/v1/paper/{TURING_ID}",
        "/graph/v1/paper/0",
        "/graph/v1/paper/DOI:10.1093/mind/lix.236.433",
    ]
    assert len(records) == 2
    turing = records[0]
    assert turing.title == "Computing Machinery and Intelligence"
    assert turing.ids.doi == "10.1093/mind/lix.236.433"
    assert [a.name for a in turing.authors] == ["A. Turing"]
    assert (turing.venue, turing.volume, turing.pages) == ("Mind", "LIX", "433-460")
    assert turing.published == dt.date(1950, 10, 1)
    assert turing.citation_count == 10059
    assert turing.publication_types == ["JournalArticle", "Review"]
    assert turing.keywords == ["Computer Science", "Sociology"]
    assert turing.abstract is not None
    assert turing.abstract.startswith("I propose to consider the question")


def test_registered_with_info(make_context: MakeContext) -> None:
    info = build_source("semantic_scholar", make_context(lambda r: httpx.Response(500))).info
    assert (info.name, info.api_key) == ("semantic_scholar", "optional")
    assert info.api_key_setting == "SCHOLARSTREAM_SOURCES__SEMANTIC_SCHOLAR_API_KEY"
    assert "1 request/s" in info.rate_limit
    assert {"mode", "sort", "year", "publicationTypes"} <= set(info.filters)
