"""arXiv against real recorded Atom answers: arxiv.py's q_testing paging set and id_list
answers (including arXiv's error feed, served with its HTTP 400), and findpapers' sample."""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Sequence

import httpx
import pytest

from scholarstream.errors import SourceQueryError, SourceUnavailableError
from scholarstream.papers import Paper, Record
from scholarstream.sources import ArxivSource, SearchQuery, build_source
from tests.sources.conftest import FakeClock, MakeContext, Recorder, fixture_path

ARXIVPY = "arxiv_atom_arxivpy"
ATOM = {"content-type": "application/atom+xml; charset=utf-8"}


def recorded(name: str) -> httpx.Response:
    """A response from one of arxiv.py's JSON-wrapped recordings ({url, status_code, body})."""
    data = json.loads(fixture_path(ARXIVPY, name).read_text(encoding="utf-8"))
    return httpx.Response(data["status_code"], content=data["body"].encode(), headers=ATOM)


def papers(records: Sequence[Record]) -> list[Paper]:
    found = [r for r in records if isinstance(r, Paper)]
    assert len(found) == len(records)
    return found


async def test_search_pages_through_two_recorded_pages(
    make_context: MakeContext, clock: FakeClock
) -> None:
    pages = {
        "0": "q_testing_s0_m10_bc5a6c384fe9.json",
        "10": "q_testing_s10_m10_34e56e15aaac.json",
    }
    recorder = Recorder(lambda request: recorded(pages[request.url.params["start"]]))
    source = ArxivSource(make_context(recorder))
    query = SearchQuery(text="testing", limit=10, filters={"sortBy": "relevance"})

    page1 = await source.search(query)
    page2 = await source.search(query.model_copy(update={"page_token": page1.next_page_token}))

    first_request, second_request = recorder.requests
    assert (first_request.url.host, first_request.url.path) == ("export.arxiv.org", "/api/query")
    assert first_request.url.params["search_query"] == "testing"
    assert first_request.url.params["max_results"] == "10"
    assert first_request.url.params["sortBy"] == "relevance"
    assert "sortOrder" not in first_request.url.params
    assert (first_request.url.params["start"], second_request.url.params["start"]) == ("0", "10")
    # arXiv asks for 3 s between calls.
    assert clock.sleeps == [pytest.approx(3.0)]

    assert page1.total == 214881
    assert page1.next_page_token == "10"
    assert page2.next_page_token == "20"
    one, two = papers(page1.records), papers(page2.records)
    assert len(one) == len(two) == 10
    assert not {p.ids.arxiv_id for p in one} & {p.ids.arxiv_id for p in two}

    first = one[0]
    assert first.ids.arxiv_id == "2202.12139"  # the feed's id carries v1
    assert first.ids.doi == "10.1109/icstw55395.2022.00035"
    assert first.title == (
        "Testing Deep Learning Models: A First Comparative Study of Multiple Testing Techniques"
    )
    assert first.abstract is not None
    assert first.abstract.startswith("Deep Learning (DL) has revolutionized the capabilities")
    assert [a.name for a in first.authors] == [
        "Mohit Kumar Ahuja",
        "Arnaud Gotlieb",
        "Helge Spieker",
    ]
    assert (first.authors[0].family, first.authors[0].given) == ("Ahuja", "Mohit Kumar")
    assert first.venue is not None
    assert first.venue.startswith("Artificial Intelligence in Software Testing @ 2022 IEEE")
    assert first.published == dt.date(2022, 2, 24)
    assert first.year == 2022
    assert first.keywords == ["cs.SE", "cs.LG"]
    assert first.publication_types == ["preprint"]
    assert [(link.kind, link.url) for link in first.links] == [
        ("landing", "https://arxiv.org/abs/2202.12139v1"),
        ("pdf", "https://arxiv.org/pdf/2202.12139v1"),
        ("doi", "https://doi.org/10.1109/icstw55395.2022.00035"),
    ]
    assert [(p.source, p.source_id) for p in first.provenance] == [("arxiv", "2202.12139")]


async def test_date_range_is_appended_as_submitted_date(make_context: MakeContext) -> None:
    sample = fixture_path("findpapers_collected_samples", "arxiv", "sample_response.xml")
    recorder = Recorder(
        lambda request: httpx.Response(200, content=sample.read_bytes(), headers=ATOM)
    )
    source = ArxivSource(make_context(recorder))
    page = await source.search(
        SearchQuery(
            text="(all:deep AND all:learning) OR cat:cs.CL",
            limit=50,
            date_from=dt.date(2020, 1, 1),
            date_to=dt.date(2022, 12, 31),
            filters={"sortBy": "submittedDate", "sortOrder": "descending"},
        )
    )
    params = recorder.requests[0].url.params
    assert params["search_query"] == (
        "((all:deep AND all:learning) OR cat:cs.CL) AND "
        "submittedDate:[202001010000 TO 202212312359]"
    )
    assert (params["sortBy"], params["sortOrder"]) == ("submittedDate", "descending")
    assert page.total == 96778
    assert len(page.records) == 50
    assert page.next_page_token == "50"
    first = papers(page.records)[0]
    assert first.ids.arxiv_id == "2301.00306"
    assert first.title.startswith("Strong Partitioning and a Machine Learning Approximation")
    assert [a.name for a in first.authors] == [
        "Rohit Kannan",
        "Harsha Nagarajan",
        "Deepjyoti Deka",
    ]
    assert first.keywords == ["math.OC"]
    assert first.published == dt.date(2022, 12, 31)

    await source.search(SearchQuery(text="cat:cs.CL", date_from=dt.date(2024, 3, 5)))
    today = dt.datetime.now(dt.UTC).date().strftime("%Y%m%d")
    assert recorder.requests[1].url.params["search_query"] == (
        f"(cat:cs.CL) AND submittedDate:[202403050000 TO {today}2359]"
    )


