"""A column's values for a batch of items: cached ones as they are, the others evaluated by
the model and stored for next time (failures are not stored, so they are tried again).

Each step has a short transaction of its own (read the cache; one per model call, for the
usage ledger; store the new values), so no transaction stays open while the model thinks:
SQLite allows one writer at a time, and a request's own transaction may already hold that
lock (an API token records its use)."""

from __future__ import annotations

import uuid
from collections.abc import Sequence

from sqlalchemy.exc import IntegrityError

from scholarstream.ai_columns._evaluator import ColumnEvaluator
from scholarstream.ai_columns._models import ColumnItem, ColumnValue, ColumnValues
from scholarstream.ai_columns._store import WHAT, AIColumnStore
from scholarstream.db import Database, OwnerScope
from scholarstream.errors import NotFoundError
from scholarstream.search import FallbackLog


async def column_values(
    database: Database,
    evaluator: ColumnEvaluator,
    owner_id: uuid.UUID,
    column_id: uuid.UUID,
    items: Sequence[ColumnItem],
) -> ColumnValues:
    """Values for every item, in the order given. ``NotFoundError`` for another user's or a
    deleted column; ``OfflineModeError`` when an item needs evaluating and no model is
    configured (cached values need no model)."""
    async with database.session() as session:
        store = AIColumnStore(OwnerScope(session, owner_id))
        column = await store.get(column_id)
        cached = await store.cached(column, items)
    missing = [item for item in items if item.key not in cached]
    fallbacks = FallbackLog()  # one notice per request, however many cells failed
    evaluated = await evaluator.evaluate(owner_id, column, missing, fallbacks=fallbacks)
    try:
        async with database.session() as session:
            store = AIColumnStore(OwnerScope(session, owner_id))
            await store.save(column, evaluated, {item.key: item for item in missing})
    except IntegrityError as exc:
        raise NotFoundError(
            f"The {WHAT} {column_id} was deleted while its values were computed.",
            hint="List the table's AI columns again.",
        ) from exc
    fresh: dict[str, ColumnValue] = {done.value.item_key: done.value for done in evaluated}
    return ColumnValues(
        column_id=column.id,
        values=[cached.get(item.key) or fresh[item.key] for item in items],
        fallbacks=fallbacks.items,
    )
