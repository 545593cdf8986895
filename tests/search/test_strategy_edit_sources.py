"""A strategy edited at checkpoint 1 names only sources that exist: an unknown one is
refused when the decision is posted (422, every valid source in the hint, the run still
waiting as it was), not accepted and failed later as a source error. Runs on SQLite and on
PostgreSQL."""

from __future__ import annotations

from typing import Any

from scholarstream.sources import source_names
from tests.search import test_search_api
from tests.search.test_search_api import Client, Servers, decide, start_run, wait_for

servers = test_search_api.servers  # the fixture: the app with its durable engine

CHECKPOINT = "0-strategy_confirmation"
EVERY_SOURCE = sorted({*source_names(), "library"})


def _strategy(*sources: str) -> dict[str, Any]:
    return {
        "queries": [{"source": source, "query": "semaglutide AND obesity"} for source in sources]
    }


def test_a_strategy_edit_naming_an_unknown_source_is_refused_at_the_decision(
    servers: Servers,
) -> None:
    client: Client = servers.start()
    run_id = start_run(client, sources=["pubmed", "openalex"])
    run = wait_for(client, run_id, "waiting", CHECKPOINT)

    refused = decide(
        client, run_id, CHECKPOINT, "edit", revised_data=_strategy("pubmed", "scopus", "wos")
    )
    assert refused.status_code == 422, refused.text
    body = refused.json()
    assert body["code"] == "invalid_input"
    assert body["message"] == "The edited strategy names unknown sources: 'scopus', 'wos'."
    assert body["hint"] == f"Sources: {', '.join(EVERY_SOURCE)}."
    assert "library" in body["hint"]
    # The run still waits at the same checkpoint, and takes a good decision after.
    assert client.get(f"/api/v1/search/runs/{run_id}").json()["pending"] == run["pending"]

    # Starting a run with the same source is refused with the same list.
    start = client.post(
        "/api/v1/search/runs", json={"question": "semaglutide", "sources": ["scopus"]}
    )
    assert start.status_code == 422 and start.json()["hint"] == body["hint"]

    # Any valid source may be named, also one the run did not start with (the library).
    accepted = decide(client, run_id, CHECKPOINT, "edit", revised_data=_strategy("library"))
    assert accepted.status_code == 202, accepted.text
    review = wait_for(client, run_id, "waiting", "0-result_review")
    statuses = review["pending"]["checkpoint"]["payload"]["collection"]["source_statuses"]
    assert [s["source"] for s in statuses] == ["library"]
