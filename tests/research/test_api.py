"""The research API over real HTTP: a live server running the durable engine, with models
scripted by model string (``engine_world``), on each database backend. A research runs
from draft to synthesis while its event stream follows it; a partial failure is retried
on confirmation or cancelled; a failed research is retried, a completed one is not; a
stream reconnected with Last-Event-ID gets only what followed; another user's research is
a 404; a model without a key stops the start (400), as does an engine that is not running
(503)."""

from __future__ import annotations

import json
import time
from collections.abc import Collection, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from scholarstream.durable import runtime_holder
from scholarstream.settings import Settings
from tests.helpers import PASSWORD
from tests.research.builders import ANTHROPIC, MODELS, OPENAI
from tests.research.conftest import PROVIDER_KEYS
from tests.research.engine_world import SYNTHESIZER, ScriptedModels, answer, fail
from tests.web.live import Account, LiveServer, clean_settings, serve

RESEARCH = "/api/v1/research"
# Providers the server has no key for; the user has none either.
NO_KEY = ("openrouter:meta-llama/llama-3.1-70b-instruct", "openrouter:mistralai/mistral-large")
SETTLE_SECONDS = 30.0  # a healthy run settles in about a second; this only stops a hang
FINISHED = ("research.completed", "research.failed")


def api_settings(data_dir: Path, database_url: str, *, multi_user: bool) -> Settings:
    return clean_settings(
        data_dir,
        database_url=database_url,
        server={"multi_user": multi_user},
        llm={
            "providers": PROVIDER_KEYS,
            "roles": {"default": OPENAI, "synthesis": SYNTHESIZER},
            "timeout_seconds": 10.0,
        },
        # Sharing and titles have their own tests (test_share.py, test_titles.py).
        research={"share_reports": False, "title_role": None},
    )


@dataclass(frozen=True)
class Event:
    seq: int
    type: str
    data: dict[str, Any]


def read_events(response: httpx.Response, *, until: Collection[str] = ()) -> Iterator[Event]:
    """The SSE events of a streamed response (keep-alive comments skipped), up to and
    including the first whose type is in ``until``, else to the end of the stream."""
    fields: dict[str, str] = {}
    for line in response.iter_lines():
        if line.startswith(":"):
            continue
        if line:
            name, _, value = line.partition(":")
            fields[name] = value.strip()
            continue
        if "data" in fields:
            data = json.loads(fields["data"])
            assert data["type"] == fields["event"]
            yield Event(int(fields["id"]), fields["event"], data)
            if fields["event"] in until:
                return
        fields = {}


def follow(
    client: httpx.Client,
    research_id: str,
    *,
    last_event_id: int | None = None,
    after: int | None = None,
    until: Collection[str] = FINISHED,
) -> list[Event]:
    headers = {"Last-Event-ID": str(last_event_id)} if last_event_id is not None else {}
    params = {"after": after} if after is not None else {}
    url = f"{RESEARCH}/{research_id}/events"
    with client.stream("GET", url, headers=headers, params=params) as response:
        assert response.status_code == 200, response.read()
        assert response.headers["content-type"].startswith("text/event-stream")
        return list(read_events(response, until=until))


def types(events: list[Event]) -> list[str]:
    return [event.type for event in events]


def ok(response: httpx.Response, status: int = 200) -> dict[str, Any]:
    assert response.status_code == status, response.text
    body: dict[str, Any] = response.json()
    return body


def refused(response: httpx.Response, status: int, code: str) -> dict[str, Any]:
    assert response.status_code == status, response.text
    body: dict[str, Any] = response.json()
    assert body["code"] == code and body["message"] and body["hint"], body
    return body


def draft(client: httpx.Client, *models: str, **fields: Any) -> dict[str, Any]:
    body = {
        "prompt": "Tirzepatide safety in adolescents",
        "selectedLlms": list(models or (OPENAI, ANTHROPIC)),
        "synthesisLlm": SYNTHESIZER,
        **fields,
    }
    return ok(client.post(f"{RESEARCH}/draft", json=body), 201)


def started(client: httpx.Client, *models: str) -> dict[str, Any]:
    research = draft(client, *models)
    return ok(client.post(RESEARCH, json={"research_id": research["id"]}))


def settled(client: httpx.Client, research_id: str, status: str) -> dict[str, Any]:
    deadline = time.monotonic() + SETTLE_SECONDS
    while True:
        research = ok(client.get(f"{RESEARCH}/{research_id}"))
        if research["status"] == status:
            return research
        assert time.monotonic() < deadline, f"not {status}: {research}"
        time.sleep(0.05)


# --- no engine ------------------------------------------------------------------------


