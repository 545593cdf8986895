"""Answers in flight. A turn runs as its own task, apart from the HTTP connection that
asked for it, and keeps every event it published; any number of listeners follow it from
any point (``Last-Event-ID``). A turn nobody listens to is cancelled after a grace period,
so a closed tab stops paying for tokens while a dropped connection can still reconnect.

``TurnHub.stream`` is a turn as server-sent events (``scholarstream.sse``): each event with
its id ``<turn>:<n>``; ``stored_outcome`` is the one event of a finished turn no longer in
memory, read back from its stored answer."""

from __future__ import annotations

import asyncio
import contextlib
import time
import uuid
from collections import deque
from collections.abc import AsyncGenerator, Callable, Coroutine
from dataclasses import dataclass
from typing import Any

from scholarstream.chat._conversations import MessageView
from scholarstream.chat.core import (
    TERMINAL_TYPES,
    ChatEvent,
    CompleteEvent,
    ErrorEvent,
    event_id,
)
from scholarstream.sse import KEEPALIVE_SECONDS, Identified

Batch = list[tuple[int, ChatEvent]]


@dataclass(frozen=True)
class TurnStream:
    """A turn as server-sent events: ``head``, what was published already (sent with the
    response headers), then ``rest``, each batch as it is published (empty when idle)."""

    head: list[Identified]
    rest: AsyncGenerator[list[Identified], None]


def _identified(turn: Turn, batch: Batch) -> list[Identified]:
    return [Identified(event_id(turn.id, n), event) for n, event in batch]


def stored_outcome(turn_id: str, answer: MessageView) -> Identified:
    """The terminal event of a finished turn, from its stored answer (id ``<turn>:final``):
    ``complete`` with the response, else an ``error`` saying what became of it."""
    return Identified(f"{turn_id}:final", _final_event(answer))


def _final_event(answer: MessageView) -> ChatEvent:
    if answer.status == "complete" and answer.response is not None:
        return CompleteEvent(payload=answer.response)
    if answer.status == "running":
        return ErrorEvent(
            code="turn_unavailable",
            message="This answer is not running in this server process any more.",
            hint="Reload the conversation; if the server restarted, ask again.",
        )
    error = answer.error
    return ErrorEvent(
        code=error.code if error else answer.status,
        message=error.message if error else "The answer did not complete.",
        hint=error.hint if error else None,
    )


class Turn:
    def __init__(self, turn_id: str, owner_id: uuid.UUID, conversation_id: uuid.UUID) -> None:
        self.id = turn_id
        self.owner_id = owner_id
        self.conversation_id = conversation_id
        self.events: list[ChatEvent] = []
        self.done = False
        self.finished_at: float | None = None
        self.listeners = 0
        self.task: asyncio.Task[None] | None = None
        self._waiters: list[asyncio.Future[bool]] = []
        # Called once with the turn when it publishes its terminal event (the hub's).
        self.on_finish: Callable[[Turn], object] | None = None

    def publish(self, event: ChatEvent) -> int:
        """Stores the event and wakes the listeners; its sequence number (from 1)."""
        if self.done:
            raise RuntimeError(f"turn {self.id} has finished; nothing more can be published")
        self.events.append(event)
        if event.type in TERMINAL_TYPES:
            self.done = True
            self.finished_at = time.monotonic()
            if self.on_finish is not None:
                self.on_finish(self)
        waiters, self._waiters = self._waiters, []
        for waiter in waiters:
            _wake(waiter, True)
        return len(self.events)

    async def follow(
        self, after: int = 0, *, idle_seconds: float | None = None
    ) -> AsyncGenerator[Batch, None]:
        """Events after sequence number ``after``, live, until the terminal event: each
        batch is everything published since the last one; an empty batch means nothing
        was published for ``idle_seconds``."""
        sent = after
        while True:
            if sent < len(self.events):
                batch = list(enumerate(self.events[sent:], start=sent + 1))
                sent = len(self.events)
                yield batch
            elif self.done:
                return
            elif not await self.next_publish(idle_seconds):
                yield []

    async def next_publish(self, idle_seconds: float | None) -> bool:
        """Until the next publish (True) or ``idle_seconds`` (False)."""
        loop = asyncio.get_running_loop()
        waiter: asyncio.Future[bool] = loop.create_future()
        self._waiters.append(waiter)
        timer = (
            loop.call_later(idle_seconds, _wake, waiter, False)
            if idle_seconds is not None
            else None
        )
        try:
            published = await waiter
        finally:
            if timer is not None:
                timer.cancel()
        if not published and waiter in self._waiters:
            self._waiters.remove(waiter)
        return published


