"""Searching by the date a source added its records (issue 20, point 17): a monitoring run
asks each source for what it added since its last run, so a record indexed after a run
with an earlier publication date is still found. Each source that can filter by that
date sends its own parameter; the others say they cannot (``added_date`` is None) and
filter by publication date. Real recorded answers through ``httpx.MockTransport``."""

from __future__ import annotations

import datetime as dt
import json

import httpx
import pytest

from scholarstream.sources import SearchQuery, build_source
from tests.sources.conftest import MakeContext, Recorder, fixture_path

FROM, TO = dt.date(2026, 10, 31), dt.date(2026, 11, 30)
SAMPLES = ("findpapers_collected_samples",)


def recorded(request: httpx.Request) -> httpx.Response:
    host = request.url.host
    if "ncbi" in host:
        path = fixture_path(*SAMPLES, "pubmed", "esearch_response.json")
        if "efetch" in request.url.path:
            path = fixture_path(*SAMPLES, "pubmed", "efetch_response.xml")
        return httpx.Response(200, content=path.read_bytes())
    if "crossref" in host:
        body = fixture_path("crossref_works_habanero", "test_cursor.0.json").read_bytes()
        return httpx.Response(200, content=body)
    if "clinicaltrials" in host:
        study = json.loads(fixture_path("clinicaltrials_v2_aact", "NCT02210780.json").read_text())
        return httpx.Response(200, json={"studies": [study], "totalCount": 1})
    if "arxiv" in host:
        body = fixture_path(*SAMPLES, "arxiv", "sample_response.xml").read_bytes()
        return httpx.Response(200, content=body, headers={"content-type": "application/atom+xml"})
    if "openalex" in host:
        body = fixture_path(*SAMPLES, "openalex", "sample_response.json").read_bytes()
        return httpx.Response(200, content=body)
    if "semanticscholar" in host:
        path = fixture_path(*SAMPLES, "semanticscholar", "relevance_search_response.json")
        return httpx.Response(200, content=path.read_bytes())
    raise AssertionError(f"no recorded answer for {request.url}")


def date_sent(source: str, request: httpx.Request) -> str:
    params = request.url.params
    return {
        "pubmed": lambda: f"{params['datetype']} {params['mindate']}-{params['maxdate']}",
        "crossref": lambda: params["filter"],
        "clinicaltrials": lambda: params["filter.advanced"],
        "arxiv": lambda: params["search_query"].split(" AND ", 1)[1],
        "openalex": lambda: params["filter"],
        "semantic_scholar": lambda: params["publicationDateOrYear"],
    }[source]()


SENT = {
    "pubmed": ("pdat 2026/10/31-2026/11/30", "edat 2026/10/31-2026/11/30"),
    "crossref": (
        "from-pub-date:2026-10-31,until-pub-date:2026-11-30",
        "from-created-date:2026-10-31,until-created-date:2026-11-30",
    ),
    "clinicaltrials": (
        "AREA[StartDate]RANGE[2026-10-31,2026-11-30]",
        "AREA[StudyFirstPostDate]RANGE[2026-10-31,2026-11-30]",
    ),
    # The first version's submission is both the publication and the added date.
    "arxiv": ("submittedDate:[202610310000 TO 202611302359]",) * 2,
    # No filter on when the record was added (OpenAlex's is for paid plans only).
    "openalex": ("from_publication_date:2026-10-31,to_publication_date:2026-11-30",) * 2,
    "semantic_scholar": ("2026-10-31:2026-11-30",) * 2,
}


@pytest.mark.parametrize("source", sorted(SENT))
async def test_each_source_sends_the_date_it_was_asked_for(
    make_context: MakeContext, source: str
) -> None:
    recorder = Recorder(recorded)
    found = build_source(source, make_context(recorder, contact_email="me@example.org"))
    for dates in ("published", "added"):
        query = SearchQuery(text="machine learning", date_from=FROM, date_to=TO, dates=dates)
        page = await found.search(query)
        assert page.records
    searches = [r for r in recorder.requests if "efetch" not in r.url.path]
    assert tuple(date_sent(source, request) for request in searches) == SENT[source]
    can_filter = SENT[source][0] != SENT[source][1] or source == "arxiv"
    assert (found.info.added_date is not None) is can_filter


def test_sources_without_an_added_date_say_so(make_context: MakeContext) -> None:
    context = make_context(recorded, serpapi_api_key="k")
    assert build_source("google_scholar", context).info.added_date is None
    assert build_source("pubmed", context).info.added_date == (
        "Entrez date (EDAT): the day PubMed added the record"
    )
