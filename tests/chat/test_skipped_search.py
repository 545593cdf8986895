"""A question for the literature is searched even when the model answers without searching
(a small local model offers a query or answers from memory): the search follow-up
continuity planned runs after the model's answer, and the next turn's model reads its
results. Over real HTTP, a scripted model, the sources answered by recorded responses and a
library of ten veterinary records."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from pydantic_ai.messages import ModelResponse, TextPart

from scholarstream.chat._planned_search import MODEL_DID_NOT_SEARCH
from tests.chat.world import Event, Script, call, read_events
from tests.conftest import SHARED_DATA
from tests.search.world import LiteratureWorld
from tests.web.live import clean_settings, import_into_library, serve

MESSAGES = "/api/v1/chat/messages"
SCOPUS = SHARED_DATA / "exports" / "asysd_testthat" / "scopus.ris"
DOGS = "taurine and dilated cardiomyopathy in dogs"
TOPIC = "taurine dilated cardiomyopathy dogs"  # as continuity renders it
SUGGESTION = (
    "You could search for this.\n"
    'QUERY_SUGGESTION: {"query": "taurine dilated cardiomyopathy dogs", "target": "search", '
    '"explanation": "The topic."}'
)


@pytest.fixture
def script() -> Script:
    return Script()


@pytest.fixture
def server(tmp_path: Path, script: Script) -> Iterator[httpx.Client]:
    world = LiteratureWorld()
    settings = clean_settings(
        tmp_path / "data", search={"default_sources": ["pubmed", "openalex", "library"]}
    )
    with (
        serve(
            settings,
            source_transport=httpx.MockTransport(world),
            models={"default": script.model()},
        ) as live,
        httpx.Client(base_url=live.base_url, timeout=30) as client,
    ):
        import_into_library(live, client, SCOPUS)
        yield client


def send(client: httpx.Client, message: str, conversation: str | None = None) -> list[Event]:
    body: dict[str, Any] = {"message": message, "context": {"current_page": "home"}}
    if conversation is not None:
        body["conversation_id"] = conversation
    with client.stream("POST", MESSAGES, json=body) as response:
        assert response.status_code == 200, response.read()
        events = list(read_events(response))
    assert events[-1].type == "complete", events[-1]
    return events


def answer(events: list[Event]) -> dict[str, Any]:
    payload: dict[str, Any] = events[-1].data["payload"]
    return payload


def searched(events: list[Event]) -> list[tuple[str, str]]:
    return [(e.data["tool"], e.data["input"]["query"]) for e in events if e.type == "tool_start"]


def test_a_model_that_only_suggests_a_query_gets_the_search_run_for_it(
    server: httpx.Client, script: Script
) -> None:
    script.steps = [[SUGGESTION]]
    events = send(server, f"What is known about {DOGS}?")
    assert searched(events) == [("search_library", TOPIC), ("search_literature", TOPIC)]
    assert [e.data["index"] for e in events if e.type == "tool_start"] == [0, 1]
    payload = answer(events)
    text = payload["message"]
    assert text.startswith(f"You could search for this.\n\n{MODEL_DID_NOT_SEARCH}\n\n")
    assert f"Searching for “{TOPIC}”." in text
    # The model's suggestion is still offered, and the results are cards.
    assert payload["custom_payload"]["type"] == "query_suggestion"
    assert any(p["type"] != "query_suggestion" for p in payload["payloads"])
    # What was searched is what continuity reports, with the topic it read.
    queries = payload["continuity"]["queries"]
    assert [q["query"] for q in queries if q["ok"]] and all(q["query"] == TOPIC for q in queries)


def test_the_next_turn_reads_the_results_but_not_the_notice(
    server: httpx.Client, script: Script
) -> None:
    script.steps = [[SUGGESTION], ["What about in cats?"], ["Noted."]]
    first = send(server, f"What is known about {DOGS}?")
    conversation = first[0].data["conversation_id"]
    second = send(server, "what about in cats?", conversation)
    history = script.seen[-1]
    said = [
        part.content
        for message in history
        if isinstance(message, ModelResponse)
        for part in message.parts
        if isinstance(part, TextPart)
    ]
    assert any(f"Searching for “{TOPIC}”." in text for text in said)
    assert not any(MODEL_DID_NOT_SEARCH in text for text in said)
    # The follow-up is searched with the topic carried and the population replaced.
    assert searched(second) == [
        ("search_library", "taurine dilated cardiomyopathy cats"),
        ("search_literature", "taurine dilated cardiomyopathy cats"),
    ]


def test_a_model_that_searched_gets_no_second_search(server: httpx.Client, script: Script) -> None:
    script.steps = [[call("search_library", {"query": DOGS})], ["Ten papers in your library."]]
    events = send(server, f"Find papers on {DOGS} in my library")
    assert searched(events) == [("search_library", DOGS)]
    assert answer(events)["message"] == "Ten papers in your library."


def test_a_search_the_model_got_refused_is_run_for_it(server: httpx.Client, script: Script) -> None:
    refused = call("search_library", {"query": DOGS, "limit": "lots"})
    script.steps = [[refused], [refused], [refused], ["I could not search."]]
    events = send(server, f"Find papers on {DOGS} in my library")
    done = [(e.data["tool"], e.data["ok"]) for e in events if e.type == "tool_complete"]
    assert done[-1] == ("search_library", True)
    assert MODEL_DID_NOT_SEARCH in answer(events)["message"]


@pytest.mark.parametrize(
    "message",
    [
        "What is an odds ratio?",
        "Explain what a hazard ratio means",
        "Hello",
        "Write a short email to my supervisor about the meeting",
        "What were the events?",  # about what the page shows: no subject of its own
    ],
)
def test_a_message_that_is_not_a_question_for_the_literature_is_not_searched(
    server: httpx.Client, script: Script, message: str
) -> None:
    script.steps = [["Here is my answer."]]
    events = send(server, message)
    assert searched(events) == []
    assert answer(events)["message"] == "Here is my answer."


def test_a_follow_up_that_does_not_change_the_topic_is_not_searched_again(
    server: httpx.Client, script: Script
) -> None:
    script.steps = [[SUGGESTION], ["The second one is a cohort study."]]
    first = send(server, f"What is known about {DOGS}?")
    second = send(server, "tell me more about the second one", first[0].data["conversation_id"])
    assert searched(second) == []
    assert answer(second)["message"] == "The second one is a cohort study."


def test_sources_named_as_people_write_them_are_searched(
    server: httpx.Client, script: Script
) -> None:
    named = call("search_literature", {"query": DOGS, "sources": ["PubMed", "Open Alex"]})
    script.steps = [[named], ["Found them."]]
    events = send(server, f"Find papers on {DOGS} in PubMed and OpenAlex")
    done = [(e.data["tool"], e.data["ok"]) for e in events if e.type == "tool_complete"]
    assert done == [("search_literature", True)]
    assert "Searched 2 sources" in script.last_tool_return()
    assert answer(events)["message"] == "Found them."


def test_a_page_to_open_is_no_search_but_a_search_offered_as_a_button_is(
    server: httpx.Client, script: Script
) -> None:
    opens = (
        'Use the search page.\nSUGGESTED_ACTIONS: [{"label": "Search", "action": '
        '"open_search_page", "handler": "client"}, {"label": "Go", "action": "Search", '
        '"handler": "server"}]'
    )
    runs = (
        'Shall I search?\nSUGGESTED_ACTIONS: [{"label": "Search", "action": "run_search", '
        f'"handler": "server", "params": {{"query": "{TOPIC}"}}}}]'
    )
    script.steps = [[opens], [runs]]
    opened = send(server, f"What is known about {DOGS}?")
    assert searched(opened) == [("search_library", TOPIC), ("search_literature", TOPIC)]
    offered = send(server, "what about in cats?", opened[0].data["conversation_id"])
    assert searched(offered) == []
    assert [a["action"] for a in answer(offered)["suggested_actions"]] == ["run_search"]


def test_progress_names_the_sources_as_people_know_them(
    server: httpx.Client, script: Script
) -> None:
    script.steps = [[call("search_literature", {"query": DOGS})], ["Found them."]]
    events = send(server, f"Find papers on {DOGS}")
    said = [e.data["message"] for e in events if e.type == "tool_progress"]
    assert said[0] == "Searching PubMed, OpenAlex, your library"
    assert {"PubMed: 50 records", "Your library: 5 records"} <= set(said)
