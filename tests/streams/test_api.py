"""The streams API over real HTTP (a live server): a whole creation by the rule guide and
one by a scripted model (its message streamed token by token), every kind of bad input
refused with one clear error event (or a 4xx for a body that is not the schema's) that
changes nothing, a failed turn leaving the stored session as it was, the list of drafts,
privacy between users, edits of the retrieval queries, and a stream's chat
instructions reaching the chat's system prompt. Runs on SQLite and PostgreSQL."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import Any

import httpx
from pydantic_ai.messages import ModelMessage
from pydantic_ai.models import Model
from pydantic_ai.models.function import AgentInfo, DeltaToolCalls, FunctionModel

from scholarstream.settings import Settings, load_settings
from tests.chat.world import PAGE, Event, Script, read_events
from tests.helpers import PASSWORD
from tests.streams.script import FULL_CONFIG, GuideScript, Malformed, answer
from tests.web.live import Account, LiveServer, serve

CREATION = "/api/v1/streams/creation"
STREAMS = "/api/v1/streams"
THEN = " \N{SINGLE RIGHT-POINTING ANGLE QUOTATION MARK} "  # between nested field names
PURPOSE = (
    "I want to monitor Palatin Technologies' melanocortin programs in obesity and sexual "
    "dysfunction"
)
TOPIC = "Palatin Technologies' melanocortin programs in obesity and sexual dysfunction"
"""An opening that names a subject but no aim: the guide asks for the purpose."""
DATA_STEPS = [
    "purpose",
    "business_goals",
    "expected_outcomes",
    "stream_name",
    "stream_type",
    "focus_areas",
    "keywords",
    "competitors",
    "report_frequency",
]


@contextmanager
def stream_server(
    settings: Settings,
    models: Mapping[str, Model] | None = None,
    accounts: Sequence[Account] = (),
) -> Iterator[tuple[LiveServer, httpx.Client]]:
    with (
        serve(settings, accounts, models=models) as live,
        httpx.Client(base_url=live.base_url, timeout=20) as client,
    ):
        yield live, client


def start(client: httpx.Client) -> dict[str, Any]:
    """A creation: the user's empty draft if there is one (200), else a new one (201)."""
    response = client.post(CREATION)
    assert response.status_code in (200, 201), response.text
    created: dict[str, Any] = response.json()
    return created


def turn(client: httpx.Client, creation_id: str, message: str = "", **body: Any) -> list[Event]:
    url = f"{CREATION}/{creation_id}/turns"
    with client.stream("POST", url, json={"message": message, **body}) as response:
        assert response.status_code == 200, response.read()
        assert response.headers["content-type"].startswith("text/event-stream")
        return list(read_events(response))


def result(events: list[Event]) -> dict[str, Any]:
    assert events[-1].type == "turn_result", events[-1].data
    return events[-1].data


def deltas(events: list[Event]) -> list[str]:
    return [e.data["text"] for e in events if e.type == "text_delta"]


def creation(client: httpx.Client, creation_id: str) -> dict[str, Any]:
    response = client.get(f"{CREATION}/{creation_id}")
    assert response.status_code == 200, response.text
    found: dict[str, Any] = response.json()
    return found


def refused_turn(
    client: httpx.Client, creation_id: str, body: dict[str, Any], code: str, message: str
) -> dict[str, Any]:
    """A turn refused before the guide is asked: still the event stream (200), with one
    ``error`` event carrying code, message and hint. Returns the event."""
    events = turn(client, creation_id, **body)
    assert [e.type for e in events] == ["error"], [e.data for e in events]
    error = events[0].data
    assert error["code"] == code, error
    assert message in error["message"], error
    assert error["hint"], error
    return error


def refused(response: httpx.Response, status: int, code: str, message: str) -> None:
    assert response.status_code == status, response.text
    body = response.json()
    assert body["code"] == code, body
    assert message in body["message"], body
    assert body["hint"], body


