"""Screening suggestions from a model (the development provider, an OpenAI-compatible
server on loopback, scripted per request) over the HTTP API: a checked suggestion with its
criterion and a quote that is in the abstract, kept for the project; a made-up quote
removed and flagged; a label other than include / exclude / unsure, invalid JSON, an
answer that never ends: the ranker's score stands in and the suggestion says why. A
suggestion is never a decision: accepting one records the reviewer's decision."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pydantic_ai.models
import pytest

from scholarstream.settings import Settings, load_settings
from tests.fake_openai import Endless, FakeOpenAI, InvalidJSON, Text, fake_openai
from tests.screening.api import API, client_for, import_review, new_project
from tests.screening.world import EXCLUSION

MODEL = "gpt-screen"


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeOpenAI]:
    """The development provider; the product's real client stack may call it."""
    monkeypatch.setattr(pydantic_ai.models, "ALLOW_MODEL_REQUESTS", True)
    with fake_openai() as server:
        yield server


def _settings(data_dir: Path, fake: FakeOpenAI) -> Settings:
    return load_settings(
        data_dir=data_dir,
        semantic={"enabled": False},
        llm={
            "roles": {"default": f"fake:{MODEL}"},
            "providers": {"fake": {"base_url": fake.base_url, "api_key": "sk-fake"}},
            "timeout_seconds": 10.0,
            "deadline_seconds": 3.0,
        },
    )


def _answer(**fields: str) -> Text:
    return Text(json.dumps(fields))


def _suggest(client: httpx.Client, pid: str, record_id: str) -> dict[str, Any]:
    response = client.post(f"{API}/{pid}/records/{record_id}/suggestion")
    assert response.status_code == 200, response.text
    suggestion: dict[str, Any] = response.json()
    return suggestion


def test_model_suggestions_are_checked_kept_and_fall_back_to_the_ranker(
    data_dir: Path, fake: FakeOpenAI
) -> None:
    with client_for(_settings(data_dir, fake)) as (_, client):
        import_review(client)
        pid = new_project(client)["id"]
        records = client.get(f"{API}/{pid}/records").json()["records"]
        ids = [r["record_id"] for r in records]
        abstract = client.get(f"{API}/{pid}/records/{ids[0]}").json()["record"]["abstract"]
        quote = " ".join(abstract.split()[3:11])

        # A good answer: kept, with the criterion's words and the verified quote.
        fake.script(
            MODEL,
            _answer(
                label="Exclude",
                criterion="E3",
                rationale=f'The abstract says "{quote}".',
                quote=quote.upper(),
            ),
        )
        first = _suggest(client, pid, ids[0])
        assert first["source"] == "model" and first["model"] == f"fake:{MODEL}"
        assert (first["label"], first["criterion"]) == ("exclude", EXCLUSION[2])
        assert first["quote"] == quote.upper() and first["notes"] == []
        request = fake.received[-1].body
        assert "E3. Not migraine" in request["messages"][-1][
            "content"
        ] or "E3. Not migraine" in json.dumps(request)
        assert _suggest(client, pid, ids[0]) == first  # kept: the model is not asked again
        assert fake.calls(MODEL) == 1

        # Accepting it records the reviewer's own decision, marked as accepted.
        body = {
            "record_id": ids[0],
            "decision": "exclude",
            "reason": first["criterion"],
            "accepted_suggestion": True,
        }
        assert client.post(f"{API}/{pid}/decisions", json=body).status_code == 200
        mine = client.get(f"{API}/{pid}/records/{ids[0]}").json()["your_decision"]
        assert mine["decision"] == "exclude" and mine["accepted_suggestion"] == "exclude"

        # A quote that is not in the abstract is removed, and the suggestion says so.
        fake.script(
            MODEL,
            _answer(
                label="include",
                criterion="I1",
                rationale="A randomised trial of a triptan.",
                quote="a large randomised trial in two thousand children",
            ),
        )
        invented = _suggest(client, pid, ids[1])
        assert invented["source"] == "model" and invented["quote"] is None
        assert any("not in the title or abstract" in note for note in invented["notes"])

        # Answers that cannot be used: the ranker stands in, and says why; nothing is kept.
        fake.script(MODEL, _answer(label="definitely", criterion="", rationale="x", quote=""))
        unknown = _suggest(client, pid, ids[2])
        assert unknown["source"] == "ranker"
        assert (
            "the model answered 'definitely' where include, exclude or unsure was asked"
            in (unknown["notes"][0])
        )
        assert unknown["notes"][0].endswith("the ranker's score stands in.")

        fake.script(MODEL, InvalidJSON("syntax"), InvalidJSON("syntax"))
        broken = _suggest(client, pid, ids[2])
        assert broken["source"] == "ranker"
        assert "could not be used" in broken["notes"][0]

        fake.script(MODEL, Endless(interval=0.1))
        endless = _suggest(client, pid, ids[2])
        assert endless["source"] == "ranker"
        assert "did not answer in time" in endless["notes"][0]
        assert fake.wait_cancelled(MODEL, count=1, timeout=5)

        # The model is asked again next time (a failure is not kept).
        fake.script(
            MODEL, _answer(label="unsure", criterion="", rationale="Says too little.", quote="")
        )
        later = _suggest(client, pid, ids[2])
        assert (later["source"], later["label"], later["criterion"]) == ("model", "unsure", None)


def test_offline_the_rankers_score_stands_in(settings: Settings) -> None:
    with client_for(settings) as (_, client):
        import_review(client)
        pid = new_project(client)["id"]
        step = client.get(f"{API}/{pid}/next").json()
        before = _suggest(client, pid, step["record"]["id"])
        assert (before["source"], before["label"], before["score"]) == ("ranker", "unsure", None)
        assert before["notes"] == [
            "No model is configured (offline mode): the ranker's score stands in."
        ]
        assert "nothing to go on yet" in before["rationale"]
        # Once the reviewer included one record and excluded another, the ranker scores.
        client.post(
            f"{API}/{pid}/decisions",
            json={"record_id": step["record"]["id"], "decision": "include"},
        )
        nxt = client.get(f"{API}/{pid}/next").json()
        step = client.post(
            f"{API}/{pid}/decisions",
            json={"record_id": nxt["record"]["id"], "decision": "exclude", "reason": EXCLUSION[0]},
        ).json()
        if step["basis"] != "ranker":  # the ranker's features were still being built
            step = client.get(f"{API}/{pid}/next").json()
        assert step["basis"] == "ranker"
        scored = _suggest(client, pid, step["record"]["id"])
        assert scored["source"] == "ranker" and 0 <= scored["score"] <= 1
        assert f"{scored['score']:.2f}" in scored["rationale"]
