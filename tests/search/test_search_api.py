"""The search API: a run is a durable workflow that waits at each checkpoint for a
decision posted over HTTP, refuses bad decisions without losing anything, and survives a
restart of the server while it waits. Runs on SQLite and on PostgreSQL."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest
from dbos import DBOS
from fastapi.testclient import TestClient

from scholarstream.bootstrap import build_engine, create_app
from scholarstream.db import upgrade
from scholarstream.settings import Settings
from tests.helpers import make_runtime
from tests.search.world import QUESTION, LiteratureWorld

SOURCES = ["pubmed", "openalex", "semantic_scholar", "arxiv"]
WAIT_SEC = 60.0  # a healthy step takes well under a second; this only stops a hang

Client = Any  # starlette's TestClient returns httpx responses typed loosely


class Servers:
    """Starts the app with its durable engine (offline skills, recorded sources); starting
    again after ``stop`` is a server restart on the same database."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.running: list[TestClient] = []
        self.world = LiteratureWorld()

    def start(self) -> TestClient:
        DBOS.destroy(destroy_registry=False)
        runtime = make_runtime(self.settings, source_transport=self.world.transport())
        app = create_app(runtime, engine=build_engine(runtime))
        client = TestClient(app, base_url="http://127.0.0.1")
        client.__enter__()
        self.running.append(client)
        return client

    def stop(self, client: TestClient) -> None:
        self.running.remove(client)
        client.__exit__(None, None, None)


@pytest.fixture
def servers(db_settings: Settings) -> Iterator[Servers]:
    upgrade(db_settings.app_database_url)
    servers = Servers(db_settings)
    yield servers
    for client in list(servers.running):
        servers.stop(client)
    DBOS.destroy(destroy_registry=False)


def start_run(client: Client, **body: Any) -> str:
    response = client.post("/api/v1/search/runs", json={"question": QUESTION, **body})
    assert response.status_code == 202, response.text
    run_id: str = response.json()["id"]
    return run_id


def wait_for(client: Client, run_id: str, status: str, checkpoint: str | None = None) -> Any:
    deadline = time.monotonic() + WAIT_SEC
    while True:
        run = client.get(f"/api/v1/search/runs/{run_id}").json()
        pending = (run.get("pending") or {}).get("id")
        if run["status"] == status and (checkpoint is None or pending == checkpoint):
            return run
        if run["status"] in ("failed", "completed") and run["status"] != status:
            pytest.fail(f"run ended {run['status']}: {run.get('error')}")
        if time.monotonic() > deadline:
            pytest.fail(f"run did not reach {status} {checkpoint or ''}: {run}")
        time.sleep(0.05)


def decide(client: Client, run_id: str, checkpoint_id: str, action: str, **extra: Any) -> Any:
    return client.post(
        f"/api/v1/search/runs/{run_id}/decisions",
        json={"checkpoint_id": checkpoint_id, "action": action, **extra},
    )


def test_a_run_waits_for_each_decision_and_refuses_bad_ones(servers: Servers) -> None:
    client: Client = servers.start()
    run_id = start_run(client, sources=SOURCES)

    run = wait_for(client, run_id, "waiting", "0-strategy_confirmation")
    checkpoint = client.get(f"/api/v1/search/runs/{run_id}/checkpoint").json()
    assert checkpoint["checkpoint"]["kind"] == "strategy_confirmation"
    strategy = checkpoint["checkpoint"]["payload"]["strategy"]
    assert {q["source"] for q in strategy["queries"]} == set(SOURCES)

    # Bad decisions: each refused with a clear 4xx, and the run still waits as it was.
    stale = decide(client, run_id, "3-result_review", "approve")
    assert stale.status_code == 409 and "0-strategy_confirmation" in stale.json()["message"]
    invalid = decide(
        client, run_id, "0-strategy_confirmation", "edit", revised_data={"queries": []}
    )
    assert invalid.status_code == 422 and "strategy is not valid" in invalid.json()["message"]
    unknown_action = decide(client, run_id, "0-strategy_confirmation", "maybe")
    assert unknown_action.status_code == 422
    assert client.get(f"/api/v1/search/runs/{run_id}").json()["pending"] == run["pending"]

    assert decide(client, run_id, "0-strategy_confirmation", "approve").status_code == 202
    again = decide(client, run_id, "0-strategy_confirmation", "approve")
    assert again.status_code == 409, "a checkpoint takes one decision"

    run = wait_for(client, run_id, "waiting", "0-result_review")
    papers = run["pending"]["checkpoint"]["payload"]["collection"]["papers"]
    assert papers and run["collection"]["papers"] == papers
    assert all(p["reason"] for p in papers)

    not_shown = decide(
        client,
        run_id,
        "0-result_review",
        "edit",
        revised_data={"marked_relevant": ["doi:10.9999/not-in-the-results"]},
    )
    assert not_shown.status_code == 422 and "not in the results" in not_shown.json()["message"]

    relevant = [papers[0]["id"], papers[1]["id"]]
    marked = decide(
        client,
        run_id,
        "0-result_review",
        "edit",
        revised_data={"marked_relevant": relevant, "free_text_feedback": "more like these"},
    )
    assert marked.status_code == 202, marked.text
    wait_for(client, run_id, "waiting", "1-strategy_confirmation")
    assert decide(client, run_id, "1-strategy_confirmation", "approve").status_code == 202
    wait_for(client, run_id, "waiting", "1-result_review")
    assert decide(client, run_id, "1-result_review", "approve").status_code == 202

    done = wait_for(client, run_id, "completed")
    labels = {p["id"]: p["label"] for p in done["collection"]["papers"]}
    assert all(labels[pid] == "relevant" for pid in relevant)
    assert [i["outcome"] for i in done["iterations"]] == ["iterated", "approved"]
    assert done["pending"] is None

    finished = decide(client, run_id, "1-result_review", "approve")
    assert finished.status_code == 409 and "completed" in finished.json()["message"]
    assert client.get(f"/api/v1/search/runs/{run_id}/checkpoint").status_code == 404

    ris = client.get(f"/api/v1/search/runs/{run_id}/export", params={"format": "ris"})
    assert ris.status_code == 200 and ris.text.count("ER  -") == len(labels)
    only = client.get(
        f"/api/v1/search/runs/{run_id}/export", params={"format": "csv", "only": "relevant"}
    )
    assert only.status_code == 200 and len(only.text.strip().splitlines()) == 1 + len(relevant)

    listed = client.get("/api/v1/search/runs").json()["runs"]
    assert [r["id"] for r in listed] == [run_id]