def test_nothing_starts_while_the_engine_is_not_running(
    module_database_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Whatever ran before in this process, no engine runs here during this test.
    monkeypatch.setattr(runtime_holder(), "runtime", None)
    settings = api_settings(tmp_path, module_database_url, multi_user=False)
    with serve(settings) as live, httpx.Client(base_url=live.base_url, timeout=30) as client:
        research = draft(client)
        refused(
            client.post(RESEARCH, json={"researchId": research["id"]}), 503, "engine_unavailable"
        )
        assert ok(client.get(f"{RESEARCH}/{research['id']}"))["status"] == "draft"


# --- the module's server, with the engine ------------------------------------------------


@pytest.fixture(scope="module")
def scripted() -> ScriptedModels:
    return ScriptedModels()


@pytest.fixture(scope="module")
def live(
    module_database_url: str, tmp_path_factory: pytest.TempPathFactory, scripted: ScriptedModels
) -> Iterator[LiveServer]:
    settings = api_settings(
        tmp_path_factory.mktemp("research-api"), module_database_url, multi_user=True
    )
    accounts = [Account(name, PASSWORD, name.title()) for name in ("alice", "bob")]
    models = scripted.overrides([*MODELS, SYNTHESIZER, *NO_KEY])
    with serve(settings, accounts, engine=True, models=models) as server:
        yield server


def _client(live: LiveServer, name: str) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=live.base_url, timeout=30) as client:
        login = client.post("/api/v1/auth/login", json={"username": name, "password": PASSWORD})
        assert login.status_code == 200, login.text
        client.headers["Origin"] = live.base_url
        yield client


@pytest.fixture(scope="module")
def alice(live: LiveServer) -> Iterator[httpx.Client]:
    yield from _client(live, "alice")


@pytest.fixture(scope="module")
def bob(live: LiveServer) -> Iterator[httpx.Client]:
    yield from _client(live, "bob")


@pytest.fixture(autouse=True)
def _fresh_scripts(scripted: ScriptedModels) -> None:
    scripted.reset()


def test_a_research_runs_from_draft_to_synthesis_as_its_events_stream(
    alice: httpx.Client, scripted: ScriptedModels
) -> None:
    assert ok(alice.get(f"{RESEARCH}/models")) == {
        "selectedLlms": [OPENAI, SYNTHESIZER],
        "synthesisLlm": SYNTHESIZER,
        "titleModel": None,  # titles are cut from the prompt here (no title role)
    }
    refused(alice.post(f"{RESEARCH}/draft", json={"prompt": " "}), 422, "validation_error")
    research = draft(alice, title="Tirzepatide")
    rid = research["id"]
    assert (research["status"], research["title"]) == ("draft", "Tirzepatide")
    edited = ok(alice.patch(f"{RESEARCH}/{rid}", json={"title": "GLP-1 safety"}))
    assert (edited["title"], edited["prompt"]) == ("GLP-1 safety", research["prompt"])

    scripted.plan(SYNTHESIZER, answer("# Synthesis [M1][M2]"))
    running = ok(alice.post(RESEARCH, json={"research_id": rid}))
    assert running["status"] == "processing"
    assert [r["status"] for r in running["llmResults"]] == ["pending", "pending"]
    events = follow(alice, rid)

    assert [e.seq for e in events] == list(range(1, len(events) + 1))
    assert types(events)[0] == "research.started"
    assert sorted(types(events)[1:3]) == ["research.llm_completed"] * 2
    assert types(events)[3:] == ["research.synthesizing", "research.completed"]
    assert events[0].data["models"] == [OPENAI, ANTHROPIC]
    assert events[-1].data == {**events[-1].data, "researchId": rid, "synthesized": True}
    done = ok(alice.get(f"{RESEARCH}/{rid}"))
    assert (done["status"], done["synthesizedResult"]) == ("completed", "# Synthesis [M1][M2]")
    assert {r["model"]: r["content"] for r in done["llmResults"]} == {
        OPENAI: f"Answer of {OPENAI}",
        ANTHROPIC: f"Answer of {ANTHROPIC}",
    }

    assert rid in [
        r["id"] for r in ok(alice.get(RESEARCH, params={"status": "completed"}))["research"]
    ]
    assert rid not in [
        r["id"] for r in ok(alice.get(RESEARCH, params={"status": "draft"}))["research"]
    ]
    refused(alice.patch(f"{RESEARCH}/{rid}", json={"title": "Late"}), 409, "conflict")
    refused(alice.post(RESEARCH, json={"research_id": rid}), 409, "conflict")
    refused(alice.post(f"{RESEARCH}/{rid}/confirm", json={"action": "proceed"}), 409, "conflict")
    refused(alice.post(f"{RESEARCH}/{rid}/retry"), 409, "conflict")


def test_a_stream_reconnected_with_last_event_id_gets_only_later_events(
    alice: httpx.Client,
) -> None:
    rid = started(alice)["id"]
    (first,) = follow(alice, rid, until=["research.started"])
    assert (first.seq, first.type) == (1, "research.started")
    rest = follow(alice, rid, last_event_id=first.seq)
    assert [e.seq for e in rest] == list(range(2, len(rest) + 2))
    assert types(rest)[-1] == "research.completed"
    assert "research.started" not in types(rest)

    assert follow(alice, rid, after=3) == rest[2:]
    assert follow(alice, rid, after=1, last_event_id=3) == rest[2:]  # the header wins
    # Completed, nothing after the last event: 204 tells an EventSource to stop reconnecting.
    response = alice.get(f"{RESEARCH}/{rid}/events", headers={"Last-Event-ID": str(rest[-1].seq)})
    assert response.status_code == 204, response.text


