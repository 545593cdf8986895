"""OpenAlex against real recorded /works bodies (peneira's 49-work page and findpapers'
65,899-match sample), served through a MockTransport."""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Sequence
from typing import Any

import httpx
import pytest

from scholarstream.errors import SourceQueryError, SourceUnavailableError
from scholarstream.papers import Paper, Record
from scholarstream.sources import OpenAlexSource, SearchQuery, build_source, rebuild_abstract
from tests.sources.conftest import MakeContext, Recorder, fixture_path

PENEIRA = ("openalex_works_peneira", "works.json")
SAMPLE = ("findpapers_collected_samples", "openalex", "sample_response.json")


def load(parts: tuple[str, ...]) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(fixture_path(*parts).read_text(encoding="utf-8"))
    return data


def serve(body: dict[str, Any]) -> Recorder:
    return Recorder(lambda request: httpx.Response(200, json=body))


def papers(records: Sequence[Record]) -> list[Paper]:
    found = [r for r in records if isinstance(r, Paper)]
    assert len(found) == len(records)
    return found


async def test_search_maps_a_real_work_and_sends_query_filters_dates_and_mailto(
    make_context: MakeContext,
) -> None:
    recorder = serve(load(PENEIRA))
    source = OpenAlexSource(make_context(recorder, contact_email="me@example.org"))

    page = await source.search(
        SearchQuery(
            text='"machine learning" AND "public health"',
            limit=50,
            date_from=dt.date(2014, 1, 1),
            date_to=dt.date(2023, 12, 31),
            filters={"type": "article", "is_oa": "true"},
        )
    )

    (request,) = recorder.requests
    assert request.url.host == "api.openalex.org"
    assert request.url.path == "/works"
    params = request.url.params
    assert params["search"] == '"machine learning" AND "public health"'
    assert params["filter"] == (
        "type:article,is_oa:true,from_publication_date:2014-01-01,to_publication_date:2023-12-31"
    )
    assert params["per-page"] == "50"
    assert params["cursor"] == "*"
    assert params["mailto"] == "me@example.org"
    assert "abstract_inverted_index" in params["select"].split(",")
    assert "sort" not in params
    assert "api_key" not in params

    assert page.source == "openalex"
    assert page.total == 49
    assert page.next_page_token is None  # this recorded page has no next cursor
    records = papers(page.records)
    assert len(records) == 49

    first = records[0]
    assert first.ids.openalex_id == "W2068311567"
    assert first.ids.doi == "10.4081/gh.2014.294"
    assert first.ids.pmid == "25599636"
    assert first.title.startswith("Redefining climate regions in the United States of America")
    assert first.abstract is not None
    assert first.abstract.startswith(
        "Existing climate classification has not been designed for an efficient handling"
    )
    assert first.abstract.endswith(
        "Its utility in forecasting and mitigating these effects has to be further explored."
    )
    assert [a.name for a in first.authors] == ["Alexander Liss", "Magaly Koch", "Elena N. Naumova"]
    koch = first.authors[1]
    assert (koch.family, koch.given, koch.orcid) == ("Koch", "Magaly", "0000-0002-6186-1619")
    assert koch.affiliations == [
        "Institute for Forecasting",
        "Center For Remote Sensing (United States)",
        "Boston University",
    ]
    assert first.authors[0].orcid is None
    assert first.venue == "Geospatial Health"
    assert (first.volume, first.issue, first.pages) == ("8", "3", "467")
    assert first.publisher == "PAGEPress (Italy)"
    assert first.issn == "1827-1987"
    assert first.language == "en"
    assert first.published == dt.date(2014, 12, 1)
    assert first.year == 2014
    assert first.publication_types == ["article"]
    assert first.citation_count == 8
    assert first.retraction is None
    assert first.keywords[0] == "Exposure Assessment"
    assert "Impact of Climate Change on Human Health" in first.keywords
    assert "Artificial Intelligence" in first.mesh_terms
    assert {(link.kind, link.url) for link in first.links} >= {
        ("landing", "https://doi.org/10.4081/gh.2014.294"),
        ("pdf", "https://www.geospatialhealth.net/index.php/gh/article/download/294/291"),
        ("source", "https://openalex.org/W2068311567"),
    }
    assert [(p.source, p.source_id) for p in first.provenance] == [("openalex", "W2068311567")]

    second = records[1]
    assert second.ids.pmcid == "PMC6258996"
    assert second.ids.pmid == "30301301"
    types = {p.publication_types[0] for p in records}
    assert {"article", "preprint", "book-chapter", "peer-review", "dissertation"} <= types


