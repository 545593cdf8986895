"""Server-sent events: the one encoder, and the response that writes them straight to the
ASGI connection.

Every event is a typed model with a ``type`` literal (``TypedEvent``), sent with its SSE id
(an ``Envelope``); ``encode_batch`` is the one place events become ``id:``/``data:`` lines.
A producer is an async iterator of *batches*: the events ready together, written in one
chunk (a producer that got ahead is caught up in one write); an empty batch means the
producer was idle, and a keep-alive comment goes out. Routes hand a producer to
``EventStreamResponse`` and build no frames.

The response does two things per connection, none per event: it watches for the client
going away (then the producer is closed, so it sees its listener leave), and it ends the
body when the producer ends."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncGenerator, Mapping, Sequence
from typing import NamedTuple, Protocol

from starlette.responses import Response
from starlette.types import Receive, Scope, Send

__all__ = [
    "KEEPALIVE",
    "KEEPALIVE_SECONDS",
    "Envelope",
    "EventBatch",
    "EventStreamResponse",
    "Identified",
    "TypedEvent",
    "encode_batch",
    "encode_event",
    "ready",
]

KEEPALIVE = b": keepalive\n\n"
KEEPALIVE_SECONDS = 15.0
"""How long a producer may stay idle before it yields an empty batch (a keep-alive)."""
_NO_STORE = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}


class TypedEvent(Protocol):
    """An event model (pydantic): its ``type`` literal, and its JSON (``type`` included)."""

    @property
    def type(self) -> str: ...

    def model_dump_json(self) -> str: ...


class Envelope(Protocol):
    """One event as it goes out: its SSE id (what a reconnecting client sends back as
    ``Last-Event-ID``) and its model."""

    @property
    def id(self) -> str: ...

    @property
    def event(self) -> TypedEvent: ...


class Identified(NamedTuple):
    """The plain ``Envelope`` (a tuple: cheap to make, one per event)."""

    id: str
    event: TypedEvent


EventBatch = Sequence[Envelope]
"""Events ready together; empty: the producer was idle (a keep-alive is sent)."""


def encode_event(envelope: Envelope, *, named: bool = False) -> bytes:
    """One event: ``event: <type>`` when ``named`` (browsers' ``EventSource`` then delivers
    it to ``addEventListener(type)``), its id, and its compact JSON (one line) as data."""
    return encode_batch((envelope,), named=named)


def encode_batch(batch: EventBatch, *, named: bool = False) -> bytes:
    """A batch as one chunk; an empty batch is a keep-alive comment."""
    if not batch:
        return KEEPALIVE
    if named:
        text = "".join(
            f"event: {e.event.type}\nid: {e.id}\ndata: {e.event.model_dump_json()}\n\n"
            for e in batch
        )
    else:
        text = "".join(f"id: {e.id}\ndata: {e.event.model_dump_json()}\n\n" for e in batch)
    return text.encode()


async def ready(batch: EventBatch) -> AsyncGenerator[EventBatch, None]:
    """A producer of events that are all known now: one batch, then the end."""
    yield batch


class EventStreamResponse(Response):
    media_type = "text/event-stream"

    def __init__(
        self,
        batches: AsyncGenerator[EventBatch, None],
        *,
        head: EventBatch = (),
        named: bool = False,
        status_code: int = 200,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        """``head``: events that are ready now, written with the response headers; before
        the producer's first batch, and without waiting for its task to be scheduled.
        ``named``: each event carries its ``type`` as the SSE event name."""
        # Not Response.__init__: it would add "content-length: 0" for the empty body.
        self.status_code = status_code
        self.background = None
        self.init_headers({**_NO_STORE, **(headers or {})})
        self.batches = batches
        self.named = named
        self.head = encode_batch(head, named=named) if head else b""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await send(
            {"type": "http.response.start", "status": self.status_code, "headers": self.raw_headers}
        )
        if self.head:
            await send({"type": "http.response.body", "body": self.head, "more_body": True})
        writer = asyncio.create_task(self._write(send))
        watcher = asyncio.create_task(_until_disconnect(receive))
        try:
            await asyncio.wait({writer, watcher}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for task in (writer, watcher):
                task.cancel()
            await asyncio.gather(writer, watcher, return_exceptions=True)
        failure = None if writer.cancelled() else writer.exception()
        if failure is not None:
            raise failure

    async def _write(self, send: Send) -> None:
        async with contextlib.aclosing(self.batches) as batches:
            async for batch in batches:
                body = encode_batch(batch, named=self.named)
                await send({"type": "http.response.body", "body": body, "more_body": True})
        await send({"type": "http.response.body", "body": b"", "more_body": False})


async def _until_disconnect(receive: Receive) -> None:
    while (await receive())["type"] != "http.disconnect":
        pass
