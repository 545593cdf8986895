"""Crossref against real recorded REST API bodies: habanero's /works cursor and query
pages and /works/{doi} records (plus its real 404), and CoLRev's /works/{doi} records."""

from __future__ import annotations

import copy
import datetime as dt
import json
from collections.abc import Sequence
from typing import Any

import httpx
import pytest

from scholarstream.errors import SourceQueryError
from scholarstream.papers import Paper, Record
from scholarstream.sources import CrossrefSource, SearchQuery, build_source, jats_to_text
from tests.sources.conftest import FakeClock, MakeContext, Recorder, fixture_path

HABANERO = "crossref_works_habanero"
COLREV = "crossref_works_colrev"


def load(*parts: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(fixture_path(*parts).read_text(encoding="utf-8"))
    return data


def papers(records: Sequence[Record]) -> list[Paper]:
    found = [r for r in records if isinstance(r, Paper)]
    assert len(found) == len(records)
    return found


async def test_search_maps_works_and_sends_query_filters_dates_and_mailto(
    make_context: MakeContext,
) -> None:
    body = load(HABANERO, "test_cursor.0.json")
    recorder = Recorder(lambda request: httpx.Response(200, json=body))
    source = CrossrefSource(make_context(recorder, contact_email="me@example.org"))

    page = await source.search(
        SearchQuery(
            text="widget",
            limit=20,
            date_from=dt.date(2000, 1, 1),
            date_to=dt.date(2024, 6, 30),
            filters={
                "type": "book-chapter",
                "has-abstract": "false",
                "query.author": "smith",
                "sort": "published",
                "order": "desc",
            },
        )
    )

    (request,) = recorder.requests
    assert (request.url.host, request.url.path) == ("api.crossref.org", "/works")
    params = request.url.params
    assert params["query"] == "widget"
    assert params["filter"] == (
        "type:book-chapter,has-abstract:false,from-pub-date:2000-01-01,until-pub-date:2024-06-30"
    )
    assert (params["rows"], params["cursor"], params["mailto"]) == ("20", "*", "me@example.org")
    assert (params["query.author"], params["sort"], params["order"]) == (
        "smith",
        "published",
        "desc",
    )

    assert page.total == 454
    assert page.next_page_token == body["message"]["next-cursor"]
    assert page.next_page_token is not None and page.next_page_token.startswith("DnF1ZXJ5")
    records = papers(page.records)
    assert len(records) == 20

    first = records[0]
    assert first.ids.doi == "10.1007/978-1-4302-0197-7_9"
    assert first.title == "Widget Mania: Using a GUI Widget Framework"
    assert first.venue == "Practical JavaScript™, DOM Scripting, and Ajax Projects"
    assert (first.publisher, first.pages, first.language) == ("Apress", "305-349", "en")
    assert first.publication_types == ["book-chapter"]
    assert (first.year, first.published) == (None, None)  # issued: [[null]]
    assert first.citation_count == 0
    assert {(link.kind, link.url) for link in first.links} == {
        ("landing", "http://link.springer.com/10.1007/978-1-4302-0197-7_9"),
        ("doi", "https://doi.org/10.1007/978-1-4302-0197-7_9"),
    }
    assert [(p.source, p.source_id) for p in first.provenance] == [
        ("crossref", "10.1007/978-1-4302-0197-7_9")
    ]

    by_doi = {r.ids.doi: r for r in records}
    year_month = by_doi["10.1109/afrcon.2009.5308146"]  # issued [[2009, 9]]
    assert (year_month.year, year_month.published) == (2009, None)
    year_only = by_doi["10.1007/978-1-4842-6700-4_5"]  # issued [[2020]]
    assert (year_only.year, year_only.published) == (2020, None)
    full = by_doi["10.1093/oed/5229773278"]  # issued [[2023, 3, 2]]
    assert (full.year, full.published) == (2023, dt.date(2023, 3, 2))


async def test_cursor_paging_across_two_pages(make_context: MakeContext) -> None:
    first_body = load(HABANERO, "test_cursor.0.json")
    last_body = load(HABANERO, "test_works_query.0.json")  # 2 items: shorter than a page
    cursor = first_body["message"]["next-cursor"]

    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(
            200, json=first_body if request.url.params["cursor"] == "*" else last_body
        )

    recorder = Recorder(handler)
    source = CrossrefSource(make_context(recorder))
    query = SearchQuery(text="widget", limit=20)

    page1 = await source.search(query)
    page2 = await source.search(query.model_copy(update={"page_token": page1.next_page_token}))

    assert page1.next_page_token == cursor
    assert recorder.requests[1].url.params["cursor"] == cursor
    assert "mailto" not in recorder.requests[0].url.params
    assert "filter" not in recorder.requests[0].url.params
    assert page2.next_page_token is None
    assert page2.total == 586628
    second = papers(page2.records)
    assert [r.ids.doi for r in second] == [r["DOI"] for r in last_body["message"]["items"]]
    assert not {r.ids.doi for r in second} & {r.ids.doi for r in papers(page1.records)}


async def test_fetch_by_doi_leaves_out_a_404(make_context: MakeContext, clock: FakeClock) -> None:
    not_found = fixture_path(HABANERO, "test_works_bad_id_warn.0.txt").read_text()
    bodies = {
        "/works/10.1177/02683962211048201": load(COLREV, "10.1177_02683962211048201.json"),
        "/works/10.2196/22081": load(COLREV, "10.2196_22081.json"),
    }

    def handler(request: httpx.Request) -> httpx.Response:
        body = bodies.get(request.url.path)
        if body is None:
            return httpx.Response(404, text=not_found)
        return httpx.Response(200, json=body)

    recorder = Recorder(handler)
    source = CrossrefSource(make_context(recorder, contact_email="me@example.org"))
    records = papers(
        await source.fetch(
            [
                "https://doi.org/10.1177/02683962211048201",
                "10.1371/notarealdoi",
                "doi:10.2196/22081",
                "not a doi",
            ]
        )
    )

    assert [r.url.path for r in recorder.requests] == [
        "/works/10.1177/02683962211048201",
        "/works/10.1371/notarealdoi",
        "/works/10.2196/22081",
    ]
    assert all(r.url.params["mailto"] == "me@example.org" for r in recorder.requests)
    # Polite pool: 8 requests/s, so each call after the first waited 1/8 s.
    assert clock.sleeps == [0.125, 0.125]
    assert [r.ids.doi for r in records] == ["10.1177/02683962211048201", "10.2196/22081"]

    review = records[0]
    assert review.title == "Artificial intelligence and the conduct of literature reviews"
    assert review.abstract is not None
    assert review.abstract.startswith(
        "Artificial intelligence (AI) is beginning to transform traditional research practices"
    )
    assert "<" not in review.abstract
    assert [a.name for a in review.authors] == [
        "Wagner, Gerit",
        "Lukyanenko, Roman",
        "Paré, Guy",
    ]
    assert review.authors[2].orcid == "0000-0001-7425-1994"
    assert review.authors[0].affiliations == [
        "Department of Information Technologies, HEC Montréal, Montréal, Québec, Canada"
    ]
    assert review.venue == "Journal of Information Technology"
    assert (review.volume, review.issue, review.pages) == ("37", "2", "209-226")
    assert (review.publisher, review.issn) == ("SAGE Publications", "0268-3962")
    assert review.published == dt.date(2021, 10, 8)
    assert review.keywords == [
        "Library and Information Sciences",
        "Strategy and Management",
        "Information Systems",
    ]
    assert review.citation_count == 16
    assert ("pdf", "http://journals.sagepub.com/doi/pdf/10.1177/02683962211048201") in {
        (link.kind, link.url) for link in review.links
    }

    jmir = records[1]
    assert jmir.abstract is not None
    assert jmir.abstract.startswith("Background: The COVID-19 crisis has drastically changed")
    assert "\n\nObjective: This study aims at identifying the determinants" in jmir.abstract
    assert "\n\nConclusions: Teleconsultation is central to care going forward" in jmir.abstract
    assert jmir.authors[0].family == "Grenier Ouimet"


async def test_organisation_authors_and_abstract_heading(make_context: MakeContext) -> None:
    served = iter(
        [
            load(COLREV, "10.17705_1cais.04607.json"),
            load(HABANERO, "test_works_with_many_ids.2.json"),
        ]
    )
    source = CrossrefSource(make_context(lambda r: httpx.Response(200, json=next(served))))
    cais, srep = papers(await source.fetch(["10.17705/1cais.04607", "10.1038/srep16696"]))

    # Some deposits list organisations (here really affiliations) as bare-name authors.
    assert [a.name for a in cais.authors][:2] == ["Schryen, Guido", "Paderborn University"]
    assert cais.authors[1].family is None
    assert (cais.year, cais.published) == (2021, None)  # issued: [[2021]]

    # The JATS "Abstract" heading is dropped, the text kept.
    assert srep.abstract is not None
    assert srep.abstract.startswith("Oligomers of alpha-synuclein are toxic to cells")


async def test_retraction_from_updated_by_but_not_a_correction(
    make_context: MakeContext,
) -> None:
    body = load(HABANERO, "test_works_with_one_id.0.json")
    retracted = copy.deepcopy(body)
    retracted["message"]["updated-by"][0].update(type="retraction", label="Retraction")
    notice = copy.deepcopy(body)
    notice["message"]["update-to"] = [
        {"DOI": "10.1371/journal.pone.0000001", "type": "retraction", "label": "Retraction"}
    ]
    del notice["message"]["updated-by"]
    served = iter([body, retracted, notice])
    source = CrossrefSource(make_context(lambda r: httpx.Response(200, json=next(served))))

    (corrected,) = papers(await source.fetch(["10.1371/journal.pone.0033693"]))
    assert corrected.title.startswith("Methylphenidate Exposure Induces Dopamine Neuron Loss")
    assert corrected.retraction is None  # the recorded update is a correction

    (paper,) = papers(await source.fetch(["10.1371/journal.pone.0033693"]))
    assert paper.retraction is not None
    assert paper.retraction.notice == "Retraction"
    assert paper.retraction.doi == "10.1371/annotation/c76da2c1-ccb8-4797-94c1-359d3ceceeda"
    assert paper.retraction.date == dt.date(2012, 5, 8)

    (notice_paper,) = papers(await source.fetch(["10.1371/journal.pone.0033693"]))
    assert notice_paper.retraction is None
    assert notice_paper.publication_types == ["journal-article", "retraction-notice"]


async def test_unknown_filter_is_refused(make_context: MakeContext) -> None:
    recorder = Recorder(lambda r: httpx.Response(500))
    source = CrossrefSource(make_context(recorder))
    with pytest.raises(SourceQueryError, match="no filter 'journal'"):
        await source.search(SearchQuery(text="x", filters={"journal": "Nature"}))
    assert recorder.requests == []


def test_jats_to_text() -> None:
    jats = (
        "<jats:sec><jats:title>Methods</jats:title><jats:p>We used <jats:italic>x</jats:italic>"
        " &amp; y.</jats:p></jats:sec><jats:sec><jats:title>Results:</jats:title>"
        "<jats:p>P &lt; .05</jats:p></jats:sec>"
    )
    assert jats_to_text(jats) == "Methods: We used x & y.\n\nResults: P < .05"
    assert jats_to_text("Plain text, no tags.") == "Plain text, no tags."
    assert jats_to_text("<jats:p> </jats:p>") is None
    assert jats_to_text(None) is None


def test_registered_with_info(make_context: MakeContext) -> None:
    info = build_source("crossref", make_context(lambda r: httpx.Response(500))).info
    assert (info.name, info.label, info.api_key) == ("crossref", "Crossref", "none")
    assert {"type", "has-abstract", "query.author", "sort"} <= set(info.filters)
    assert "mailto" in info.rate_limit
