"""The ClinicalTrials.gov source against real API v2 study bodies (AACT's recorded
``/api/v2/studies/{nctId}`` answers; a search page wraps them as the API does)."""

from __future__ import annotations

import asyncio
import datetime as dt
import itertools
import json
from collections.abc import Sequence

import httpx
import pytest

from scholarstream.errors import SourceQueryError
from scholarstream.papers import Intervention, Outcome, Trial
from scholarstream.sources import (
    LiteratureSource,
    SearchQuery,
    build_source,
    search_params,
    trial_from_study,
)
from tests.sources.conftest import FIXTURES, FakeClock, MakeContext, Recorder, fixture_path

PAGE_TOKEN = "ZVNj7o2Elu8o3lpoWsfCpvPuj_WQ4g"


def study(nct_id: str) -> dict[str, object]:
    body: dict[str, object] = json.loads(
        fixture_path("clinicaltrials_v2_aact", f"{nct_id}.json").read_text()
    )
    return body


def search_page(nct_ids: Sequence[str], *, total: int, token: str | None) -> bytes:
    page: dict[str, object] = {"studies": [study(n) for n in nct_ids], "totalCount": total}
    if token:
        page["nextPageToken"] = token
    return json.dumps(page).encode()


def trials(make_context: MakeContext, recorder: Recorder) -> LiteratureSource:
    return build_source("clinicaltrials", make_context(recorder))


def serve_studies(request: httpx.Request) -> httpx.Response:
    """``/studies/{nctId}`` from the recorded bodies; unknown ids are 404 as on the API."""
    nct_id = request.url.path.rsplit("/", 1)[-1]
    if not (FIXTURES / "clinicaltrials_v2_aact" / f"{nct_id}.json").exists():
        return httpx.Response(404, json={"message": f"Study {nct_id} not found"})
    return httpx.Response(200, json=study(nct_id))


# --- searching -----------------------------------------------------------------------


async def test_a_search_sends_its_query_filters_and_dates(make_context: MakeContext) -> None:
    body = search_page(["NCT02210780", "NCT03418623"], total=137, token=PAGE_TOKEN)
    recorder = Recorder(lambda request: httpx.Response(200, content=body))

    page = await trials(make_context, recorder).search(
        SearchQuery(
            text="vaccine response",
            limit=25,
            page_token="previous-token",
            date_from=dt.date(2014, 1, 1),
            date_to=dt.date(2015, 12, 31),
            filters={
                "condition": "atopic dermatitis",
                "intervention": "dupilumab",
                "sponsor": "Regeneron",
                "status": "completed, active not recruiting",
                "phase": "2, phase 3",
                "study_type": "interventional",
            },
        )
    )

    (request,) = recorder.requests
    assert str(request.url).startswith("https://clinicaltrials.gov/api/v2/studies?")
    assert dict(request.url.params) == {
        "format": "json",
        "query.term": "vaccine response",
        "query.cond": "atopic dermatitis",
        "query.intr": "dupilumab",
        "query.spons": "Regeneron",
        "filter.overallStatus": "COMPLETED,ACTIVE_NOT_RECRUITING",
        "filter.advanced": "(AREA[Phase]PHASE2 OR AREA[Phase]PHASE3) AND "
        "AREA[StudyType]INTERVENTIONAL AND AREA[StartDate]RANGE[2014-01-01,2015-12-31]",
        "countTotal": "true",
        "pageSize": "25",
        "pageToken": "previous-token",
    }
    assert page.source == "clinicaltrials"
    assert page.total == 137
    assert page.next_page_token == PAGE_TOKEN
    assert [r.ids.nct_id for r in page.records] == ["NCT02210780", "NCT03418623"]


async def test_a_plain_search_sends_only_what_it_needs(make_context: MakeContext) -> None:
    body = search_page(["NCT06171568"], total=1, token=None)
    recorder = Recorder(lambda request: httpx.Response(200, content=body))

    page = await trials(make_context, recorder).search(
        SearchQuery(text="brain injury", date_from=dt.date(2023, 6, 1))
    )

    assert dict(recorder.requests[0].url.params) == {
        "format": "json",
        "query.term": "brain injury",
        "filter.advanced": "AREA[StartDate]RANGE[2023-06-01,MAX]",
        "countTotal": "true",
        "pageSize": "20",
    }
    assert page.next_page_token is None
    (trial,) = page.records
    assert isinstance(trial, Trial)
    assert trial.status == "NOT_YET_RECRUITING"
    assert trial.start_date == dt.date(2024, 2, 1)