async def test_cursor_paging_across_two_pages(make_context: MakeContext) -> None:
    # The recorded bodies were paged by page number, so the first is given a next cursor.
    first_body = load(SAMPLE)
    first_body["meta"]["next_cursor"] = "IlsxNzA0MDY3MjAwMDAwLCAnVzQzMjc1MTAyMDUnXSI="
    second_body = load(PENEIRA)

    def handler(request: httpx.Request) -> httpx.Response:
        cursor = request.url.params["cursor"]
        return httpx.Response(200, json=first_body if cursor == "*" else second_body)

    recorder = Recorder(handler)
    source = OpenAlexSource(make_context(recorder))
    query = SearchQuery(text="nlp", limit=500, filters={"sort": "publication_date:desc"})

    page1 = await source.search(query)
    assert page1.total == 65899
    assert len(page1.records) == 50
    assert papers(page1.records)[0].ids.openalex_id == "W4327510205"
    assert papers(page1.records)[0].title == (
        "ELT in the Age of Artiﬁcial Intelligence (AI): Working with Machines"
    )
    assert page1.next_page_token == "IlsxNzA0MDY3MjAwMDAwLCAnVzQzMjc1MTAyMDUnXSI="

    page2 = await source.search(query.model_copy(update={"page_token": page1.next_page_token}))
    assert papers(page2.records)[0].ids.openalex_id == "W2068311567"
    assert page2.next_page_token is None

    first_request, second_request = recorder.requests
    assert first_request.url.params["cursor"] == "*"
    assert second_request.url.params["cursor"] == page1.next_page_token
    for request in recorder.requests:
        assert request.url.params["per-page"] == "200"  # capped at OpenAlex's maximum
        assert request.url.params["sort"] == "publication_date:desc"
        assert "filter" not in request.url.params
        assert "mailto" not in request.url.params


async def test_unknown_filter_is_refused_before_any_request(make_context: MakeContext) -> None:
    recorder = serve(load(PENEIRA))
    source = OpenAlexSource(make_context(recorder))
    with pytest.raises(SourceQueryError, match="no filter 'journal'") as caught:
        await source.search(SearchQuery(text="x", filters={"journal": "Nature"}))
    assert caught.value.hint is not None and "is_oa" in caught.value.hint
    assert recorder.requests == []


async def test_is_retracted_becomes_a_retraction(make_context: MakeContext) -> None:
    body = load(PENEIRA)
    body["results"][2]["is_retracted"] = True
    source = OpenAlexSource(make_context(serve(body)))
    records = papers((await source.search(SearchQuery(text="x"))).records)
    assert records[2].retraction is not None
    assert "retracted" in records[2].retraction.notice
    assert [r.retraction for i, r in enumerate(records) if i != 2] == [None] * 48


async def test_fetch_by_work_ids_and_dois_in_requested_order(make_context: MakeContext) -> None:
    works = load(PENEIRA)["results"]

    def handler(request: httpx.Request) -> httpx.Response:
        field, _, values = request.url.params["filter"].partition(":")
        wanted = set(values.split("|"))
        key = {"openalex": "id", "doi": "doi"}[field]
        hits = [
            w
            for w in works
            if (w[key] or "").removeprefix("https://openalex.org/").removeprefix("https://doi.org/")
            in wanted
        ]
        return httpx.Response(200, json={"meta": {"count": len(hits)}, "results": hits})

    recorder = Recorder(handler)
    source = OpenAlexSource(make_context(recorder))
    records = papers(
        await source.fetch(
            [
                "https://doi.org/10.2196/11456",
                "W2068311567",
                "https://openalex.org/W789391616",
                "W1",  # unknown to OpenAlex: left out
                "not an id",
            ]
        )
    )

    assert [r.ids.openalex_id for r in records] == ["W2919797988", "W2068311567", "W789391616"]
    ids_request, doi_request = recorder.requests
    assert ids_request.url.params["filter"] == "openalex:W2068311567|W789391616|W1"
    assert ids_request.url.params["per-page"] == "3"
    assert doi_request.url.params["filter"] == "doi:10.2196/11456"


async def test_fetch_batches_many_ids(make_context: MakeContext) -> None:
    recorder = Recorder(lambda r: httpx.Response(200, json={"meta": {}, "results": []}))
    source = OpenAlexSource(make_context(recorder))
    assert await source.fetch([f"W{n}" for n in range(1, 121)]) == []
    assert [len(r.url.params["filter"].split("|")) for r in recorder.requests] == [50, 50, 20]


async def test_unreadable_body_is_reported(make_context: MakeContext) -> None:
    source = OpenAlexSource(
        make_context(lambda r: httpx.Response(200, text="<html>maintenance</html>"))
    )
    with pytest.raises(SourceUnavailableError, match="could not read"):
        await source.search(SearchQuery(text="x"))


async def test_api_key_is_sent_when_configured(make_context: MakeContext) -> None:
    recorder = serve(load(PENEIRA))
    source = OpenAlexSource(make_context(recorder, openalex_api_key="oa-key"))
    await source.search(SearchQuery(text="x"))
    assert recorder.requests[0].url.params["api_key"] == "oa-key"
    assert source.info.api_key == "optional"
    assert source.info.api_key_setting == "SCHOLARSTREAM_SOURCES__OPENALEX_API_KEY"

    await OpenAlexSource(make_context(recorder)).search(SearchQuery(text="x"))
    assert "api_key" not in recorder.requests[1].url.params


def test_registered_with_info(make_context: MakeContext) -> None:
    source = build_source("openalex", make_context(serve({})))
    info = source.info
    assert (info.name, info.label, info.configured) == ("openalex", "OpenAlex", True)
    assert "AND, OR and NOT" in info.query_syntax
    assert {"type", "is_oa", "sort"} <= set(info.filters)


def test_rebuild_abstract_orders_words_by_position() -> None:
    assert rebuild_abstract({"world": [1], "hello": [0, 2]}) == "hello world hello"
    assert rebuild_abstract(None) is None
    assert rebuild_abstract({}) is None
