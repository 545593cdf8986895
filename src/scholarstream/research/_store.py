"""Research records in the database, and the outbox of their lifecycle events.

Every change goes through ``ResearchStore.apply``: in one transaction it locks the
research's row, computes the change with a pure function of the core on the record it
read, saves the new record over exactly that revision and appends the change's events to
the outbox. Two changes of one research therefore never interleave: when two models
finish at the same instant, the second one's change is computed from the record that
already holds the first one's result, so exactly one of them sees every model done and
moves the research to ``synthesizing``.

The row lock is ``SELECT ... FOR UPDATE`` on PostgreSQL. SQLite has no row locks; there
the transaction first takes the database's write lock (a write that changes nothing), so
the record is read under that lock, across processes too. ``revision`` guards both: a save
is made only over the revision that was read; were it to have moved (a writer that
bypassed the lock), the change is computed again on the new record.
"""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Generic, TypeVar, cast

from sqlalchemy import CursorResult, Select, func, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from scholarstream.db import Database, OwnerScope
from scholarstream.db.tables import ResearchEventRow, ResearchRow
from scholarstream.errors import ConflictError, NotFoundError
from scholarstream.research.core import (
    Research,
    ResearchChange,
    ResearchEvent,
    ResearchStatus,
    research_event_adapter,
)

__all__ = [
    "ACTIVE_STATUSES",
    "AppliedChange",
    "ResearchStore",
    "StoredEvent",
    "StoredResearch",
    "read_outbox",
]

ChangeT = TypeVar("ChangeT", bound=ResearchChange)

# Saves tried when the revision moved between reading and saving (see _apply_once).
_SAVE_ATTEMPTS = 3


@dataclass(frozen=True)
class AppliedChange(Generic[ChangeT]):
    """A change as saved: ``revision`` is the row's revision after it (unchanged when the
    change changed nothing)."""

    owner_id: uuid.UUID
    change: ChangeT
    revision: int

    @property
    def research(self) -> Research:
        return self.change.research


@dataclass(frozen=True)
class StoredEvent:
    """An outbox event and its number in its research's outbox (from 1). An
    ``scholarstream.sse.Envelope``: its SSE id is its seq."""

    seq: int
    event: ResearchEvent

    @property
    def id(self) -> str:
        return str(self.seq)


async def read_outbox(
    session: AsyncSession,
    research_id: uuid.UUID,
    *,
    after_seq: int = 0,
    scope: OwnerScope | None = None,
) -> list[StoredEvent]:
    """The one read of a research's outbox: its events after ``after_seq``, in order.
    ``scope``: only that owner's rows; without one, every owner's (the webhook
    deliveries, which run for the system)."""
    base: Select[Any] = (
        scope.select(ResearchEventRow) if scope is not None else select(ResearchEventRow)
    )
    rows = await session.scalars(
        base.where(ResearchEventRow.research_id == research_id)
        .where(ResearchEventRow.seq > after_seq)
        .order_by(ResearchEventRow.seq)
    )
    return [
        StoredEvent(row.seq, research_event_adapter.validate_python(row.payload)) for row in rows
    ]


@dataclass(frozen=True)
class StoredResearch:
    """A research as saved, with its owner and revision."""

    owner_id: uuid.UUID
    research: Research
    revision: int


ACTIVE_STATUSES = (
    ResearchStatus.PROCESSING,
    ResearchStatus.RETRYING,
    ResearchStatus.SYNTHESIZING,
)


def _dump(research: Research) -> dict[str, object]:
    return research.model_dump(mode="json")


def _load(row: ResearchRow) -> Research:
    return Research.model_validate(row.record)


def _not_found(research_id: uuid.UUID) -> NotFoundError:
    return NotFoundError(
        "That research was not found: it was deleted, or it is not yours.",
        hint="Your research is listed on the Research page ('scholarstream research list').",
    )


async def _lock_sqlite(session: AsyncSession, research_id: uuid.UUID) -> None:
    # A write that changes nothing: it takes SQLite's write lock before the row is read,
    # as BEGIN IMMEDIATE would (SELECT ... FOR UPDATE is not SQLite syntax).
    await session.execute(
        update(ResearchRow)
        .where(ResearchRow.id == research_id)
        .values(revision=ResearchRow.revision)
    )


async def _no_lock(session: AsyncSession, research_id: uuid.UUID) -> None:
    """PostgreSQL locks the row with FOR UPDATE as it reads it."""


_WRITE_LOCKS: dict[str, Callable[[AsyncSession, uuid.UUID], Awaitable[None]]] = {
    "sqlite": _lock_sqlite,
    "postgresql": _no_lock,
}


