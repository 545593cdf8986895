"""Google Scholar through SerpAPI, against a real recorded engine=google_scholar answer
(q=bananas, num=2). SerpAPI's error answers are the one-field bodies it documents."""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Sequence
from typing import Any

import httpx
import pytest

from scholarstream.errors import (
    SourceCredentialsError,
    SourceQueryError,
    SourceUnavailableError,
)
from scholarstream.papers import Paper, Record
from scholarstream.sources import ScholarSource, SearchQuery, build_source, parse_summary
from tests.sources.conftest import MakeContext, Recorder, fixture_path

KEY_ENV = "SCHOLARSTREAM_SOURCES__SERPAPI_API_KEY"


def bananas() -> dict[str, Any]:
    path = fixture_path("serpapi_google_scholar", "google_scholar_bananas_num2.json")
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


def papers(records: Sequence[Record]) -> list[Paper]:
    found = [r for r in records if isinstance(r, Paper)]
    assert len(found) == len(records)
    return found


async def test_without_a_key_it_is_unconfigured_and_refuses_to_search(
    make_context: MakeContext,
) -> None:
    recorder = Recorder(lambda r: httpx.Response(200, json=bananas()))
    source = ScholarSource(make_context(recorder))

    info = source.info
    assert (info.configured, info.api_key, info.api_key_setting) == (False, "required", KEY_ENV)
    assert info.problem is not None and KEY_ENV in info.problem

    with pytest.raises(SourceCredentialsError) as caught:
        await source.search(SearchQuery(text="bananas"))
    assert caught.value.hint is not None and KEY_ENV in caught.value.hint
    assert recorder.requests == []


async def test_search_maps_organic_results_and_sends_key_years_and_paging(
    make_context: MakeContext,
) -> None:
    recorder = Recorder(lambda r: httpx.Response(200, json=bananas()))
    source = ScholarSource(make_context(recorder, serpapi_api_key="serp-key"))
    assert source.info.configured is True
    assert source.info.problem is None

    page = await source.search(
        SearchQuery(
            text="bananas",
            limit=2,
            date_from=dt.date(1950, 6, 1),
            date_to=dt.date(2015, 1, 31),
            filters={"hl": "en", "as_vis": "1"},
        )
    )

    (request,) = recorder.requests
    assert (request.url.host, request.url.path) == ("serpapi.com", "/search.json")
    params = request.url.params
    assert params["engine"] == "google_scholar"
    assert params["q"] == "bananas"
    assert params["api_key"] == "serp-key"
    assert (params["num"], params["start"]) == ("2", "0")
    assert (params["as_ylo"], params["as_yhi"]) == ("1950", "2015")
    assert (params["hl"], params["as_vis"]) == ("en", "1")

    assert page.total == 1140000
    assert page.next_page_token == "2"
    book, evolution = papers(page.records)

    assert book.title == "Bananas and plantains"
    assert [(a.name, a.family, a.given) for a in book.authors] == [
        ("JC Robinson", "Robinson", "JC"),
        ("VG Saúco", "Saúco", "VG"),
    ]
    assert (book.year, book.venue) == (2010, None)
    assert book.publication_types == ["Book"]
    assert book.citation_count == 1179
    # The "abstract" is Scholar's snippet, kept as given.
    assert book.abstract is not None
    assert book.abstract.startswith("… created by the European CMO in 1993")
    assert book.links[0].kind == "landing"
    assert book.links[0].url.startswith("https://books.google.com/books?hl=en")
    assert [(p.source, p.source_id) for p in book.provenance] == [
        ("google_scholar", "dyZ4bDycdLQJ")
    ]
    assert book.ids.present() == {}

    assert evolution.title == "The evolution of the bananas."
    assert [a.name for a in evolution.authors] == ["NW Simmonds"]
    assert (evolution.venue, evolution.year) == ("The Evolution of the Bananas.", 1962)
    assert evolution.citation_count == 956
    assert evolution.provenance[0].source_id == "l2aiAreIuHsJ"


async def test_doi_from_a_publisher_link_and_pdf_resources(make_context: MakeContext) -> None:
    # The recorded results carry neither; two are given the shapes SerpAPI uses for them.
    body = bananas()
    body["organic_results"][0]["link"] = "https://onlinelibrary.wiley.com/doi/abs/10.1111/JNU.12852"
    body["organic_results"][0]["resources"] = [
        {"title": "wiley.com", "file_format": "PDF", "link": "https://example.org/a.pdf"},
        {"title": "example.org", "file_format": "HTML", "link": "https://example.org/a"},
    ]
    source = ScholarSource(
        make_context(lambda r: httpx.Response(200, json=body), serpapi_api_key="serp-key")
    )
    first, second = papers((await source.search(SearchQuery(text="bananas"))).records)
    assert first.ids.doi == "10.1111/jnu.12852"
    assert [(link.kind, link.url) for link in first.links] == [
        ("landing", "https://onlinelibrary.wiley.com/doi/abs/10.1111/JNU.12852"),
        ("pdf", "https://example.org/a.pdf"),
        ("full_text", "https://example.org/a"),
    ]
    # A link that is not a DOI URL gives no DOI.
    assert second.ids.doi is None