def quick_stream(client: httpx.Client) -> tuple[str, dict[str, Any]]:
    """A stream created by the rule guide, and its creation's id: every field entered in
    the preview panel (inline edits), then confirmed at review."""
    cid = start(client)["id"]
    first = result(turn(client, cid, "Here it is", edits=FULL_CONFIG))
    assert first["next_step"] == "review"
    done = result(turn(client, cid, "create"))
    assert done["next_step"] == "complete"
    stream: dict[str, Any] = client.get(done["stream_url"]).json()
    return cid, stream


def test_a_whole_creation_by_the_rule_guide_ends_in_a_stored_stream(
    db_settings: Settings,
) -> None:
    with stream_server(db_settings) as (_, client):
        view = start(client)
        assert (view["guide"], view["status"], view["step"], view["revision"]) == (
            "rules",
            "open",
            "exploration",
            0,
        )
        assert view["available_next_steps"] == ["exploration", *DATA_STEPS]
        assert [m["role"] for m in view["messages"]] == ["assistant"]
        assert view["config"]["stream_name"] is None
        cid = view["id"]

        events = turn(client, cid, TOPIC)
        assert {e.type for e in events[:-1]} == {"text_delta"}
        first = result(events)
        assert "".join(deltas(events)) == first["message"]
        # What the opening says is filled in; the purpose it does not state is asked, with
        # different aims for its subject (not the user's sentence back).
        assert first["updated_config"]["competitors"] == ["Palatin Technologies"]
        assert first["updated_config"]["focus_areas"] == [
            "melanocortin",
            "obesity",
            "sexual dysfunction",
        ]
        assert first["next_step"] == "purpose"
        aims = first["suggestions"]
        assert len(aims) >= 3 and TOPIC not in aims
        assert (
            aims[0] == "Keep up with new research on melanocortin, obesity and sexual dysfunction"
        )
        assert (first["creation_id"], first["revision"], first["stream_id"]) == (cid, 1, None)
        assert [e.id for e in events] == [f"0:{n}" for n in range(1, len(events) + 1)]
        saved = creation(client, cid)
        assert (saved["step"], saved["revision"]) == ("purpose", 1)
        assert [m["role"] for m in saved["messages"]] == ["assistant", "user", "assistant"]
        # The draft keeps what the guide offered, so a reloaded page offers it again.
        assert saved["offer"] == {
            "target_field": "purpose",
            "suggestions": aims,
            "options": [],
            "proposed_message": None,
        }

        steps: list[dict[str, Any]] = [
            {
                "action": {
                    "type": "option_selected",
                    "target_field": "purpose",
                    "selected_value": aims[0],
                }
            },
            {
                "action": {
                    "type": "options_selected",
                    "target_field": "business_goals",
                    "selected_values": ["Track competing products and pipelines"],
                }
            },
            {"message": "Decide whether to start a competing program"},
            {"message": "Palatin Watch"},
            {"message": "Competitive, please"},
            # The organisations filled in from the opening, cleared in the preview panel:
            # the step is asked again, and skipped.
            {
                "message": "bremelanotide, setmelanotide; melanocortin",
                "edits": {"competitors": None},
            },
            {"action": {"type": "skip_step", "target_field": "competitors"}},
            {"message": "every two weeks"},
        ]
        for body in steps:
            latest = result(turn(client, cid, **body))
        assert latest["next_step"] == "review"
        assert "- Stream name: Palatin Watch" in latest["message"]
        assert creation(client, cid)["skipped_steps"] == ["competitors"]

        done = result(turn(client, cid, "Yes, create it"))
        assert done["next_step"] == "complete"
        assert done["stream_url"] == f"{STREAMS}/{done['stream_id']}"
        assert done["stream"]["stream_name"] == "Palatin Watch"

        stream = client.get(done["stream_url"]).json()
        assert stream["id"] == done["stream_id"]
        assert stream["stream_type"] == "competitive"
        assert stream["report_frequency"] == "biweekly"
        assert stream["keywords"] == ["bremelanotide", "setmelanotide", "melanocortin"]
        assert stream["competitors"] == []
        assert stream["focus_areas"] == ["melanocortin", "obesity", "sexual dysfunction"]
        assert (stream["enabled"], stream["last_run_at"]) == (True, None)
        assert stream["chat_instructions"].startswith("This research stream is 'Palatin Watch'.")
        assert stream["retrieval"]["queries"]["pubmed"]["query"].startswith('("bremelanotide"')
        # Only the sources that can run here are on: no SerpAPI key, no Google Scholar.
        queries = stream["retrieval"]["queries"]
        assert {name for name, q in queries.items() if not q["enabled"]} == {"google_scholar"}
        assert "bremelanotide" in queries["google_scholar"]["query"]
        assert [s["id"] for s in client.get(STREAMS).json()["streams"]] == [stream["id"]]

        finished = creation(client, cid)
        assert (finished["status"], finished["step"]) == ("completed", "complete")
        assert (finished["stream_id"], finished["stream_url"]) == (stream["id"], done["stream_url"])
        assert finished["available_next_steps"] == []
        closed = refused_turn(client, cid, {"message": "more"}, "conflict", "already been created")
        assert closed["field"] is None
        assert len(client.get(STREAMS).json()["streams"]) == 1