@pytest.mark.parametrize(
    ("phase", "advanced"),
    [
        ("3", "AREA[Phase]PHASE3"),
        ("PHASE4", "AREA[Phase]PHASE4"),
        ("early phase 1", "AREA[Phase]EARLY_PHASE1"),
        ("Early 1, N/A", "(AREA[Phase]EARLY_PHASE1 OR AREA[Phase]NA)"),
    ],
)
def test_phases_are_written_as_the_registry_codes_them(phase: str, advanced: str) -> None:
    params = search_params(SearchQuery(text="x", filters={"phase": phase}))

    assert params["filter.advanced"] == advanced


async def test_a_study_without_id_or_title_is_left_out_of_its_page(
    make_context: MakeContext,
) -> None:
    page_body = json.loads(search_page(["NCT02210780"], total=2, token=None))
    page_body["studies"].insert(0, {"protocolSection": {"statusModule": {}}, "hasResults": False})
    body = json.dumps(page_body).encode()

    page = await trials(make_context, Recorder(lambda r: httpx.Response(200, content=body))).search(
        SearchQuery(text="dupilumab")
    )

    assert [r.ids.nct_id for r in page.records] == ["NCT02210780"]


async def test_filters_with_values_the_registry_does_not_have_are_refused(
    make_context: MakeContext,
) -> None:
    recorder = Recorder(lambda request: httpx.Response(200, content=b"{}"))
    source = trials(make_context, recorder)

    with pytest.raises(SourceQueryError, match="no status SLEEPING") as status:
        await source.search(SearchQuery(text="x", filters={"status": "sleeping"}))
    with pytest.raises(SourceQueryError, match="no phase '7'"):
        await source.search(SearchQuery(text="x", filters={"phase": "7"}))
    with pytest.raises(SourceQueryError, match="no study type"):
        await source.search(SearchQuery(text="x", filters={"study_type": "anecdotal"}))
    with pytest.raises(SourceQueryError, match="no filter 'year'"):
        await source.search(SearchQuery(text="x", filters={"year": "2020"}))

    assert status.value.hint is not None
    assert "NOT_YET_RECRUITING" in status.value.hint
    assert recorder.requests == []


async def test_a_page_token_the_api_refuses_is_a_query_error(make_context: MakeContext) -> None:
    recorder = Recorder(lambda request: httpx.Response(400, text="pageToken: invalid value"))

    with pytest.raises(SourceQueryError, match="pageToken: invalid value"):
        await trials(make_context, recorder).search(SearchQuery(text="x", page_token="bogus"))

    assert len(recorder.requests) == 1


# --- records -------------------------------------------------------------------------


def test_a_study_becomes_a_trial_with_all_its_fields() -> None:
    trial = trial_from_study(study("NCT02210780"))

    assert trial.record_id == "NCT02210780"
    assert trial.ids.nct_id == "NCT02210780"
    assert trial.title == (
        "Study of Dupilumab and Immune Responses in Adults With Atopic Dermatitis (AD)"
    )
    assert trial.official_title is not None
    assert trial.official_title.startswith("A Randomized, Double-Blind, Placebo-Controlled")
    assert trial.summary is not None
    assert trial.summary.startswith("This was a 32-week, randomized, double-blind")
    assert trial.status == "COMPLETED"
    assert trial.phases == ["PHASE2"]
    assert trial.study_type == "INTERVENTIONAL"
    assert trial.conditions == ["Atopic Dermatitis"]
    assert trial.interventions == [
        Intervention(name="Dupilumab", type="DRUG"),
        Intervention(name="Placebo", type="DRUG"),
    ]
    assert trial.sponsor == "Regeneron Pharmaceuticals"
    assert trial.collaborators == ["Sanofi"]
    assert trial.enrollment == 194
    assert trial.start_date == dt.date(2014, 8, 5)
    assert trial.primary_completion_date == dt.date(2015, 9, 15)
    assert trial.completion_date == dt.date(2015, 9, 15)
    assert trial.first_posted == dt.date(2014, 8, 7)
    assert trial.last_updated == dt.date(2020, 5, 7)
    (outcome,) = trial.primary_outcomes
    assert outcome.measure.startswith("Percentage of Participants With a Positive Response")
    assert outcome.time_frame == "Week 16"
    assert outcome.description is not None
    assert outcome.description.startswith("A positive response was defined as")
    assert trial.mesh_terms == ["Dermatitis, Atopic", "Dermatitis", "Eczema"]
    assert trial.has_results is True
    assert trial.year == 2014
    assert [link.url for link in trial.links] == ["https://clinicaltrials.gov/study/NCT02210780"]
    assert [(p.source, p.source_id) for p in trial.provenance] == [
        ("clinicaltrials", "NCT02210780")
    ]


