"""A stream created start to finish with the development provider as the guide's model
(docs/development-provider.md: ``python -m scholarstream.devtools.fake_openai`` and
``SCHOLARSTREAM_LLM__ROLES__DEFAULT=dev:dev-model``), through the API over a live server:
the provider makes nothing up for the stream, the user's inline edits fill it in and are
kept, the organisations are cleared with ``[]``, and "Create the stream" creates it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pydantic_ai.models
import pytest

from tests.chat.world import Event, read_events
from tests.fake_openai import Auto, FakeOpenAI, fake_openai
from tests.web.live import clean_settings, serve

CREATION = "/api/v1/streams/creation"
EDITS: dict[str, Any] = {
    "purpose": "Follow research on otitis and ear disease in dogs",
    "business_goals": ["Collect evidence for a systematic review"],
    "expected_outcomes": "New references for the review",
    "stream_name": "Canine otitis",
    "stream_type": "scientific",
    "focus_areas": ["otitis", "ear disease"],
    "keywords": ["otitis", "ear disease", "spaniel"],
    "competitors": [],
    "report_frequency": "weekly",
}


@pytest.fixture
def dev_provider(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeOpenAI]:
    """The development provider as ``python -m scholarstream.devtools.fake_openai`` runs
    it: every request answered from the request itself (``Auto``)."""
    monkeypatch.setattr(pydantic_ai.models, "ALLOW_MODEL_REQUESTS", True)
    with fake_openai(fallback=Auto()) as fake:
        yield fake


def turn(client: httpx.Client, creation_id: str, message: str, **body: Any) -> dict[str, Any]:
    url = f"{CREATION}/{creation_id}/turns"
    with client.stream("POST", url, json={"message": message, **body}) as response:
        assert response.status_code == 200, response.read()
        events: list[Event] = list(read_events(response))
    assert events[-1].type == "turn_result", events[-1].data
    data: dict[str, Any] = events[-1].data
    assert data["fallback"] is None, data["fallback"]  # the model answered, not the rules
    return data


def test_a_stream_is_created_start_to_finish_with_the_development_provider(
    tmp_path: Path, dev_provider: FakeOpenAI
) -> None:
    settings = clean_settings(
        tmp_path / "data",
        llm={
            "roles": {"default": "dev:dev-model"},
            "providers": {"dev": {"base_url": dev_provider.base_url}},
        },
    )
    with serve(settings) as live, httpx.Client(base_url=live.base_url, timeout=30) as client:
        created = client.post(CREATION).json()
        assert created["guide"] == "model"
        cid = created["id"]

        first = turn(client, cid, "I want to follow research on otitis and ear disease in dogs")
        # The provider cannot read the message: it makes up no value for the stream, and
        # it moves the creation on to a step it was offered.
        assert first["updated_config"] == dict.fromkeys([*EDITS, "chat_instructions"])
        assert first["next_step"] in created["available_next_steps"]
        assert first["next_step"] != "exploration"

        second = turn(client, cid, "Please use these values", edits=EDITS)
        assert second["warnings"] == [], second["warnings"]
        config = second["updated_config"]
        assert config == {**EDITS, "competitors": None, "chat_instructions": None}
        assert second["next_step"] == "review"

        done = turn(client, cid, "Create the stream")
        assert done["next_step"] == "complete"
        assert done["stream_id"]
        stream = client.get(done["stream_url"]).json()
        for name, value in EDITS.items():
            assert stream[name] == value, name
    assert dev_provider.calls("dev-model") == 3