def test_a_model_guided_creation_streams_its_message_and_records_usage(
    db_settings: Settings,
) -> None:
    script = GuideScript(
        Malformed('{"mode": "question", "message": "Let me th'),
        answer(
            "Thanks! I have filled in the whole stream from what you said; please review it.",
            extracted_data=FULL_CONFIG,
            next_step="review",
        ),
        answer("Your stream is created.", next_step="complete"),
    )
    with stream_server(db_settings, {"default": script.model()}) as (_, client):
        view = start(client)
        assert view["guide"] == "model"
        events = turn(client, view["id"], PURPOSE)
        types = [e.type for e in events]
        assert types.count("retry") == 1
        retry_at = types.index("retry")
        assert "".join(deltas(events[:retry_at])) == "Let me th"  # voided by the retry
        streamed = deltas(events[retry_at:])
        first = result(events)
        assert "".join(streamed) == first["message"]
        assert len(streamed) > 5  # token by token, not in one piece
        assert first["next_step"] == "review"
        assert first["updated_config"]["keywords"] == FULL_CONFIG["keywords"]
        assert "Current Step: exploration" in script.system_prompt

        done = result(turn(client, view["id"], "Looks good, create it"))
        assert done["next_step"] == "complete"
        # The stored session carried the conversation and the step to the next turn.
        assert "Current Step: review" in script.system_prompt
        assert PURPOSE in str(script.seen[-1])
        stream = client.get(done["stream_url"]).json()
        assert stream["stream_name"] == FULL_CONFIG["stream_name"]
        assert stream["competitors"] == FULL_CONFIG["competitors"]

        usage = client.get("/api/v1/me/usage").json()
        assert [(u["feature"], u["runs"], u["requests"]) for u in usage] == [("stream_guide", 2, 3)]


