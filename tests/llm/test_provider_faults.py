"""A provider's faults in chat, through the real client stack: the product's chat API
(SSE) on a live server, pydantic-ai's OpenAI model, the openai SDK and httpx, against a
fake OpenAI-compatible server on loopback that answers 429 with Retry-After, 500, hangs
past the timeout, or cuts its stream half-way.

The behaviour (``scholarstream.llm._retries``): a transient fault (429, 5xx) is retried at
most twice, after the provider's Retry-After (a wait longer than 30 s, or than what is left
of ``llm.timeout_seconds``, is not waited on); a hang ends at ``llm.timeout_seconds`` and is
not retried; a stream that breaks after it started is not retried. What cannot be
recovered ends the turn with one ``error`` event naming the model and what to do; the
conversation keeps the question and, marked as failed, whatever part of the answer came."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.chat.world import Event, context, read_events
from tests.fake_openai import Cut, FakeOpenAI, Hang, Status, Text
from tests.llm.fault_world import FAKE, gaps, provider_settings
from tests.web.live import clean_settings, serve

MESSAGES = "/api/v1/chat/messages"
NAME = "chat-model"
MODEL = f"{FAKE}:{NAME}"
TIMEOUT = 3.0  # llm.timeout_seconds of the server: room for two retries of a 500
FAKE_SAYS = "fake provider error"  # the fake server's error message unless a test sets one


@pytest.fixture(scope="module")
def chat(
    tmp_path_factory: pytest.TempPathFactory, fake_server: FakeOpenAI
) -> Iterator[httpx.Client]:
    """A live server whose default model is the fake provider's ``chat-model``."""
    settings = clean_settings(
        tmp_path_factory.mktemp("faults") / "data",
        llm={
            "roles": {"default": MODEL},
            "providers": provider_settings(fake_server),
            "timeout_seconds": TIMEOUT,
        },
    )
    with serve(settings) as live, httpx.Client(base_url=live.base_url, timeout=30) as client:
        yield client


def send(client: httpx.Client, message: str, **body: Any) -> list[Event]:
    payload = {"message": message, "context": context(), **body}
    with client.stream("POST", MESSAGES, json=payload) as response:
        assert response.status_code == 200, response.read()
        return list(read_events(response))


def streamed(events: list[Event]) -> str:
    return "".join(e.data["text"] for e in events if e.type == "text_delta")


def the_error(events: list[Event]) -> dict[str, Any]:
    """The turn's one ``error`` event: the last event, and no ``complete`` before it."""
    assert [e.type for e in events].count("error") == 1
    assert events[-1].type == "error"
    assert "complete" not in [e.type for e in events]
    return events[-1].data


def messages(client: httpx.Client, events: list[Event]) -> list[dict[str, Any]]:
    conversation_id = events[0].data["conversation_id"]
    response = client.get(f"/api/v1/chat/conversations/{conversation_id}")
    assert response.status_code == 200, response.text
    found: list[dict[str, Any]] = response.json()["messages"]
    return found


def test_a_429_with_retry_after_is_waited_out_and_the_answer_completes(
    chat: httpx.Client, fake: FakeOpenAI
) -> None:
    fake.script(NAME, Status(429, retry_after=1), Text("Metformin is first-line."))

    events = send(chat, "Explain what first-line means for type 2 diabetes.")

    assert events[-1].type == "complete"
    assert "error" not in [e.type for e in events]
    assert events[-1].data["payload"]["message"] == "Metformin is first-line."
    assert streamed(events) == "Metformin is first-line."
    assert fake.calls(NAME) == 2
    # Retry-After: 1 was honoured, and the retry did not wait much longer than asked.
    (gap,) = gaps(fake, NAME)
    assert 1.0 <= gap < 1.8
    stored = messages(chat, events)
    assert [(m["role"], m["status"]) for m in stored] == [
        ("user", "complete"),
        ("assistant", "complete"),
    ]
    assert stored[1]["content"] == "Metformin is first-line."


def test_a_persistent_429_ends_the_turn_with_one_clear_error_and_keeps_the_conversation(
    chat: httpx.Client, fake: FakeOpenAI
) -> None:
    fake.script(NAME, *[Status(429, retry_after=0.2)] * 3)

    events = send(chat, "Summarise the SURMOUNT trials.")

    error = the_error(events)
    assert error["code"] == "llm_error"
    assert error["message"] == (
        f"{MODEL} is rate-limiting requests: it answered HTTP 429 to all 3 attempts."
        f' The provider said: "{FAKE_SAYS}"'
    )
    assert MODEL in error["hint"] and "try" in error["hint"]
    assert fake.calls(NAME) == 3  # the first request and two retries, then no more
    assert all(0.2 <= gap < 0.8 for gap in gaps(fake, NAME))
    first = messages(chat, events)
    assert [(m["role"], m["status"], m["content"]) for m in first] == [
        ("user", "complete", "Summarise the SURMOUNT trials."),
        ("assistant", "error", ""),
    ]
    assert first[1]["error"] == {
        "code": "llm_error",
        "message": error["message"],
        "hint": error["hint"],
    }

    # The provider recovers: the same conversation goes on, the failed turn still in it.
    fake.script(NAME, Text("SURMOUNT-1 to -4 tested tirzepatide."))
    conversation_id = events[0].data["conversation_id"]
    again = send(chat, "Try again please.", conversation_id=conversation_id)
    assert again[-1].type == "complete"
    assert [(m["role"], m["status"]) for m in messages(chat, again)] == [
        ("user", "complete"),
        ("assistant", "error"),
        ("user", "complete"),
        ("assistant", "complete"),
    ]