class ResearchStore:
    # ``list`` comes last: below it, ``list`` in an annotation would name the method.

    def __init__(self, database: Database) -> None:
        self.database = database
        self._take_write_lock = _WRITE_LOCKS.get(database.engine.dialect.name, _no_lock)

    async def create(self, owner_id: uuid.UUID, research: Research) -> Research:
        async with self.database.session(write=True) as session:
            OwnerScope(session, owner_id).add(
                ResearchRow(
                    id=research.id,
                    status=research.status.value,
                    title=research.title,
                    record=_dump(research),
                    revision=0,
                    created_at=research.created_at,
                    updated_at=research.updated_at,
                )
            )
        return research

    async def get(self, owner_id: uuid.UUID, research_id: uuid.UUID) -> Research:
        """``NotFoundError`` for an unknown id and for another user's research alike."""
        async with self.database.session() as session:
            row = await self._row(OwnerScope(session, owner_id), research_id)
            return _load(row)

    async def get_stored(self, owner_id: uuid.UUID, research_id: uuid.UUID) -> StoredResearch:
        async with self.database.session() as session:
            row = await self._row(OwnerScope(session, owner_id), research_id)
            return StoredResearch(owner_id, _load(row), row.revision)

    async def active(self) -> list[StoredResearch]:
        """Every user's research still calling models or synthesising (for the engine's
        sweep, which makes sure each has its workflows)."""
        async with self.database.session() as session:
            rows = await session.scalars(
                select(ResearchRow).where(
                    ResearchRow.status.in_([s.value for s in ACTIVE_STATUSES])
                )
            )
            return [StoredResearch(row.owner_id, _load(row), row.revision) for row in rows]

    async def completed_since(self, since: datetime) -> list[StoredResearch]:
        """Every user's research completed (or changed once completed) since ``since``
        (for the engine's sweep, which makes sure each was shared)."""
        async with self.database.session() as session:
            rows = await session.scalars(
                select(ResearchRow).where(
                    ResearchRow.status == ResearchStatus.COMPLETED.value,
                    ResearchRow.updated_at >= since,
                )
            )
            return [StoredResearch(row.owner_id, _load(row), row.revision) for row in rows]

    async def apply(
        self,
        owner_id: uuid.UUID,
        research_id: uuid.UUID,
        change_fn: Callable[[Research], ChangeT],
        *,
        expected_revision: int | None = None,
    ) -> AppliedChange[ChangeT]:
        """Lock the research, compute ``change_fn(research)``, save the new record and its
        events; all or nothing. ``expected_revision``: refuse (``ConflictError``) unless
        the research is still at that revision. Errors of ``change_fn`` (a
        ``ConflictError`` for a status that does not allow the change ...) leave
        everything as it was."""
        for _ in range(_SAVE_ATTEMPTS):
            applied = await self._apply_once(owner_id, research_id, change_fn, expected_revision)
            if applied is not None:
                return applied
        raise ConflictError(
            f"Research {research_id} kept changing while this change was saved.",
            hint="Try again.",
        )

    async def events(
        self, owner_id: uuid.UUID, research_id: uuid.UUID, *, after_seq: int = 0
    ) -> list[StoredEvent]:
        """The research's outbox events after ``after_seq``, in order."""
        async with self.database.session() as session:
            scope = OwnerScope(session, owner_id)
            await self._row(scope, research_id)
            return await read_outbox(session, research_id, after_seq=after_seq, scope=scope)

    async def _row(self, scope: OwnerScope, research_id: uuid.UUID) -> ResearchRow:
        row = await scope.session.scalar(
            scope.select(ResearchRow).where(ResearchRow.id == research_id)
        )
        if row is None:
            raise _not_found(research_id)
        return row

    async def _apply_once(
        self,
        owner_id: uuid.UUID,
        research_id: uuid.UUID,
        change_fn: Callable[[Research], ChangeT],
        expected_revision: int | None,
    ) -> AppliedChange[ChangeT] | None:
        """``None`` when the row changed between reading and saving (nothing saved)."""
        async with self.database.session(write=True) as session:
            await self._take_write_lock(session, research_id)
            row = await session.scalar(
                OwnerScope(session, owner_id)
                .select(ResearchRow)
                .where(ResearchRow.id == research_id)
                .with_for_update()
            )
            if row is None:
                raise _not_found(research_id)
            if expected_revision is not None and row.revision != expected_revision:
                raise ConflictError(
                    f"Research {research_id} has changed since revision {expected_revision}.",
                    hint="Reload it and decide again.",
                )
            before = _load(row)
            change = change_fn(before)
            if change.research == before and not change.events:
                return AppliedChange(owner_id, change, row.revision)
            revision = row.revision + 1
            saved = await session.execute(
                update(ResearchRow)
                .where(ResearchRow.id == row.id, ResearchRow.revision == row.revision)
                .values(
                    status=change.research.status.value,
                    title=change.research.title,
                    record=_dump(change.research),
                    updated_at=change.research.updated_at,
                    revision=revision,
                )
                .execution_options(synchronize_session=False)
            )
            # Only a writer that bypassed the lock can have moved the revision on.
            if cast("CursorResult[Any]", saved).rowcount != 1:
                return None
            await self._append_events(session, owner_id, research_id, change.events)
            return AppliedChange(owner_id, change, revision)

    async def _append_events(
        self,
        session: AsyncSession,
        owner_id: uuid.UUID,
        research_id: uuid.UUID,
        events: Sequence[ResearchEvent],
    ) -> None:
        if not events:
            return
        last = await session.scalar(
            select(func.max(ResearchEventRow.seq)).where(
                ResearchEventRow.research_id == research_id
            )
        )
        scope = OwnerScope(session, owner_id)
        for seq, event in enumerate(events, start=(last or 0) + 1):
            scope.add(
                ResearchEventRow(
                    research_id=research_id,
                    seq=seq,
                    type=event.type,
                    payload=event.model_dump(mode="json"),
                )
            )

    async def list(
        self,
        owner_id: uuid.UUID,
        *,
        statuses: Sequence[ResearchStatus] | None = None,
        limit: int | None = None,
    ) -> list[Research]:
        """The owner's research, newest first."""
        async with self.database.session() as session:
            query = (
                OwnerScope(session, owner_id)
                .select(ResearchRow)
                .order_by(ResearchRow.created_at.desc(), ResearchRow.id)
            )
            if statuses is not None:
                query = query.where(ResearchRow.status.in_([s.value for s in statuses]))
            if limit is not None:
                query = query.limit(limit)
            return [_load(row) for row in await session.scalars(query)]