def test_bad_input_is_refused_with_an_error_event_and_changes_nothing(
    db_settings: Settings,
) -> None:
    with stream_server(db_settings) as (_, client):
        cid = start(client)["id"]
        assert result(turn(client, cid, TOPIC))["next_step"] == "purpose"
        before = creation(client, cid)
        url = f"{CREATION}/{cid}/turns"

        def option(field: str, value: str) -> dict[str, Any]:
            return {
                "action": {
                    "type": "option_selected",
                    "target_field": field,
                    "selected_value": value,
                }
            }

        # (body, message, field): each one error event (invalid_input) naming the field.
        cases: list[tuple[dict[str, Any], str, str]] = [
            (option("stream_type", "banana"), "'banana' is not a stream type", "stream_type"),
            (
                option("report_frequency", "hourly"),
                "'hourly' is not a report",
                "report_frequency",
            ),
            (option("colour", "red"), "There is no stream field 'colour'", "colour"),
            (
                {
                    "action": {
                        "type": "options_selected",
                        "target_field": "colour",
                        "selected_values": ["red"],
                    }
                },
                "There is no stream field 'colour'",
                "colour",
            ),
            ({"action": {"type": "skip_step"}}, "This field is required", "purpose"),
            (
                {"action": {"type": "skip_step", "target_field": "competitors"}},
                "Only the current step can be skipped",
                "competitors",
            ),
            (
                {"message": "hi", "edits": {"colour": "red"}},
                "There is no editable stream field 'colour'",
                "colour",
            ),
            (
                {"message": "hi", "edits": {"purpose": "Fine", "stream_type": "banana"}},
                "'banana' is not a stream type",
                "stream_type",
            ),
            ({"message": "   "}, "The message is empty", "message"),
        ]
        for body, message, field in cases:
            error = refused_turn(client, cid, body, "invalid_input", message)
            assert error["field"] == field, body
            assert creation(client, cid) == before, body

        # A body that does not fit the schema is still a plain 422.
        invalid: list[tuple[dict[str, Any], str]] = [
            ({"action": {"type": "dance"}}, "action"),
            ({"message": "hi", "colour": "red"}, "colour"),
        ]
        for body, message in invalid:
            refused(client.post(url, json=body), 422, "validation_error", message)
            assert creation(client, cid) == before, body

        unknown = uuid.uuid4()
        refused(
            client.post(f"{CREATION}/{unknown}/turns", json={"message": "hi"}),
            404,
            "not_found",
            "stream creation was not found",
        )
        refused(client.get(f"{CREATION}/{unknown}"), 404, "not_found", "was not found")
        refused(client.get(f"{CREATION}/not-an-id"), 422, "validation_error", "creation_id")
        for method in ("GET", "PATCH", "DELETE"):
            response = client.request(
                method, f"{STREAMS}/{unknown}", json={} if method == "PATCH" else None
            )
            refused(response, 404, "not_found", "stream was not found")

        abandoned = client.post(f"{CREATION}/{cid}/abandon")
        assert abandoned.json()["status"] == "abandoned"
        closed = refused_turn(client, cid, {"message": "hi"}, "conflict", "abandoned")
        assert closed["field"] is None
        assert creation(client, cid)["config"] == before["config"]


def test_a_turn_the_model_cannot_answer_is_answered_offline_and_saved(
    db_settings: Settings,
) -> None:
    # Issue 22: a model answer that cannot be used no longer fails the turn (it did, with
    # the session unchanged); the rule-based guide answers it, and the next turn asks the
    # model again.
    script = GuideScript(
        Malformed('{"mode": "question", "message": "Hel'),
        Malformed('{"mode": "question", "message": '),
        answer("Noted the name. What should the stream focus on?", next_step="exploration"),
    )
    with stream_server(db_settings, {"default": script.model()}) as (_, client):
        cid = start(client)["id"]
        edits = {"stream_name": "Palatin Watch"}
        events = turn(client, cid, PURPOSE, edits=edits)
        offline = result(events)
        fallback = offline["fallback"]
        assert fallback["skill"] == "stream_guide" and fallback["reason"] == "unusable"
        assert "could not be used" in fallback["message"]
        assert [e.data["reason"] for e in events if e.type == "retry"][-1] == fallback["message"]
        saved = creation(client, cid)
        assert saved["config"]["stream_name"] == "Palatin Watch"
        assert saved["messages"][-1]["fallback"] == fallback

        again = result(turn(client, cid, "Its pipeline"))
        assert again["message"] == "Noted the name. What should the stream focus on?"
        assert again["fallback"] is None
        assert creation(client, cid)["messages"][-1]["fallback"] is None


