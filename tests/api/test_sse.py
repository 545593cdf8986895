"""The SSE response and the turn it streams from: batching, keep-alives, a client leaving."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncGenerator, MutableMapping
from typing import Any

from scholarstream.chat.core.events import ErrorEvent, StatusEvent, TextDeltaEvent
from scholarstream.chat.turns import Batch, Turn, TurnHub
from scholarstream.sse import KEEPALIVE, EventStreamResponse, encode_sse


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
    async def chunks() -> AsyncGenerator[bytes, None]:
        yield encode_sse("t:1", '{"a":1}')
        yield encode_sse("t:2", '{"a":2}')

    connection = Connection()
    await EventStreamResponse(chunks())({"type": "http"}, connection.receive, connection.send)
    start = connection.sent[0]
    headers = dict(start["headers"])
    assert start["status"] == 200
    assert headers[b"content-type"].startswith(b"text/event-stream")
    assert b"content-length" not in headers
    assert headers[b"cache-control"] == b"no-cache"
    assert connection.body == [b'id: t:1\ndata: {"a":1}\n\n', b'id: t:2\ndata: {"a":2}\n\n', b""]
    assert connection.sent[-1]["more_body"] is False


async def test_the_head_goes_out_with_the_headers_before_any_chunk() -> None:
    async def chunks() -> AsyncGenerator[bytes, None]:
        yield encode_sse("t:2", '{"a":2}')

    connection = Connection()
    head = encode_sse("t:1", '{"a":1}')
    await EventStreamResponse(chunks(), head=head)(
        {"type": "http"}, connection.receive, connection.send
    )
    assert connection.sent[0]["type"] == "http.response.start"
    assert connection.body == [head, b'id: t:2\ndata: {"a":2}\n\n', b""]


async def test_a_client_that_leaves_closes_the_stream() -> None:
    closed = asyncio.Event()

    async def endless() -> AsyncGenerator[bytes, None]:
        try:
            while True:
                yield KEEPALIVE
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
    assert encode_sse("7", '{"a":1}', event="research.completed") == (
        b'event: research.completed\nid: 7\ndata: {"a":1}\n\n'
    )
    assert encode_sse("7", "{}") == b"id: 7\ndata: {}\n\n"
