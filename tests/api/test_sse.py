"""The one SSE encoder, the response, and the turn it streams from: batching, keep-alives,
a client leaving, and the wire format of each stream (chat, stream creation, research)."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncGenerator, MutableMapping
from datetime import UTC, datetime
from typing import Any, Literal

from pydantic import BaseModel

from scholarstream.chat import Batch, MessageError, MessageView, Turn, TurnHub, stored_outcome
from scholarstream.chat.core import ErrorEvent, StatusEvent, TextDeltaEvent
from scholarstream.sse import (
    KEEPALIVE,
    EventBatch,
    EventStreamResponse,
    Identified,
    encode_batch,
    encode_event,
)
from scholarstream.streams import CreationEvent, turn_stream
from scholarstream.streams.core import GuideError, GuideTextDelta


class Note(BaseModel):
    type: Literal["note"] = "note"
    a: int


class Completed(BaseModel):
    type: Literal["research.completed"] = "research.completed"
    a: int


def note(event_id: str, a: int) -> Identified:
    return Identified(event_id, Note(a=a))


class Connection:
    """An ASGI client: records what the response sends; ``leave()`` disconnects."""

    def __init__(self) -> None:
        self.sent: list[MutableMapping[str, Any]] = []
        self._gone = asyncio.Event()

    async def receive(self) -> MutableMapping[str, Any]:
        await self._gone.wait()
        return {"type": "http.disconnect"}

    async def send(self, message: MutableMapping[str, Any]) -> None:
        self.sent.append(message)

    def leave(self) -> None:
        self._gone.set()

    @property
    def body(self) -> list[bytes]:
        return [m["body"] for m in self.sent if m["type"] == "http.response.body"]


async def test_chunks_are_sent_in_order_and_the_body_ends() -> None:
    async def chunks() -> AsyncGenerator[EventBatch, None]:
        yield [note("t:1", 1)]
        yield [note("t:2", 2)]

    connection = Connection()
    await EventStreamResponse(chunks())({"type": "http"}, connection.receive, connection.send)
    start = connection.sent[0]
    headers = dict(start["headers"])
    assert start["status"] == 200
    assert headers[b"content-type"].startswith(b"text/event-stream")
    assert b"content-length" not in headers
    assert headers[b"cache-control"] == b"no-cache"
    assert connection.body == [
        b'id: t:1\ndata: {"type":"note","a":1}\n\n',
        b'id: t:2\ndata: {"type":"note","a":2}\n\n',
        b"",
    ]
    assert connection.sent[-1]["more_body"] is False


async def test_the_head_goes_out_with_the_headers_before_any_chunk() -> None:
    async def chunks() -> AsyncGenerator[EventBatch, None]:
        yield [note("t:2", 2)]

    connection = Connection()
    await EventStreamResponse(chunks(), head=[note("t:1", 1)])(
        {"type": "http"}, connection.receive, connection.send
    )
    assert connection.sent[0]["type"] == "http.response.start"
    assert connection.body == [
        b'id: t:1\ndata: {"type":"note","a":1}\n\n',
        b'id: t:2\ndata: {"type":"note","a":2}\n\n',
        b"",
    ]


async def test_a_client_that_leaves_closes_the_stream() -> None:
    closed = asyncio.Event()

    async def endless() -> AsyncGenerator[EventBatch, None]:
        try:
            while True:
                yield []  # idle: a keep-alive
                await asyncio.sleep(0.01)
        finally:
            closed.set()

    connection = Connection()
    response = asyncio.create_task(
        EventStreamResponse(endless())({"type": "http"}, connection.receive, connection.send)
    )
    await asyncio.sleep(0.05)
    connection.leave()
    await asyncio.wait_for(response, 2)
    assert closed.is_set()
    assert connection.body[0] == KEEPALIVE


async def test_a_follower_gets_what_was_published_meanwhile_as_one_batch() -> None:
    turn = Turn("t", uuid.uuid4(), uuid.uuid4())
    turn.publish(StatusEvent(message="Thinking…"))
    follower = turn.follow(idle_seconds=None)
    first = await anext(follower)
    assert [n for n, _ in first] == [1]

    async def next_batch() -> Batch:
        return await anext(follower)

    waiting = asyncio.create_task(next_batch())
    await asyncio.sleep(0)
    turn.publish(TextDeltaEvent(text="a"))
    turn.publish(TextDeltaEvent(text="b"))
    batch = await waiting
    assert [(n, e.text) for n, e in batch if isinstance(e, TextDeltaEvent)] == [(2, "a"), (3, "b")]


async def test_an_idle_follower_gets_an_empty_batch_then_the_rest() -> None:
    turn = Turn("t", uuid.uuid4(), uuid.uuid4())
    follower = turn.follow(idle_seconds=0.02)
    assert await anext(follower) == []
    turn.publish(TextDeltaEvent(text="late"))
    assert [n for n, _ in await anext(follower)] == [1]
    turn.publish(ErrorEvent(message="stopped", code="cancelled"))
    assert [e.type for _, e in await anext(follower)] == ["error"]
    assert [b async for b in follower] == []


async def test_the_hub_forgets_finished_turns_after_their_retention_only() -> None:
    hub = TurnHub(grace_seconds=10, retain_seconds=0.05)
    owner = uuid.uuid4()
    release = asyncio.Event()

    def start(turn_id: str) -> Turn:
        turn = Turn(turn_id, owner, uuid.uuid4())

        async def work(t: Turn) -> None:
            await release.wait()

        hub.start(turn, work)
        return turn

    running, late, early = start("running"), start("late"), start("early")
    early.publish(ErrorEvent(message="stopped", code="cancelled"))
    await asyncio.sleep(0.03)
    late.publish(ErrorEvent(message="stopped", code="cancelled"))
    await asyncio.sleep(0.03)
    start("next")  # forgets what finished more than retain_seconds ago: "early" only
    assert hub.get("early", owner) is None
    assert hub.get("late", owner) is late
    assert hub.get("running", owner) is running
    assert hub.get("late", uuid.uuid4()) is None  # another user's turn is not found
    await asyncio.sleep(0.06)
    start("last")
    assert hub.get("late", owner) is None
    assert hub.get("running", owner) is running  # however long it runs
    release.set()
    await hub.close()


def test_a_named_event_carries_its_name_before_its_id() -> None:
    completed = Identified("7", Completed(a=1))
    assert encode_event(completed, named=True) == (
        b'event: research.completed\nid: 7\ndata: {"type":"research.completed","a":1}\n\n'
    )
    assert encode_event(completed) == b'id: 7\ndata: {"type":"research.completed","a":1}\n\n'


def test_a_batch_is_one_chunk_and_an_empty_batch_a_keepalive() -> None:
    assert encode_batch([note("1", 1), note("2", 2)]) == (
        b'id: 1\ndata: {"type":"note","a":1}\n\nid: 2\ndata: {"type":"note","a":2}\n\n'
    )
    assert encode_batch([]) == KEEPALIVE == b": keepalive\n\n"


async def test_a_chat_turn_streams_its_past_events_as_head_then_the_rest() -> None:
    hub = TurnHub(grace_seconds=10, retain_seconds=10)
    turn = Turn("t", uuid.uuid4(), uuid.uuid4())
    turn.publish(StatusEvent(message="Thinking…"))
    turn.publish(TextDeltaEvent(text="a"))
    stream = hub.stream(turn, after=1)
    assert [(e.id, e.event.type) for e in stream.head] == [("t:2", "text_delta")]
    turn.publish(ErrorEvent(message="stopped", code="cancelled"))
    rest = [batch async for batch in stream.rest]
    assert [[e.id for e in batch] for batch in rest] == [["t:3"]]
    assert encode_batch(stream.head) == b'id: t:2\ndata: {"type":"text_delta","text":"a"}\n\n'
    await hub.close()


def test_a_finished_turn_not_in_memory_streams_its_stored_outcome() -> None:
    answer = MessageView(
        id=uuid.uuid4(),
        role="assistant",
        content="",
        status="error",
        turn_id="t",
        response=None,
        error=MessageError(code="model_error", message="The model failed.", hint="Retry."),
        created_at=datetime.now(UTC),
    )
    assert encode_batch([stored_outcome("t", answer)]) == (
        b'id: t:final\ndata: {"type":"error","message":"The model failed.",'
        b'"code":"model_error","hint":"Retry.","conversation_id":null}\n\n'
    )


async def test_a_creation_turn_numbers_its_events_after_its_revision() -> None:
    async def events() -> AsyncGenerator[CreationEvent, None]:
        yield GuideTextDelta(text="a")
        yield GuideError(code="conflict", message="Over.")

    batches = [batch async for batch in turn_stream(3, events())]
    assert [[e.id for e in batch] for batch in batches] == [["3:1"], ["3:2"]]
    assert encode_batch(batches[0]) == b'id: 3:1\ndata: {"type":"text_delta","text":"a"}\n\n'


async def test_closing_a_turn_stream_counts_its_listener_out_at_once() -> None:
    hub = TurnHub(grace_seconds=10, retain_seconds=10)
    turn = Turn("t", uuid.uuid4(), uuid.uuid4())
    stream = hub.stream(turn)
    turn.publish(StatusEvent(message="Thinking…"))
    assert [e.id for e in await anext(stream.rest)] == ["t:1"]
    assert turn.listeners == 1
    await stream.rest.aclose()  # what the response does when the client leaves
    assert turn.listeners == 0
    await hub.close()