def test_another_user_can_neither_see_nor_change_a_stream(
    data_dir: Path, db_settings: Settings
) -> None:
    settings = load_settings(
        data_dir=data_dir, database_url=db_settings.app_database_url, server={"multi_user": True}
    )
    accounts = [Account(name, PASSWORD, name.title()) for name in ("alice", "bob")]
    with (
        stream_server(settings, accounts=accounts) as (live, alice),
        httpx.Client(base_url=live.base_url, timeout=20) as bob,
    ):
        refused(bob.get(STREAMS), 401, "not_authenticated", "log in")
        for client, name in ((alice, "alice"), (bob, "bob")):
            login = client.post("/api/v1/auth/login", json={"username": name, "password": PASSWORD})
            assert login.status_code == 200, login.text
            client.headers["Origin"] = live.base_url  # what our own pages send
        finished, stream = quick_stream(alice)
        open_creation = start(alice)["id"]

        assert bob.get(STREAMS).json()["streams"] == []
        url = f"{STREAMS}/{stream['id']}"
        refused(bob.get(url), 404, "not_found", "was not found")
        refused(bob.patch(url, json={"stream_name": "Mine"}), 404, "not_found", "was not found")
        refused(bob.delete(url), 404, "not_found", "was not found")
        for cid in (open_creation, finished):
            refused(bob.get(f"{CREATION}/{cid}"), 404, "not_found", "was not found")
            refused(
                bob.post(f"{CREATION}/{cid}/turns", json={"message": "hi"}),
                404,
                "not_found",
                "was not found",
            )
            refused(bob.post(f"{CREATION}/{cid}/abandon"), 404, "not_found", "was not found")
        assert alice.get(url).json() == stream
        assert creation(alice, open_creation)["status"] == "open"


def drafts(client: httpx.Client, status: str | None = None) -> list[dict[str, Any]]:
    params = {"status": status} if status else None
    response = client.get(CREATION, params=params)
    assert response.status_code == 200, response.text
    found: list[dict[str, Any]] = response.json()["creations"]
    return found


def _first_aim(turn_result: dict[str, Any]) -> dict[str, Any]:
    """The action of clicking the first purpose the guide offered."""
    assert turn_result["target_field"] == "purpose", turn_result
    return {
        "type": "option_selected",
        "target_field": "purpose",
        "selected_value": turn_result["suggestions"][0],
    }


def test_the_open_drafts_of_the_user_are_listed_newest_first(
    data_dir: Path, db_settings: Settings
) -> None:
    settings = load_settings(
        data_dir=data_dir, database_url=db_settings.app_database_url, server={"multi_user": True}
    )
    accounts = [Account(name, PASSWORD, name.title()) for name in ("alice", "bob")]
    with (
        stream_server(settings, accounts=accounts) as (live, alice),
        httpx.Client(base_url=live.base_url, timeout=20) as bob,
    ):
        refused(bob.get(CREATION), 401, "not_authenticated", "log in")
        for client, name in ((alice, "alice"), (bob, "bob")):
            login = client.post("/api/v1/auth/login", json={"username": name, "password": PASSWORD})
            assert login.status_code == 200, login.text
            client.headers["Origin"] = live.base_url
        assert drafts(alice) == []

        finished, _ = quick_stream(alice)
        gone = start(alice)["id"]
        assert alice.post(f"{CREATION}/{gone}/abandon").status_code == 200
        created = alice.post(CREATION)
        assert created.status_code == 201, created.text
        older = created.json()["id"]
        named = result(turn(alice, older, TOPIC, edits={"stream_name": "Palatin Watch"}))
        newer = start(alice)["id"]
        # Opening "New stream" again gives the same empty draft back (200), not a new one.
        again = alice.post(CREATION)
        assert (again.status_code, again.json()["id"]) == (200, newer)
        # A turn on the older draft makes it the most recently changed.
        named = result(turn(alice, older, "", action=_first_aim(named)))
        bobs = start(bob)["id"]

        listed = drafts(alice)
        assert [d["id"] for d in listed] == [older, newer]
        first = listed[0]
        assert set(first) == {
            "id",
            "status",
            "step",
            "step_label",
            "stream_name",
            "title",
            "turns",
            "created_at",
            "updated_at",
        }
        assert (first["status"], first["step"], first["stream_name"], first["title"]) == (
            "open",
            named["next_step"],
            "Palatin Watch",
            "Palatin Watch",
        )
        assert first["turns"] == 2
        assert first["step_label"] == "goals"  # business_goals, in the user's words
        empty = listed[1]
        assert (empty["step"], empty["stream_name"], empty["title"], empty["turns"]) == (
            "exploration",
            None,
            "Untitled stream",
            0,
        )
        assert empty["step_label"] == "getting started"
        changed = [datetime.fromisoformat(d["updated_at"]) for d in listed]
        assert changed == sorted(changed, reverse=True)
        assert drafts(alice, "open") == listed

        assert [(d["id"], d["status"], d["step"]) for d in drafts(alice, "completed")] == [
            (finished, "completed", "complete")
        ]
        assert [(d["id"], d["status"]) for d in drafts(alice, "abandoned")] == [(gone, "abandoned")]
        everything = drafts(alice, "all")
        assert [d["id"] for d in everything] == [older, newer, gone, finished]

        # Another user's drafts are not listed, and theirs are only theirs.
        assert [d["id"] for d in drafts(bob, "all")] == [bobs]
        refused(bob.get(CREATION, params={"status": "deleted"}), 422, "validation_error", "status")
        # The list does not take /streams/{stream_id}'s place, nor the other way round.
        refused(alice.get(f"{STREAMS}/{uuid.uuid4()}"), 404, "not_found", "was not found")

        # Drafts can be deleted (open or abandoned), only by their owner; a completed
        # creation is its stream's history and stays.
        refused(bob.delete(f"{CREATION}/{newer}"), 404, "not_found", "was not found")
        assert alice.delete(f"{CREATION}/{newer}").status_code == 204
        assert alice.delete(f"{CREATION}/{gone}").status_code == 204
        refused(alice.delete(f"{CREATION}/{finished}"), 409, "conflict", "its stream exists")
        refused(alice.get(f"{CREATION}/{newer}"), 404, "not_found", "was not found")
        assert [d["id"] for d in drafts(alice, "all")] == [older, finished]
        assert creation(alice, older)["config"]["stream_name"] == "Palatin Watch"


