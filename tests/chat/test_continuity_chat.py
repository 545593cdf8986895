"""Follow-up continuity through real chat turns over HTTP (seed 004): the thread is kept
per conversation, follow-ups reach the sources with the prior topic (offline and with a
model), the answer says what was searched, and the objective list can be edited."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx

from tests.chat.test_chat_api import send
from tests.chat.world import Event, Script, call
from tests.search.world import LiteratureWorld
from tests.web.live import clean_settings, serve

SOURCES = ["pubmed", "openalex", "library"]
FIRST = "What are the income criteria for Florida Medicaid?"
TOPIC = "income criteria Florida Medicaid"


@contextmanager
def chat(
    tmp_path: Path, world: LiteratureWorld, script: Script | None = None
) -> Iterator[httpx.Client]:
    settings = clean_settings(tmp_path / "data", search={"default_sources": SOURCES})
    models = {"default": script.model()} if script is not None else None
    with (
        serve(settings, models=models, source_transport=world.transport()) as live,
        httpx.Client(base_url=live.base_url, timeout=20) as client,
    ):
        yield client


def complete(events: list[Event]) -> dict[str, Any]:
    assert events[-1].type == "complete", events[-1].data
    payload: dict[str, Any] = events[-1].data["payload"]
    return payload


def sent(payload: dict[str, Any]) -> list[tuple[str, str | None, str]]:
    return [(q["tool"], q["source"], q["query"]) for q in payload["continuity"]["queries"]]


def pubmed_terms(world: LiteratureWorld) -> str:
    """The term of the last PubMed search the sources were asked for."""
    searches = [r for r in world.searched("pubmed") if "esearch" in r.url.path]
    return str(searches[-1].url.params["term"])


def test_offline_follow_ups_carry_the_topic_to_the_sources(tmp_path: Path) -> None:
    world = LiteratureWorld()
    with chat(tmp_path, world) as client:
        first = complete(send(client, FIRST))
        conversation = first["conversation_id"]
        assert first["continuity"]["intent"] == "new_question"
        assert sent(first) == [
            ("search_library", "library", TOPIC),
            ("search_literature", "pubmed", TOPIC),
            ("search_literature", "openalex", TOPIC),
        ]  # the library once: the sources' search leaves it to its own step
        assert first["message"].startswith(f"Searching for “{TOPIC}”.")
        assert "No language model is configured" in first["message"]
        assert pubmed_terms(world).startswith(TOPIC)

        web = complete(send(client, "can you search the web for it", conversation_id=conversation))
        assert web["continuity"]["intent"] == "followup_continuation"
        assert web["continuity"]["refined_query"] == TOPIC
        assert {query for _, _, query in sent(web)} == {TOPIC}
        assert "Read as a follow-up" in web["message"]
        assert "There is no web search here" in web["message"]
        assert [chip["label"] for chip in web["suggested_values"]][:2] == [
            "I have the link",
            "Search instead",
        ]

        texas = complete(send(client, "what about in Texas?", conversation_id=conversation))
        assert texas["continuity"]["intent"] == "slot_fill"
        assert {query for _, _, query in sent(texas)} == {"income criteria Texas Medicaid"}
        assert pubmed_terms(world).startswith("income criteria Texas Medicaid")

        switch = complete(
            send(client, "Biosimilar interchangeability at the FDA", conversation_id=conversation)
        )
        assert switch["continuity"]["intent"] == "new_question"
        assert all("Medicaid" not in query for _, _, query in sent(switch))

        # The stored answer carries the same report, and the thread is kept.
        stored = client.get(f"/api/v1/chat/conversations/{conversation}").json()
        assert stored["messages"][3]["response"]["continuity"] == web["continuity"]
        thread = client.get(f"/api/v1/chat/conversations/{conversation}/thread").json()
        assert thread["refined_query"] == "Biosimilar interchangeability FDA"
        assert [t["user"] for t in thread["last_turns"]] == [
            "can you search the web for it",
            "what about in Texas?",
            "Biosimilar interchangeability at the FDA",
        ]
        assert [(o["text"], o["status"]) for o in thread["objectives"]] == [
            (FIRST, "in_progress"),
            ("Biosimilar interchangeability at the FDA", "in_progress"),
        ]


def test_when_nothing_is_found_the_assistant_asks_for_leverage(tmp_path: Path) -> None:
    world = LiteratureWorld(empty=("pubmed",), failing=("openalex",))
    with chat(tmp_path, world) as client:
        answer = complete(send(client, "Sunshine Health dental coverage for adults"))
        objective = answer["continuity"]["objectives"][0]
        assert objective["status"] == "blocked"
        assert "Do you have a link, a document, a name" in objective["asks"][0]
        labels = [chip["label"] for chip in answer["suggested_values"]]
        assert labels[:3] == ["Try broader terms", "I have a link", "Try another name"]
        failed = [q for q in answer["continuity"]["queries"] if not q["ok"]]
        assert [(q["source"], q["query"]) for q in failed] == [
            ("openalex", "Sunshine Health dental coverage adults")
        ]

        website = complete(
            send(client, "can you read their website", conversation_id=answer["conversation_id"])
        )
        assert [chip["label"] for chip in website["suggested_values"]][:2] == [
            "I have the link",
            "Search instead",
        ]
        assert "paste the link" in website["message"]

        # A query a source failed on is reported with the years it asked for.
        dated = complete(send(client, "only since 2020", conversation_id=answer["conversation_id"]))
        failed = [q for q in dated["continuity"]["queries"] if not q["ok"]]
        assert failed and all((q["year_from"], q["year_to"]) == (2020, None) for q in failed)

        # A thank-you after nothing was found: a short, honest answer, no search.
        closing = complete(
            send(client, "ok thanks, that's all", conversation_id=answer["conversation_id"])
        )
        assert closing["continuity"]["intent"] == "closing"
        assert closing["continuity"]["queries"] == []
        assert closing["message"].startswith(
            "Closing “Sunshine Health dental coverage for adults” without an answer"
        )
        assert "/help" not in closing["message"]
        assert [o["status"] for o in closing["continuity"]["objectives"]] == ["closed"]


def test_objectives_are_edited_by_the_user_and_kept_by_later_turns(tmp_path: Path) -> None:
    world = LiteratureWorld()
    with chat(tmp_path, world) as client:
        conversation = complete(send(client, FIRST))["conversation_id"]
        base = f"/api/v1/chat/conversations/{conversation}/objectives"
        added = client.post(base, json={"text": "Compare with Georgia"})
        assert added.status_code == 201
        assert added.json() == {
            "id": 2,
            "text": "Compare with Georgia",
            "status": "open",
            "evidence": [],
            "asks": [],
        }
        done = client.patch(f"{base}/1", json={"status": "achieved"}).json()
        assert done["status"] == "achieved"
        assert done["evidence"][-1] == "Marked achieved by the user"

        later = complete(send(client, "only since 2020", conversation_id=conversation))
        objectives = later["continuity"]["objectives"]
        assert [(o["id"], o["status"]) for o in objectives] == [(1, "achieved"), (2, "in_progress")]

        assert client.delete(f"{base}/2").status_code == 204
        thread = client.get(f"/api/v1/chat/conversations/{conversation}/thread").json()
        assert [o["id"] for o in thread["objectives"]] == [1]
        # A deleted objective's id is never given to another one in this conversation.
        readded = client.post(base, json={"text": "Compare with Alabama"}).json()
        assert readded["id"] == 3
        assert client.patch(f"{base}/2", json={"status": "open"}).status_code == 404
        assert client.delete(f"{base}/3").status_code == 204
        assert client.post(base, json={"text": "Compare with Ohio"}).json()["id"] == 4
        assert client.delete(f"{base}/4").status_code == 204

        # Bad edits are refused with a clear error, and nothing is lost.
        missing = client.patch(f"{base}/9", json={"status": "open"})
        assert missing.status_code == 404
        assert "Objective 9" in missing.json()["message"]
        assert client.patch(f"{base}/1", json={}).status_code == 422
        assert client.patch(f"{base}/1", json={"status": "finished"}).status_code == 422
        assert client.post(base, json={"text": ""}).status_code == 422
        other = client.get("/api/v1/chat/conversations/00000000-0000-0000-0000-000000000000/thread")
        assert other.status_code == 404
        thread = client.get(f"/api/v1/chat/conversations/{conversation}/thread").json()
        assert [o["id"] for o in thread["objectives"]] == [1]


def test_with_a_model_a_follow_up_tool_query_gets_the_topic(tmp_path: Path) -> None:
    world = LiteratureWorld()
    # A model that passes the user's words through instead of resolving "it".
    script = Script(
        [call("search_literature", {"query": "Florida Medicaid income criteria"})],
        ["Four sources list the limits."],
        [call("search_literature", {"query": "it"})],
        ["The same limits, from the web."],
        [call("search_literature", {"query": "Wegovy SELECT trial"}, call_id="c2")],
        ["Their trial."],
    )
    with chat(tmp_path, world, script) as client:
        conversation = complete(send(client, FIRST))["conversation_id"]
        events = send(client, "can you search the web for it", conversation_id=conversation)
        start = next(e for e in events if e.type == "tool_start")
        assert start.data["input"]["query"] == TOPIC
        answer = complete(events)
        assert {q["query"] for q in answer["continuity"]["queries"]} == {TOPIC}
        # The model was told the rewrite, and given the thread in its instructions.
        assert "added the conversation's" in script.last_tool_return()
        instructions = script.instructions[-1] or ""
        assert "Active topic (last refined query): income criteria Florida Medicaid" in (
            instructions
        )
        assert f"- [in_progress] {FIRST}" in instructions

        # A query the model resolved itself is its judgement: sent as it wrote it.
        events = send(client, "and their trials?", conversation_id=conversation)
        start = next(e for e in events if e.type == "tool_start")
        assert start.data["input"]["query"] == "Wegovy SELECT trial"
