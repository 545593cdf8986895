"""Searching several sources at once: a source that fails is reported, never hidden, and
never costs the others their records."""

from __future__ import annotations

import json

import httpx

from scholarstream.papers import Paper, Trial
from scholarstream.settings import SourceSettings
from scholarstream.sources import SearchQuery, SourceHttp, SourceHub
from tests.sources.conftest import FakeClock, Handler, Recorder, fixture_path


def pubmed_answers(request: httpx.Request) -> httpx.Response:
    """findpapers' real esearch and efetch answers."""
    name = "esearch_response.json" if "esearch" in request.url.path else "efetch_response.xml"
    return httpx.Response(
        200, content=fixture_path("findpapers_collected_samples", "pubmed", name).read_bytes()
    )


def trials_page(request: httpx.Request) -> httpx.Response:
    """A /studies page wrapping two real study bodies."""
    studies = [
        json.loads(fixture_path("clinicaltrials_v2_aact", f"{nct_id}.json").read_text())
        for nct_id in ("NCT02210780", "NCT05594173")
    ]
    return httpx.Response(200, json={"studies": studies, "totalCount": 2})


def route(*, pubmed: Handler, clinicaltrials: Handler) -> Recorder:
    def handler(request: httpx.Request) -> httpx.Response:
        if request.url.host == "eutils.ncbi.nlm.nih.gov":
            return pubmed(request)
        assert request.url.host == "clinicaltrials.gov"
        return clinicaltrials(request)

    return Recorder(handler)


def hub_for(recorder: Recorder, clock: FakeClock, settings: SourceSettings) -> SourceHub:
    client = httpx.AsyncClient(transport=httpx.MockTransport(recorder))
    http = SourceHttp(client, sleep=clock.sleep, clock=clock, jitter=lambda: 0.5)
    return SourceHub(settings, http)


async def test_a_source_that_is_down_is_reported_and_the_other_answers(
    clock: FakeClock,
) -> None:
    recorder = route(
        pubmed=pubmed_answers,
        clinicaltrials=lambda request: httpx.Response(503, text="Service Unavailable"),
    )
    hub = hub_for(recorder, clock, SourceSettings())

    result = await hub.search(["pubmed", "clinicaltrials"], SearchQuery(text="nlp", limit=50))

    assert len(result.records) == 50
    assert all(isinstance(record, Paper) for record in result.records)
    assert result.records[0].ids.pmid == "36006759"
    pubmed, trials = result.statuses
    assert (pubmed.source, pubmed.ok, pubmed.total, pubmed.returned) == ("pubmed", True, 1834, 50)
    assert pubmed.next_page_token == "50"
    assert pubmed.error_code is None
    assert (trials.source, trials.ok, trials.returned) == ("clinicaltrials", False, 0)
    assert trials.error_code == "source_unavailable"
    assert trials.error is not None
    assert trials.error == (
        "ClinicalTrials.gov answered with an error on its side (HTTP 503 Service Unavailable)."
    )
    assert trials.cause == "server_error"
    assert trials.hint is not None
    assert "try again in a few minutes" in trials.hint
    assert [status.source for status in result.failed] == ["clinicaltrials"]
    clinicaltrials_requests = [r for r in recorder.requests if r.url.host == "clinicaltrials.gov"]
    assert len(clinicaltrials_requests) == 4  # retried before giving up


async def test_a_refused_key_is_reported_with_the_setting_to_fix(clock: FakeClock) -> None:
    refused = json.dumps({"error": "API key invalid", "type": "api-key"}).encode()
    recorder = route(
        pubmed=lambda request: httpx.Response(400, content=refused),
        clinicaltrials=trials_page,
    )
    settings = SourceSettings.model_validate({"ncbi_api_key": "revoked"})
    hub = hub_for(recorder, clock, settings)

    result = await hub.search(
        ["clinicaltrials", "pubmed", "clinicaltrials"], SearchQuery(text="dysphagia")
    )

    assert [r.ids.nct_id for r in result.records] == ["NCT02210780", "NCT05594173"]
    assert all(isinstance(record, Trial) for record in result.records)
    trials, pubmed = result.statuses  # each source once, in the order asked
    assert (trials.ok, trials.total, trials.returned) == (True, 2, 2)
    assert not pubmed.ok
    assert pubmed.error_code == "source_credentials"
    assert pubmed.error is not None
    assert "API key invalid" in pubmed.error
    assert pubmed.hint is not None
    assert "SCHOLARSTREAM_SOURCES__NCBI_API_KEY" in pubmed.hint
    api_keys = {r.url.params.get("api_key") for r in recorder.requests if "esearch" in r.url.path}
    assert api_keys == {"revoked"}


def test_the_hub_builds_each_source_once_and_describes_it(clock: FakeClock) -> None:
    hub = hub_for(route(pubmed=pubmed_answers, clinicaltrials=trials_page), clock, SourceSettings())

    assert hub.get("pubmed") is hub.get("pubmed")
    assert {"pubmed", "clinicaltrials"} <= set(hub.names())
    assert hub.get("pubmed").info.api_key_setting == "SCHOLARSTREAM_SOURCES__NCBI_API_KEY"
    assert hub.get("clinicaltrials").info.record_kind == "trials"