def test_edits_of_a_stream_and_its_retrieval_queries(db_settings: Settings) -> None:
    with stream_server(db_settings) as (_, client):
        _, stream = quick_stream(client)
        url = f"{STREAMS}/{stream['id']}"
        pubmed = '"bremelanotide"[tiab] AND "obesity"[majr]'
        edited = client.patch(
            url,
            json={
                "retrieval": {
                    "queries": {
                        "pubmed": {"query": pubmed, "limit": 100},
                        "arxiv": {"enabled": False},
                    }
                },
                "chat_instructions": "Focus on trial methodology.",
                "report_frequency": "Monthly",
                "focus_areas": "obesity, hypoactive sexual desire disorder",
            },
        )
        assert edited.status_code == 200, edited.text
        changed = edited.json()
        queries = changed["retrieval"]["queries"]
        assert (queries["pubmed"]["query"], queries["pubmed"]["limit"]) == (pubmed, 100)
        assert queries["arxiv"]["enabled"] is False
        # No query had been edited before: the others follow the new focus areas.
        assert queries["openalex"]["query"].endswith(
            'AND (obesity OR "hypoactive sexual desire disorder")'
        )
        assert queries["openalex"]["enabled"] is True
        assert changed["chat_instructions"] == "Focus on trial methodology."
        assert changed["report_frequency"] == "monthly"
        assert changed["focus_areas"] == ["obesity", "hypoactive sexual desire disorder"]
        assert client.get(url).json() == changed

        bad: list[tuple[dict[str, Any], str, str]] = [
            ({"stream_type": "banana"}, "invalid_input", "'banana' is not a stream type"),
            ({"stream_name": None}, "invalid_input", "stream name is required"),
            ({"keywords": []}, "invalid_input", "Invalid keywords: must have at least one item"),
            (
                {"retrieval": {"queries": {"pubmed": {"limit": 1000}}}},
                "invalid_input",
                f"queries{THEN}pubmed{THEN}limit must be at most 500",
            ),
            (
                {"retrieval": {"queries": {"nowhere": {"query": "x"}}}},
                "invalid_input",
                "unknown source 'nowhere'",
            ),
            (
                {"retrieval": {"queries": {"pubmed": {"query": " "}}}},
                "invalid_input",
                "a query cannot be blank",
            ),
            ({"colour": "red"}, "validation_error", "colour is not a field of this request"),
            (
                {"retrieval": {"queries": {"pubmed": {"sql": "x"}}}},
                "validation_error",
                f"retrieval{THEN}queries{THEN}pubmed{THEN}sql is not a field of this request",
            ),
            ({"purpose": ["a", "list"]}, "validation_error", "purpose"),
        ]
        for body, code, message in bad:
            refused(client.patch(url, json={"stream_name": "Renamed", **body}), 422, code, message)
            assert client.get(url).json() == changed, body

        off = client.patch(url, json={"enabled": False, "competitors": None})
        assert (off.json()["enabled"], off.json()["competitors"]) == (False, [])
        assert client.delete(url).status_code == 204
        refused(client.get(url), 404, "not_found", "was not found")
        assert client.get(STREAMS).json()["streams"] == []