def test_partial_dates_are_the_first_of_their_month() -> None:
    trial = trial_from_study(study("NCT00763412"))

    assert trial.start_date == dt.date(2006, 11, 1)  # "2006-11"
    assert trial.primary_completion_date == dt.date(2013, 1, 1)  # "2013-01"
    assert trial.first_posted == dt.date(2008, 10, 1)
    assert trial.sponsor == "Arbelaez, Ana Maria"
    assert trial.collaborators == [
        "Washington University School of Medicine",
        "National Institutes of Health (NIH)",
        "Novo Nordisk A/S",
        "National Institute of Diabetes and Digestive and Kidney Diseases (NIDDK)",
    ]
    assert trial.phases == ["NA"]
    assert trial.keywords[:3] == ["Cystic Fibrosis", "Diabetes", "Cystic Fibrosis Related Diabetes"]


def test_observational_and_withdrawn_studies() -> None:
    registry = trial_from_study(study("NCT03475563"))
    withdrawn = trial_from_study(study("NCT00973089"))

    assert registry.study_type == "OBSERVATIONAL"
    assert registry.phases == []
    assert registry.interventions == [
        Intervention(name="Coronary angioplasty with stent implantation", type="PROCEDURE")
    ]
    assert registry.mesh_terms == ["Coronary Artery Disease"]
    assert withdrawn.status == "WITHDRAWN"
    assert withdrawn.enrollment == 0
    assert withdrawn.has_results is False
    assert withdrawn.primary_outcomes == [
        Outcome(
            measure="The success of the alternative treatment of the deep carious lesion.",
            time_frame="Half annually for three years",
        )
    ]


def test_a_study_with_only_its_identification_is_still_a_trial() -> None:
    trial = trial_from_study(study("NCT00465816"))

    assert trial.title == "Primary Study to Demonstrate..."
    assert trial.official_title == "Non-inferiority of GSK Biologicals..."
    assert trial.has_results is True
    assert (trial.status, trial.sponsor, trial.start_date) == (None, None, None)
    assert trial.interventions == []


# --- fetching by NCT id --------------------------------------------------------------


async def test_fetch_asks_for_each_study_and_leaves_out_unknown_ones(
    make_context: MakeContext,
) -> None:
    recorder = Recorder(serve_studies)

    records = await trials(make_context, recorder).fetch(
        ["NCT02210780", "nct03418623", "NCT09999999", "not an id", "NCT02210780"]
    )

    assert sorted(r.url.path for r in recorder.requests) == [
        "/api/v2/studies/NCT02210780",
        "/api/v2/studies/NCT03418623",
        "/api/v2/studies/NCT09999999",
    ]
    assert [r.ids.nct_id for r in records] == ["NCT02210780", "NCT03418623"]
    second = records[1]
    assert isinstance(second, Trial)
    assert second.sponsor == "Laboratorio Farmaceutico Ct S.r.l."
    assert second.interventions[0] == Intervention(name="GET73", type="DRUG")


async def test_requests_keep_to_about_50_a_minute(
    make_context: MakeContext, clock: FakeClock
) -> None:
    times: list[float] = []

    def handler(request: httpx.Request) -> httpx.Response:
        times.append(clock.now)
        return serve_studies(request)

    source = trials(make_context, Recorder(handler))
    ids = ["NCT02210780", "NCT03418623", "NCT06171568", "NCT05594173"]

    fetched = await asyncio.gather(*(source.fetch([nct_id]) for nct_id in ids))

    assert [f[0].ids.nct_id for f in fetched] == ids
    assert [later - earlier for earlier, later in itertools.pairwise(times)] == (
        pytest.approx([1.2] * 3)
    )


def test_info_describes_the_source(make_context: MakeContext) -> None:
    info = trials(make_context, Recorder(serve_studies)).info

    assert info.record_kind == "trials"
    assert info.api_key == "none"
    assert set(info.filters) == {
        "condition",
        "intervention",
        "sponsor",
        "status",
        "phase",
        "study_type",
    }
    assert "50 requests a minute" in info.rate_limit
