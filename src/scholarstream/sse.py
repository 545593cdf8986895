"""Server-sent events written straight to the ASGI connection.

A stream is an async iterator of ready-encoded chunks; each chunk may hold several events,
so a producer that got ahead is caught up in one write. The response does two things per
connection, none per event: it watches for the client going away (then the iterator is
closed, so the producer sees its listener leave), and it ends the body when the iterator
ends. Keep-alives are the producer's: it yields ``KEEPALIVE`` when it has been idle."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncGenerator, Mapping

from starlette.responses import Response
from starlette.types import Receive, Scope, Send

KEEPALIVE = b": keepalive\n\n"
_NO_STORE = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}


def encode_sse(event_id: str, data: str, *, event: str | None = None) -> bytes:
    """One event: its id, its name if given (browsers' ``EventSource`` then delivers it to
    ``addEventListener(event)``), and its data. ``data`` must be one line (compact JSON is)."""
    name = f"event: {event}\n" if event else ""
    return f"{name}id: {event_id}\ndata: {data}\n\n".encode()


class EventStreamResponse(Response):
    media_type = "text/event-stream"

    def __init__(
        self,
        chunks: AsyncGenerator[bytes, None],
        *,
        head: bytes = b"",
        status_code: int = 200,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        """``head``: events that are ready now, written with the response headers; before
        the producer's first chunk, and without waiting for its task to be scheduled."""
        # Not Response.__init__: it would add "content-length: 0" for the empty body.
        self.status_code = status_code
        self.background = None
        self.init_headers({**_NO_STORE, **(headers or {})})
        self.chunks = chunks
        self.head = head

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
        async with contextlib.aclosing(self.chunks) as chunks:
            async for chunk in chunks:
                await send({"type": "http.response.body", "body": chunk, "more_body": True})
        await send({"type": "http.response.body", "body": b"", "more_body": False})


async def _until_disconnect(receive: Receive) -> None:
    while (await receive())["type"] != "http.disconnect":
        pass