def both(guide: GuideScript, chat: Script) -> FunctionModel:
    """One model for the server: the guide's requests (structured output) go to ``guide``,
    the chat's to ``chat``."""

    async def stream(
        messages: list[ModelMessage], info: AgentInfo
    ) -> AsyncIterator[str | DeltaToolCalls]:
        player = guide.stream if info.output_tools else chat.stream
        async for chunk in player(messages, info):
            yield chunk

    return FunctionModel(stream_function=stream)


def test_a_streams_chat_instructions_reach_the_chat_system_prompt(db_settings: Settings) -> None:
    guide = GuideScript(
        answer("Everything is filled in; please review.", next_step="review"),
        answer("Created.", next_step="complete"),
    )
    chat = Script(["On it."], ["Again."], ["And again."])
    with stream_server(db_settings, {"default": both(guide, chat)}) as (_, client):
        cid = start(client)["id"]
        result(turn(client, cid, "Here it is", edits=FULL_CONFIG))
        stream_id = result(turn(client, cid, "create"))["stream_id"]
        instructions = "Focus on trial methodology."
        patched = client.patch(f"{STREAMS}/{stream_id}", json={"chat_instructions": instructions})
        assert patched.status_code == 200, patched.text

        for stream in (stream_id, None, str(uuid.uuid4())):
            context = {"current_page": PAGE, **({"stream_id": stream} if stream else {})}
            payload = {"message": "What is new?", "context": context}
            with client.stream("POST", "/api/v1/chat/messages", json=payload) as response:
                assert response.status_code == 200, response.read()
                assert list(read_events(response))[-1].type == "complete"
        section = f"## Instructions for this research stream\n{instructions}"
        prompts = [p or "" for p in chat.instructions]
        assert [section in p for p in prompts] == [True, False, False]
        assert "The test page." in prompts[0]


def test_a_new_stream_searches_only_the_sources_that_can_run_here(
    data_dir: Path, db_settings: Settings
) -> None:
    with stream_server(db_settings) as (_, client):
        listed = client.get(f"{STREAMS}/sources")
        assert listed.status_code == 200, listed.text
        sources = {s["name"]: s for s in listed.json()["sources"]}
        assert {"pubmed", "openalex", "library", "google_scholar"} <= set(sources)
        scholar = sources["google_scholar"]
        assert (scholar["label"], scholar["available"]) == ("Google Scholar (SerpAPI)", False)
        assert "SerpAPI key" in scholar["reason"]
        assert "SCHOLARSTREAM_SOURCES__SERPAPI_API_KEY" in scholar["how_to_enable"]
        assert all(s["available"] for name, s in sources.items() if name != "google_scholar")
        assert all(s["reason"] is None for s in sources.values() if s["available"])

        _, stream = quick_stream(client)
        queries = stream["retrieval"]["queries"]
        assert set(queries) == set(sources)
        assert [name for name, q in queries.items() if not q["enabled"]] == ["google_scholar"]

    # With its key set, Google Scholar can run: listed available, and on in a new stream.
    keyed = load_settings(
        data_dir=data_dir,
        database_url=db_settings.app_database_url,
        sources={"serpapi_api_key": "a-serpapi-key"},
    )
    with stream_server(keyed) as (_, client):
        sources = {s["name"]: s for s in client.get(f"{STREAMS}/sources").json()["sources"]}
        assert all(s["available"] for s in sources.values())
        _, stream = quick_stream(client)
        assert all(q["enabled"] for q in stream["retrieval"]["queries"].values())
