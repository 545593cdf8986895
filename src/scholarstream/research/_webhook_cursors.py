"""Each webhook's progress through each research's outbox (``research_webhook_cursors``).

A deliverer first *claims* the cursor of (research, webhook): a conditional update that
succeeds only when nobody holds its lease and no retry is pending, so one deliverer at a
time sends one research's events to one webhook, in ``seq`` order. Every later write is
conditional on its lease token: a deliverer whose lease ran out (it stalled) cannot move
a cursor another one now holds. A cursor is created (at 0: the research's events from
the first) the first time its research is delivered to the webhook.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, cast

from sqlalchemy import CursorResult, Select, and_, func, or_, select, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.sql.expression import Executable

from scholarstream.db import Database
from scholarstream.db.tables import ResearchEventRow, ResearchRow, ResearchWebhookCursorRow
from scholarstream.research._store import StoredEvent, read_outbox

__all__ = ["BUSY_RETRY_SECONDS", "Claim", "WebhookCursors"]

_Cursor = ResearchWebhookCursorRow

BUSY_RETRY_SECONDS = 1.0
"""When another deliverer holds the cursor: look again this much later (it may have read
the outbox before the event this deliverer came for was saved)."""


@dataclass(frozen=True)
class Claim:
    """A cursor held until the lease is given back or runs out."""

    lease: uuid.UUID
    delivered_seq: int
    attempts: int


_KEY = ["research_id", "webhook"]


def _sqlite_insert(values: dict[str, Any]) -> Executable:
    return sqlite.insert(_Cursor).values(**values).on_conflict_do_nothing(index_elements=_KEY)


def _postgresql_insert(values: dict[str, Any]) -> Executable:
    return postgresql.insert(_Cursor).values(**values).on_conflict_do_nothing(index_elements=_KEY)


# A new cursor, unless it is there already (two deliverers may create it at once).
_INSERTS: dict[str, Callable[[dict[str, Any]], Executable]] = {
    "sqlite": _sqlite_insert,
    "postgresql": _postgresql_insert,
}


def _one(research_id: uuid.UUID, webhook: str) -> Select[ResearchWebhookCursorRow]:
    return select(_Cursor).where(_Cursor.research_id == research_id, _Cursor.webhook == webhook)


def _rowcount(result: object) -> int:
    return cast("CursorResult[Any]", result).rowcount


class WebhookCursors:
    def __init__(self, database: Database) -> None:
        self.database = database
        self._insert = _INSERTS[database.engine.dialect.name]

    async def claim(
        self, research_id: uuid.UUID, webhook: str, *, now: datetime, lease_seconds: float
    ) -> Claim | float | None:
        """The cursor, held; or the seconds until it may be claimed (a retry is due then,
        or another deliverer holds it); ``None`` when the research is gone."""
        lease = uuid.uuid4()
        async with self.database.session(write=True) as session:
            owner_id = await session.scalar(
                select(ResearchRow.owner_id).where(ResearchRow.id == research_id)
            )
            if owner_id is None:
                return None
            await session.execute(
                self._insert(
                    {
                        "id": uuid.uuid4(),
                        "owner_id": owner_id,
                        "research_id": research_id,
                        "webhook": webhook,
                        "delivered_seq": 0,
                        "attempts": 0,
                        "given_up": 0,
                        "updated_at": now,
                    }
                )
            )
            claimed = await session.execute(
                update(_Cursor)
                .where(
                    _Cursor.research_id == research_id,
                    _Cursor.webhook == webhook,
                    or_(_Cursor.lease_until.is_(None), _Cursor.lease_until < now),
                    or_(_Cursor.next_attempt_at.is_(None), _Cursor.next_attempt_at <= now),
                )
                .values(
                    lease_token=lease,
                    lease_until=now + timedelta(seconds=lease_seconds),
                    updated_at=now,
                )
                .execution_options(synchronize_session=False)
            )
            row = await session.scalar(_one(research_id, webhook))
            assert row is not None
            if _rowcount(claimed) == 1:
                return Claim(lease=lease, delivered_seq=row.delivered_seq, attempts=row.attempts)
            if row.lease_until is not None and row.lease_until >= now:
                return BUSY_RETRY_SECONDS
            due = row.next_attempt_at or now
            return max((due - now).total_seconds(), 0.0)

    async def events_after(self, research_id: uuid.UUID, seq: int) -> list[StoredEvent]:
        async with self.database.session() as session:
            return await read_outbox(session, research_id, after_seq=seq)

    async def advance(
        self,
        research_id: uuid.UUID,
        webhook: str,
        claim: Claim,
        seq: int,
        *,
        now: datetime,
        lease_seconds: float,
        given_up_error: str | None = None,
    ) -> bool:
        """Everything up to ``seq`` is done (delivered, filtered out, or given up with
        ``given_up_error``); the lease is renewed. ``False``: the lease was lost."""
        values: dict[str, Any] = {
            "delivered_seq": seq,
            "attempts": 0,
            "next_attempt_at": None,
            "lease_until": now + timedelta(seconds=lease_seconds),
            "updated_at": now,
        }
        if given_up_error is not None:
            values |= {"given_up": _Cursor.given_up + 1, "last_error": given_up_error}
        return await self._update_held(research_id, webhook, claim, values)

    async def retry_later(
        self,
        research_id: uuid.UUID,
        webhook: str,
        claim: Claim,
        *,
        attempts: int,
        at: datetime,
        error: str,
        now: datetime,
    ) -> bool:
        """The next event failed ``attempts`` times: try again ``at``; the lease is given
        back."""
        return await self._update_held(
            research_id,
            webhook,
            claim,
            {
                "attempts": attempts,
                "next_attempt_at": at,
                "last_error": error,
                "lease_token": None,
                "lease_until": None,
                "updated_at": now,
            },
        )

    async def release(
        self, research_id: uuid.UUID, webhook: str, claim: Claim, *, now: datetime
    ) -> None:
        await self._update_held(
            research_id,
            webhook,
            claim,
            {"lease_token": None, "lease_until": None, "updated_at": now},
        )

    async def _update_held(
        self, research_id: uuid.UUID, webhook: str, claim: Claim, values: dict[str, Any]
    ) -> bool:
        async with self.database.session(write=True) as session:
            result = await session.execute(
                update(_Cursor)
                .where(
                    _Cursor.research_id == research_id,
                    _Cursor.webhook == webhook,
                    _Cursor.lease_token == claim.lease,
                )
                .values(**values)
                .execution_options(synchronize_session=False)
            )
            return _rowcount(result) == 1

    async def cursor(self, research_id: uuid.UUID, webhook: str) -> ResearchWebhookCursorRow | None:
        """The cursor as stored (for tests and diagnostics)."""
        async with self.database.session() as session:
            return await session.scalar(_one(research_id, webhook))

    async def backlog(
        self, webhooks: Sequence[str], *, since: datetime, now: datetime
    ) -> list[uuid.UUID]:
        """Research with events some of ``webhooks`` may still be owed: those with events
        saved since ``since`` that a webhook has not got to, and those whose cursor waits
        for a retry (due by ``now``) or holds a lease that ran out."""
        if not webhooks:
            return []
        async with self.database.session() as session:
            recent = set(
                await session.scalars(
                    select(ResearchEventRow.research_id)
                    .where(ResearchEventRow.created_at >= since)
                    .distinct()
                )
            )
            stuck = set(
                await session.scalars(
                    select(_Cursor.research_id)
                    .where(
                        _Cursor.webhook.in_(webhooks),
                        or_(
                            and_(
                                _Cursor.next_attempt_at.is_not(None),
                                _Cursor.next_attempt_at <= now,
                            ),
                            and_(_Cursor.lease_until.is_not(None), _Cursor.lease_until < now),
                        ),
                    )
                    .distinct()
                )
            )
            candidates = recent | stuck
            if not candidates:
                return []
            last_seq: dict[uuid.UUID, int] = {
                research_id: seq
                for research_id, seq in await session.execute(
                    select(ResearchEventRow.research_id, func.max(ResearchEventRow.seq))
                    .where(ResearchEventRow.research_id.in_(candidates))
                    .group_by(ResearchEventRow.research_id)
                )
            }
            done: dict[tuple[uuid.UUID, str], int] = {
                (research_id, webhook): seq
                for research_id, webhook, seq in await session.execute(
                    select(_Cursor.research_id, _Cursor.webhook, _Cursor.delivered_seq).where(
                        _Cursor.research_id.in_(candidates), _Cursor.webhook.in_(webhooks)
                    )
                )
            }
        return sorted(
            research_id
            for research_id, last in last_seq.items()
            if any(done.get((research_id, webhook), 0) < last for webhook in webhooks)
        )
