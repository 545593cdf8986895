"""Answers in flight. A turn runs as its own task, apart from the HTTP connection that
asked for it, and keeps every event it published; any number of listeners follow it from
any point (``Last-Event-ID``). A turn nobody listens to is cancelled after a grace period,
so a closed tab stops paying for tokens while a dropped connection can still reconnect."""

from __future__ import annotations

import asyncio
import contextlib
import time
import uuid
from collections import deque
from collections.abc import AsyncIterator, Callable, Coroutine
from typing import Any

from scholarstream.chat.core.events import TERMINAL_TYPES, ChatEvent

Batch = list[tuple[int, ChatEvent]]


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
    ) -> AsyncIterator[Batch]:
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
    ) -> AsyncIterator[Batch]:
        """``follow``, counted as a listener: when the last one goes while the turn still
        runs, the grace period starts."""
        turn.listeners += 1
        try:
            async for batch in turn.follow(after, idle_seconds=idle_seconds):
                yield batch
        finally:
            turn.listeners -= 1
            if turn.listeners == 0 and not turn.done:
                asyncio.get_running_loop().call_later(self.grace_seconds, self._abandon, turn)

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