async def test_second_page_asks_from_the_offset(make_context: MakeContext) -> None:
    recorder = Recorder(lambda r: httpx.Response(200, json=bananas()))
    source = ScholarSource(make_context(recorder, serpapi_api_key="serp-key"))
    page = await source.search(SearchQuery(text="bananas", limit=2, page_token="2"))
    assert recorder.requests[0].url.params["start"] == "2"
    assert "as_ylo" not in recorder.requests[0].url.params
    assert page.next_page_token == "4"

    # Scholar shows nothing past the 1,000th result: no token beyond it, no request past it.
    last = await source.search(SearchQuery(text="bananas", limit=2, page_token="998"))
    assert last.next_page_token is None
    with pytest.raises(SourceQueryError, match="first 1000"):
        await source.search(SearchQuery(text="bananas", page_token="1000"))
    assert len(recorder.requests) == 2


@pytest.mark.parametrize(
    ("status", "error", "expected"),
    [
        (
            401,
            "Invalid API key. Your API key should be here: https://serpapi.com/manage-api-key",
            SourceCredentialsError,
        ),
        (200, "Invalid API key. Your API key should be here: ...", SourceCredentialsError),
        (400, "Unsupported `foo` parameter.", SourceQueryError),
        (200, "Your account has run out of searches.", SourceUnavailableError),
    ],
)
async def test_error_bodies(
    make_context: MakeContext, status: int, error: str, expected: type[Exception]
) -> None:
    source = ScholarSource(
        make_context(
            lambda r: httpx.Response(status, json={"error": error}), serpapi_api_key="serp-key"
        )
    )
    with pytest.raises(expected) as caught:
        await source.search(SearchQuery(text="bananas"))
    assert error in str(caught.value)


async def test_no_results_is_an_empty_page(make_context: MakeContext) -> None:
    body = {
        "search_metadata": {"status": "Success"},
        "error": "Google hasn't returned any results for this query.",
    }
    source = ScholarSource(
        make_context(lambda r: httpx.Response(200, json=body), serpapi_api_key="serp-key")
    )
    page = await source.search(SearchQuery(text="qwxzv plmokn"))
    assert (page.records, page.total, page.next_page_token) == ([], 0, None)


async def test_fetch_has_no_lookup_by_id(make_context: MakeContext) -> None:
    recorder = Recorder(lambda r: httpx.Response(500))
    source = ScholarSource(make_context(recorder, serpapi_api_key="serp-key"))
    assert await source.fetch(["dyZ4bDycdLQJ"]) == []
    assert recorder.requests == []


async def test_unknown_filter_is_refused(make_context: MakeContext) -> None:
    recorder = Recorder(lambda r: httpx.Response(500))
    source = ScholarSource(make_context(recorder, serpapi_api_key="serp-key"))
    with pytest.raises(SourceQueryError, match="no filter 'engine'"):
        await source.search(SearchQuery(text="x", filters={"engine": "google"}))
    assert recorder.requests == []


@pytest.mark.parametrize(
    ("summary", "authors", "venue", "year"),
    [
        (
            "JC Robinson, VG Saúco - 2010 - books.google.com",
            ["JC Robinson", "VG Saúco"],
            None,
            2010,
        ),
        (
            "NW Simmonds - The Evolution of the Bananas., 1962 - cabdirect.org",
            ["NW Simmonds"],
            "The Evolution of the Bananas.",
            1962,
        ),
        ("A Smith, B Jones… - Nature, 2020 - nature.com", ["A Smith"], "Nature", 2020),
        ("A Lee - The Lancet …, 2018 - thelancet.com", ["A Lee"], "The Lancet", 2018),
        ("K Lee - arxiv.org", ["K Lee"], None, None),
        ("", [], None, None),
    ],
)
def test_parse_summary(
    summary: str, authors: list[str], venue: str | None, year: int | None
) -> None:
    parsed = parse_summary(summary)
    assert (parsed.authors, parsed.venue, parsed.year) == (authors, venue, year)


def test_registered_with_info(make_context: MakeContext) -> None:
    info = build_source("google_scholar", make_context(lambda r: httpx.Response(500))).info
    assert (info.name, info.label) == ("google_scholar", "Google Scholar (SerpAPI)")
    assert "snippet" in info.description
    assert "as_ylo" in info.query_syntax