@pytest.mark.parametrize("later", ["empty", "failing"])
def test_an_iteration_that_finds_nothing_after_judgements_goes_on_to_the_review(
    servers: Servers, later: str
) -> None:
    client: Client = servers.start()
    run_id = start_run(client, sources=SOURCES)
    wait_for(client, run_id, "waiting", "0-strategy_confirmation")
    assert decide(client, run_id, "0-strategy_confirmation", "approve").status_code == 202
    run = wait_for(client, run_id, "waiting", "0-result_review")
    papers = run["collection"]["papers"]
    relevant, irrelevant = papers[0]["id"], papers[-1]["id"]
    marks = {"marked_relevant": [relevant], "marked_irrelevant": [irrelevant]}
    setattr(servers.world, later, SOURCES)  # the next search finds nothing
    assert decide(client, run_id, "0-result_review", "edit", revised_data=marks).status_code == 202
    wait_for(client, run_id, "waiting", "1-strategy_confirmation")
    assert decide(client, run_id, "1-strategy_confirmation", "approve").status_code == 202

    review = wait_for(client, run_id, "waiting", "1-result_review")
    payload = review["pending"]["checkpoint"]["payload"]
    assert payload["collection"]["papers"] == []
    assert [p["id"] for p in payload["accumulated_papers"]] == [relevant]
    failed = payload["collection"]["stats"]["sources_failed"]
    assert sorted(failed) == (sorted(SOURCES) if later == "failing" else [])
    assert decide(client, run_id, "1-result_review", "approve").status_code == 202

    done = wait_for(client, run_id, "completed")
    assert [(p["id"], p["label"]) for p in done["collection"]["papers"]] == [(relevant, "relevant")]
    assert [i["outcome"] for i in done["iterations"]] == ["iterated", "approved"]
    assert done["iterations"][0]["feedback"]["marked_irrelevant"] == [irrelevant]


def test_bad_requests_are_refused_clearly(servers: Servers) -> None:
    client: Client = servers.start()
    empty = client.post("/api/v1/search/runs", json={"question": "   "})
    assert empty.status_code == 422 and "question" in empty.text
    unknown = client.post(
        "/api/v1/search/runs", json={"question": QUESTION, "sources": ["pubmed", "scopus"]}
    )
    assert unknown.status_code == 422 and "scopus" in unknown.json()["message"]
    missing = client.get("/api/v1/search/runs/00000000-0000-4000-8000-000000000000")
    assert missing.status_code == 404
    assert client.get("/api/v1/search/runs").json()["runs"] == []


def test_a_waiting_run_survives_a_server_restart(servers: Servers) -> None:
    first: Client = servers.start()
    run_id = start_run(first, sources=["pubmed", "arxiv"])
    before = wait_for(first, run_id, "waiting", "0-strategy_confirmation")
    servers.stop(first)

    second: Client = servers.start()
    after = second.get(f"/api/v1/search/runs/{run_id}").json()
    assert after["pending"] == before["pending"]
    assert decide(second, run_id, "0-strategy_confirmation", "approve").status_code == 202
    wait_for(second, run_id, "waiting", "0-result_review")
    assert decide(second, run_id, "0-result_review", "approve").status_code == 202
    done = wait_for(second, run_id, "completed")
    assert done["collection"]["papers"]


def test_cancelling_a_waiting_run_ends_its_workflow(servers: Servers) -> None:
    client: Client = servers.start()
    run_id = start_run(client, sources=["arxiv"])
    wait_for(client, run_id, "waiting", "0-strategy_confirmation")

    cancelled = client.post(f"/api/v1/search/runs/{run_id}/cancel")
    assert cancelled.status_code == 200 and cancelled.json()["status"] == "cancelled"
    refused = decide(client, run_id, "0-strategy_confirmation", "approve")
    assert refused.status_code == 409 and "cancelled" in refused.json()["message"]
    assert client.post(f"/api/v1/search/runs/{run_id}/cancel").status_code == 409

    # The wait is woken, not left to hold the workflow until shutdown.
    deadline = time.monotonic() + WAIT_SEC
    while (status := DBOS.get_workflow_status(f"search-{run_id}")) and status.status == "PENDING":
        assert time.monotonic() < deadline, "the cancelled run's workflow is still waiting"
        time.sleep(0.05)
    assert client.get(f"/api/v1/search/runs/{run_id}").json()["status"] == "cancelled"