def test_a_partial_failure_retried_on_confirmation_completes(
    alice: httpx.Client, scripted: ScriptedModels
) -> None:
    scripted.plan(ANTHROPIC, fail(500))
    rid = started(alice)["id"]
    events = follow(alice, rid, until=["research.awaiting_confirmation"])
    assert types(events)[-1] == "research.awaiting_confirmation"
    assert events[-1].data["failedProviders"] == [ANTHROPIC]
    assert "research.llm_failed" in types(events)
    refused(alice.post(f"{RESEARCH}/{rid}/retry"), 409, "conflict")
    refused(
        alice.post(f"{RESEARCH}/{rid}/confirm", json={"action": "later"}), 422, "validation_error"
    )

    retrying = ok(alice.post(f"{RESEARCH}/{rid}/confirm", json={"action": "retry"}))
    assert retrying["status"] == "retrying"
    assert retrying["partialFailure"]["retryCount"] == 1
    rest = follow(alice, rid, last_event_id=events[-1].seq)
    assert types(rest) == [
        "research.retrying",
        "research.llm_completed",
        "research.synthesizing",
        "research.completed",
    ]
    assert rest[1].data == {**rest[1].data, "model": ANTHROPIC, "attempt": 2}
    done = ok(alice.get(f"{RESEARCH}/{rid}"))
    assert done["status"] == "completed" and done["synthesizedResult"]
    assert [r["status"] for r in done["llmResults"]] == ["completed", "completed"]


def test_a_partial_failure_cancelled_fails_the_research(
    alice: httpx.Client, scripted: ScriptedModels
) -> None:
    scripted.plan(OPENAI, fail(500))
    rid = started(alice)["id"]
    settled(alice, rid, "awaiting_confirmation")
    cancelled = ok(alice.post(f"{RESEARCH}/{rid}/confirm", json={"action": "cancel"}))
    assert (cancelled["status"], cancelled["error"]) == ("failed", "Cancelled by user")
    events = follow(alice, rid)
    assert types(events)[-2:] == ["research.awaiting_confirmation", "research.failed"]
    assert events[-1].data["error"] == "Cancelled by user"
    refused(alice.post(f"{RESEARCH}/{rid}/confirm", json={"action": "retry"}), 409, "conflict")


def test_a_failed_research_is_retried(alice: httpx.Client, scripted: ScriptedModels) -> None:
    scripted.plan(OPENAI, fail(500))
    scripted.plan(ANTHROPIC, fail(500))
    rid = started(alice)["id"]
    failed = settled(alice, rid, "failed")
    assert failed["error"] == "All LLM calls failed"

    retried = ok(alice.post(f"{RESEARCH}/{rid}/retry"))
    assert retried["status"] == "retrying"
    done = settled(alice, rid, "completed")
    assert done["synthesizedResult"] and done["error"] is None
    events = follow(alice, rid, until=())
    assert types(events)[-4:] == [
        "research.llm_completed",
        "research.llm_completed",
        "research.synthesizing",
        "research.completed",
    ]
    assert "research.failed" in types(events) and "research.retrying" in types(events)
    refused(alice.post(f"{RESEARCH}/{rid}/retry"), 409, "conflict")


def test_a_model_without_a_key_stops_the_start_and_names_the_model(
    alice: httpx.Client, scripted: ScriptedModels
) -> None:
    research = draft(alice, OPENAI, *NO_KEY)
    body = refused(
        alice.post(RESEARCH, json={"research_id": research["id"]}), 400, "missing_credentials"
    )
    assert all(model in body["message"] for model in NO_KEY), body
    assert OPENAI not in body["message"]
    assert ok(alice.get(f"{RESEARCH}/{research['id']}"))["status"] == "draft"
    assert sum(scripted.calls.values()) == 0


def test_another_users_research_is_not_found(alice: httpx.Client, bob: httpx.Client) -> None:
    research = draft(alice)
    rid = research["id"]
    refused(bob.get(f"{RESEARCH}/{rid}"), 404, "not_found")
    refused(bob.patch(f"{RESEARCH}/{rid}", json={"title": "Mine"}), 404, "not_found")
    refused(bob.post(RESEARCH, json={"research_id": rid}), 404, "not_found")
    refused(bob.post(f"{RESEARCH}/{rid}/confirm", json={"action": "cancel"}), 404, "not_found")
    refused(bob.post(f"{RESEARCH}/{rid}/retry"), 404, "not_found")
    refused(bob.get(f"{RESEARCH}/{rid}/events"), 404, "not_found")
    assert rid not in [r["id"] for r in ok(bob.get(RESEARCH))["research"]]
    assert ok(alice.get(f"{RESEARCH}/{rid}")) == research