async def test_error_feed_becomes_a_query_error(make_context: MakeContext) -> None:
    source = ArxivSource(make_context(lambda r: recorded("id_abc_s0_m100_b79c8dcf6bc3.json")))
    with pytest.raises(SourceQueryError, match="incorrect id format for abc"):
        await source.search(SearchQuery(text="id:abc"))


async def test_unreadable_answer(make_context: MakeContext) -> None:
    source = ArxivSource(make_context(lambda r: httpx.Response(200, text="<html><body>busy")))
    with pytest.raises(SourceUnavailableError, match="could not read"):
        await source.search(SearchQuery(text="x"))


async def test_bad_sort_and_unknown_filters_are_refused(make_context: MakeContext) -> None:
    recorder = Recorder(lambda r: httpx.Response(500))
    source = ArxivSource(make_context(recorder))
    with pytest.raises(SourceQueryError, match="no sortBy 'date'"):
        await source.search(SearchQuery(text="x", filters={"sortBy": "date"}))
    with pytest.raises(SourceQueryError, match="no filter 'category'"):
        await source.search(SearchQuery(text="x", filters={"category": "cs.LG"}))
    assert recorder.requests == []


async def test_fetch_by_id_list(make_context: MakeContext) -> None:
    answers = {
        "0808.05394,1707.08567": "id_0808.05394_1707.08567_s0_m100_42e5aa0ec3af.json",
        "astro-ph/0601001": "id_astro-ph_0601001_s0_m100_3150dca9dc76.json",
    }

    def handler(request: httpx.Request) -> httpx.Response:
        return recorded(answers[request.url.params["id_list"]])

    recorder = Recorder(handler)
    source = ArxivSource(make_context(recorder))

    # 0808.05394 is well formed but unknown to arXiv: left out of the answer.
    (proceedings,) = papers(await source.fetch(["0808.05394", "arXiv:1707.08567v1", "abc"]))
    assert recorder.requests[0].url.params["id_list"] == "0808.05394,1707.08567"
    assert recorder.requests[0].url.params["max_results"] == "2"
    assert proceedings.ids.arxiv_id == "1707.08567"
    assert proceedings.title == (
        "Proceedings of Workshop AEW10: Concepts in Information Theory and Communications"
    )
    assert len(proceedings.authors) == 34
    assert proceedings.authors[-1].name == "Hirosuke Yamamoto"
    assert proceedings.authors[0].name == "Kees A. Schouhamer Immink"

    (jupiters,) = papers(await source.fetch(["astro-ph/0601001v1"]))
    assert jupiters.ids.arxiv_id == "astro-ph/0601001"
    assert [(a.name, a.affiliations) for a in jupiters.authors] == [
        ("Andrew Gould", ["Ohio State"]),
        ("Susan Dorsher", ["Ohio State"]),
        ("B. Scott Gaudi", ["CfA"]),
        ("Andrzej Udalski", ["Warsaw University Observatory"]),
    ]
    assert jupiters.venue == "ActaAstron.56:1-50,2006"
    assert jupiters.published == dt.date(2006, 1, 2)
    assert jupiters.abstract is not None
    assert jupiters.abstract.startswith("We derive the frequencies of hot Jupiters (HJs)")
    assert "Gould & Morgan (2003)" in jupiters.abstract
    assert "V_max<17.5" in jupiters.abstract

    assert await source.fetch(["not an arxiv id"]) == []
    assert len(recorder.requests) == 2


async def test_fetch_batches_and_an_empty_feed(make_context: MakeContext) -> None:
    recorder = Recorder(lambda r: recorded("id_0000.0000_s0_m100_8b51d9633a68.json"))
    source = ArxivSource(make_context(recorder))
    ids = [f"2101.{n:05d}" for n in range(150)]
    assert await source.fetch(ids) == []
    assert [len(r.url.params["id_list"].split(",")) for r in recorder.requests] == [100, 50]


def test_registered_with_info(make_context: MakeContext) -> None:
    info = build_source("arxiv", make_context(lambda r: httpx.Response(500))).info
    assert (info.name, info.label, info.api_key) == ("arxiv", "arXiv", "none")
    assert "3 seconds" in info.rate_limit
    assert "ti:" in info.query_syntax and "ANDNOT" in info.query_syntax
    assert set(info.filters) == {"sortBy", "sortOrder"}