def test_a_provider_asking_to_wait_ten_minutes_is_not_waited_on(
    chat: httpx.Client, fake: FakeOpenAI
) -> None:
    fake.script(NAME, Status(429, retry_after=600))

    started = time.monotonic()
    events = send(chat, "Anything new on GLP-1 and NAION?")
    elapsed = time.monotonic() - started

    error = the_error(events)
    assert error["code"] == "llm_error"
    assert "asked to wait 600 s" in error["message"]
    assert "waits at most 30 s" in error["message"]
    assert fake.calls(NAME) == 1
    assert elapsed < TIMEOUT  # told at once, not at the end of the budget


def test_a_retry_after_longer_than_the_time_left_is_not_waited_on(
    chat: httpx.Client, fake: FakeOpenAI
) -> None:
    fake.script(NAME, Status(429, retry_after=5))

    started = time.monotonic()
    error = the_error(send(chat, "Anything new on GLP-1 and NAION?"))

    assert error["message"] == (
        f"{MODEL} is rate-limiting requests (HTTP 429) and asked to wait 5 s, longer than is "
        f"left of the {TIMEOUT:g} s this call may take."
        f' The provider said: "{FAKE_SAYS}"'
    )
    assert time.monotonic() - started < 1.5  # not run into the timeout either
    assert fake.calls(NAME) == 1


def test_a_transient_500_is_retried_and_the_answer_completes(
    chat: httpx.Client, fake: FakeOpenAI
) -> None:
    fake.script(NAME, Status(500), Text("Recovered answer."))

    events = send(chat, "Explain what MASH is.")

    assert events[-1].type == "complete"
    assert events[-1].data["payload"]["message"] == "Recovered answer."
    assert fake.calls(NAME) == 2


def test_a_persistent_500_gives_one_error_after_two_retries(
    chat: httpx.Client, fake: FakeOpenAI
) -> None:
    fake.default(NAME, Status(500))

    events = send(chat, "Is semaglutide approved for MASH?")

    error = the_error(events)
    assert error["code"] == "llm_error"
    assert MODEL in error["message"] and "HTTP 500" in error["message"]
    assert error["message"].endswith(f', to all 3 attempts. The provider said: "{FAKE_SAYS}"')
    assert MODEL in error["hint"]
    assert fake.calls(NAME) == 3
    # Without Retry-After the retries back off: about 0.5 s, then about 1 s.
    first, second = gaps(fake, NAME)
    assert 0.35 <= first < second < 1.5
    assert [(m["role"], m["status"]) for m in messages(chat, events)] == [
        ("user", "complete"),
        ("assistant", "error"),
    ]


def test_a_refused_key_is_not_retried(chat: httpx.Client, fake: FakeOpenAI) -> None:
    fake.script(NAME, Status(401, message="Incorrect API key provided"))

    error = the_error(send(chat, "Hello"))

    assert error["code"] == "api_key_invalid"
    assert error["message"] == (
        f"The {FAKE} API key was refused for {MODEL}."
        ' The provider said: "Incorrect API key provided"'
    )
    assert error["hint"].startswith(f"Update the {FAKE} API key")
    assert fake.calls(NAME) == 1


def test_an_exhausted_quota_is_not_retried(chat: httpx.Client, fake: FakeOpenAI) -> None:
    # OpenAI answers 429 for an exhausted quota too; its code tells it from a rate limit.
    fake.script(NAME, Status(429, retry_after=0.2, error_code="insufficient_quota"))

    error = the_error(send(chat, "Hello"))

    assert error["message"] == (
        f"{MODEL} refused the request: the account's quota or credits are used up (HTTP 429)."
        f' The provider said: "{FAKE_SAYS}"'
    )
    assert "Waiting will not help" in error["hint"] and FAKE in error["hint"]
    assert fake.calls(NAME) == 1


def test_a_hanging_provider_is_given_up_on_at_the_timeout(
    chat: httpx.Client, fake: FakeOpenAI
) -> None:
    fake.script(NAME, Hang(30))

    started = time.monotonic()
    events = send(chat, "Which trials report MACE outcomes?")
    elapsed = time.monotonic() - started

    error = the_error(events)
    assert error["code"] == "llm_error"
    assert error["message"] == f"{MODEL} did not answer within {TIMEOUT:g} s."
    assert "llm.timeout_seconds" in error["hint"]
    assert TIMEOUT - 0.2 <= elapsed < TIMEOUT + 1.5  # the budget, not three of them
    assert fake.calls(NAME) == 1  # the budget is spent: not retried
    assert [(m["role"], m["status"]) for m in messages(chat, events)] == [
        ("user", "complete"),
        ("assistant", "error"),
    ]


def test_a_stream_cut_half_way_is_kept_as_a_failed_answer_not_a_complete_one(
    chat: httpx.Client, fake: FakeOpenAI
) -> None:
    answer = "Tirzepatide lowered HbA1c. It also reduced weight by twenty percent."
    fake.script(NAME, Cut(answer, after=2, chunks=4))

    events = send(chat, "What did SURPASS show?")

    error = the_error(events)
    assert error["code"] == "llm_error"
    assert error["message"] == (
        f"The connection to {MODEL} broke off before its answer was complete."
    )
    assert MODEL in error["hint"] and "try again" in error["hint"]
    part = streamed(events)
    assert part and answer.startswith(part) and part != answer
    # Not retried: its first half already reached the user.
    assert fake.calls(NAME) == 1
    stored = messages(chat, events)
    assert [(m["role"], m["status"]) for m in stored] == [
        ("user", "complete"),
        ("assistant", "error"),
    ]
    assert stored[1]["content"] == part
    assert stored[1]["response"] is None  # no finished answer was stored
    assert stored[1]["error"]["message"] == error["message"]
