"""Following one research's outbox (its ``research-events``): the one reader of stored
events for a live subscriber.

``OutboxReader.follow`` yields the events after a point (a client's ``Last-Event-ID``),
then each new one as the outbox gets it, in batches, until the research is completed or
failed; an empty batch means nothing came for ``keepalive_seconds``. A ``StoredEvent`` is
an ``scholarstream.sse.Envelope`` (its seq is its SSE id), so the API streams the batches
as they are; the CLI and any other subscriber read the same typed events."""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import AsyncGenerator

from scholarstream.research._store import ResearchStore, StoredEvent
from scholarstream.research.core import ResearchStatus
from scholarstream.sse import KEEPALIVE_SECONDS

__all__ = ["FINISHED", "MAX_SEQ", "POLL_SECONDS", "OutboxReader"]

POLL_SECONDS = 0.25
"""How often a follower looks for new events in the outbox."""
MAX_SEQ = 2**31 - 1
"""The largest event seq: the outbox's seq column is a 32-bit INTEGER (PostgreSQL)."""

FINISHED = frozenset({ResearchStatus.COMPLETED, ResearchStatus.FAILED})
_FINISHED_EVENTS = frozenset({"research.completed", "research.failed"})


class OutboxReader:
    def __init__(
        self,
        store: ResearchStore,
        *,
        poll_seconds: float = POLL_SECONDS,
        keepalive_seconds: float = KEEPALIVE_SECONDS,
    ) -> None:
        self.store = store
        self.poll_seconds = poll_seconds
        self.keepalive_seconds = keepalive_seconds

    async def open(
        self, owner_id: uuid.UUID, research_id: uuid.UUID, *, after: int = 0
    ) -> AsyncGenerator[list[StoredEvent], None] | None:
        """``follow``, checked first: ``NotFoundError`` for an unknown research (or another
        user's), ``None`` when it is completed or failed and no event follows ``after``
        (nothing will ever come)."""
        research = await self.store.get(owner_id, research_id)
        if research.status in FINISHED and not await self.store.events(
            owner_id, research_id, after_seq=after
        ):
            return None
        return self.follow(owner_id, research_id, after=after)

    async def follow(
        self, owner_id: uuid.UUID, research_id: uuid.UUID, *, after: int = 0
    ) -> AsyncGenerator[list[StoredEvent], None]:
        """The events after seq ``after``, then each new one as the outbox gets it, until
        the research is completed or failed (the last batch then ends with
        ``research.completed`` or ``research.failed`` when the outbox has it). Closing the
        generator stops the polling."""
        store = self.store
        idle_since = time.monotonic()
        while True:
            batch = await store.events(owner_id, research_id, after_seq=after)
            finished = False
            if not batch:
                finished = (await store.get(owner_id, research_id)).status in FINISHED
                if finished:
                    # A status and its events are saved together: read after the status,
                    # every event up to it is in the outbox.
                    batch = await store.events(owner_id, research_id, after_seq=after)
            if batch:
                yield batch
                after = batch[-1].seq
                idle_since = time.monotonic()
                if batch[-1].event.type in _FINISHED_EVENTS:
                    return
            if finished:
                return
            if time.monotonic() - idle_since >= self.keepalive_seconds:
                yield []
                idle_since = time.monotonic()
            await asyncio.sleep(self.poll_seconds)