def _wake(waiter: asyncio.Future[bool], published: bool) -> None:
    if not waiter.done():
        waiter.set_result(published)


class TurnHub:
    def __init__(self, *, grace_seconds: float, retain_seconds: float) -> None:
        self.grace_seconds = grace_seconds
        self.retain_seconds = retain_seconds
        self._turns: dict[str, Turn] = {}
        # Finished turns in the order they finished (so, of their ``finished_at``): the
        # expired ones are at the front, and forgetting them never scans the running ones.
        self._finished: deque[Turn] = deque()

    @staticmethod
    def new_turn_id() -> str:
        return uuid.uuid4().hex

    def start(self, turn: Turn, work: Callable[[Turn], Coroutine[Any, Any, None]]) -> None:
        self._forget_old()
        self._turns[turn.id] = turn
        if turn.done:
            self._finished.append(turn)
        else:
            turn.on_finish = self._finished.append
        turn.task = asyncio.create_task(work(turn), name=f"chat-turn-{turn.id}")

    def get(self, turn_id: str, owner_id: uuid.UUID) -> Turn | None:
        turn = self._turns.get(turn_id)
        return turn if turn is not None and turn.owner_id == owner_id else None

    async def listen(
        self, turn: Turn, after: int = 0, *, idle_seconds: float | None = None
    ) -> AsyncGenerator[Batch, None]:
        """``follow``, counted as a listener: when the last one goes while the turn still
        runs, the grace period starts."""
        turn.listeners += 1
        try:
            following = turn.follow(after, idle_seconds=idle_seconds)
            async with contextlib.aclosing(following) as batches:
                async for batch in batches:
                    yield batch
        finally:
            turn.listeners -= 1
            if turn.listeners == 0 and not turn.done:
                asyncio.get_running_loop().call_later(self.grace_seconds, self._abandon, turn)

    def stream(
        self, turn: Turn, after: int = 0, *, idle_seconds: float = KEEPALIVE_SECONDS
    ) -> TurnStream:
        """The turn's events after sequence number ``after`` as server-sent events, counted
        as a listener while ``rest`` is followed."""
        ready = len(turn.events)  # the events published so far go out with the headers
        head = _identified(turn, list(enumerate(turn.events[after:ready], start=after + 1)))

        async def rest() -> AsyncGenerator[list[Identified], None]:
            # Closed with ``rest``: the listener is counted out at once, not when collected.
            listening = self.listen(turn, max(after, ready), idle_seconds=idle_seconds)
            async with contextlib.aclosing(listening) as batches:
                async for batch in batches:
                    yield _identified(turn, batch)

        return TurnStream(head, rest())

    def _abandon(self, turn: Turn) -> None:
        if turn.listeners == 0 and not turn.done and turn.task is not None:
            turn.task.cancel()

    async def cancel(self, turn: Turn) -> None:
        if turn.task is not None and not turn.task.done():
            turn.task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await turn.task

    def _forget_old(self) -> None:
        now = time.monotonic()
        finished = self._finished
        while finished:
            turn = finished[0]
            assert turn.finished_at is not None
            if now - turn.finished_at <= self.retain_seconds:
                break
            finished.popleft()
            if self._turns.get(turn.id) is turn:
                del self._turns[turn.id]

    async def close(self) -> None:
        """Shutdown: stop every running turn (each saves what it has)."""
        for turn in list(self._turns.values()):
            await self.cancel(turn)
        self._turns.clear()
        self._finished.clear()
