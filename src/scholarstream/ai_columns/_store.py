"""AI columns and their cached values, always through the owner's scope: another user's
column is simply not found.

A cached value is keyed on (column, item key) and remembers ``content_hash``, the SHA-256 of
the column's criteria, output type and categories and of the item's text; a value whose hash
no longer matches (the column or the item was edited) is a miss and is evaluated again."""

from __future__ import annotations

import hashlib
import json
import uuid
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from pydantic import ValidationError
from sqlalchemy import Insert, Table
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.exc import IntegrityError

from scholarstream.ai_columns._models import (
    RESULTS_TABLES,
    AIColumn,
    AIColumnSpec,
    AIColumnUpdate,
    ColumnItem,
    ColumnValue,
    EvaluatedValue,
    ResultsTable,
)
from scholarstream.db import OwnerScope, utcnow
from scholarstream.db.tables import AIColumnRow, AIColumnValueRow
from scholarstream.errors import ConfigurationError, ConflictError, InvalidInputError
from scholarstream.validation_messages import explain

WHAT = "AI column"


def content_hash(column: AIColumn, item: ColumnItem) -> str:
    """What a value depends on: the question asked and the text it was asked of."""
    payload = json.dumps(
        [column.criteria, column.output_type, column.categories or [], item.text()],
        ensure_ascii=False,
        separators=(",", ":"),
    )
    return hashlib.sha256(payload.encode()).hexdigest()


def to_column(row: AIColumnRow) -> AIColumn:
    categories = (row.options or {}).get("categories")
    return AIColumn(
        id=row.id,
        table=row.table_key,
        name=row.name,
        criteria=row.criteria,
        output_type=row.output_type,
        categories=list(categories) if categories else None,
        created_at=row.created_at,
    )


def _options(spec: AIColumnSpec) -> dict[str, Any]:
    return {"categories": spec.categories} if spec.categories else {}


# "INSERT ... ON CONFLICT DO UPDATE" per database: two requests that evaluate the same new
# item at once both store it, the later one wins, neither fails.
_UPSERTS: dict[str, Callable[[Table], Any]] = {
    "sqlite": sqlite.insert,
    "postgresql": postgresql.insert,
}


class AIColumnStore:
    def __init__(self, scope: OwnerScope) -> None:
        self.scope = scope

    # --- columns -------------------------------------------------------------------------

    async def list(self, table: str) -> list[AIColumn]:
        query = (
            self.scope.select(AIColumnRow)
            .where(AIColumnRow.table_key == _table_key(table))
            .order_by(AIColumnRow.created_at, AIColumnRow.name)
        )
        return [to_column(row) for row in await self.scope.session.scalars(query)]

    async def get(self, column_id: uuid.UUID) -> AIColumn:
        return to_column(await self._row(column_id))

    async def create(self, table: str, spec: AIColumnSpec) -> AIColumn:
        table = _table_key(table)
        await self._check_free_name(table, spec.name)
        row = AIColumnRow(
            table_key=table,
            name=spec.name,
            criteria=spec.criteria,
            output_type=spec.output_type,
            options=_options(spec),
            created_at=utcnow(),
        )
        await self._flush_new_name(row, add=True)
        return to_column(row)

    async def update(self, column_id: uuid.UUID, update: AIColumnUpdate) -> AIColumn:
        row = await self._row(column_id)
        merged = to_column(row).spec().model_dump()
        changes = update.model_dump(include=update.model_fields_set)
        if "output_type" in changes and changes["output_type"] != "category":
            # A type without categories drops the old ones unless new ones are sent.
            merged["categories"] = None
        merged.update(changes)
        try:
            spec = AIColumnSpec.model_validate(merged)
        except ValidationError as exc:
            raise InvalidInputError(
                f"The edited AI column is not valid: {explain(exc, whole='the column')}.",
                hint="Send categories (2 to 20) with output_type 'category', and only then.",
            ) from exc
        if spec.name != row.name:
            await self._check_free_name(row.table_key, spec.name)
        row.name = spec.name
        row.criteria = spec.criteria
        row.output_type = spec.output_type
        row.options = _options(spec)
        await self._flush_new_name(row, add=False)
        return to_column(row)

    async def delete(self, column_id: uuid.UUID) -> None:
        """Deletes the column and, by cascade, its cached values."""
        row = await self._row(column_id)
        await self.scope.delete(row)
        await self.scope.session.flush()

    # --- values --------------------------------------------------------------------------

    async def cached(self, column: AIColumn, items: Sequence[ColumnItem]) -> dict[str, ColumnValue]:
        """The stored values of ``items`` that are still valid, by item key."""
        if not items:
            return {}
        hashes = {item.key: content_hash(column, item) for item in items}
        query = self.scope.select(AIColumnValueRow).where(
            AIColumnValueRow.column_id == column.id,
            AIColumnValueRow.item_key.in_(list(hashes)),
        )
        found: dict[str, ColumnValue] = {}
        for row in await self.scope.session.scalars(query):
            if hashes.get(row.item_key) == row.content_hash:
                found[row.item_key] = ColumnValue(
                    item_key=row.item_key, value=row.value, reason=row.reason, cached=True
                )
        return found

    async def save(
        self,
        column: AIColumn,
        values: Sequence[EvaluatedValue],
        items: Mapping[str, ColumnItem],
    ) -> None:
        """Stores computed values (not failures), replacing older values of the same items."""
        rows = [
            {
                "id": uuid.uuid4(),
                "owner_id": self.scope.owner_id,
                "created_at": utcnow(),
                "column_id": column.id,
                "item_key": done.value.item_key,
                "content_hash": content_hash(column, items[done.value.item_key]),
                "value": done.value.value,
                "reason": done.value.reason,
                "model": done.model[:200],
            }
            for done in values
            if not done.value.failed
        ]
        if not rows:
            return
        dialect = self.scope.session.get_bind().dialect.name
        make_insert = _UPSERTS.get(dialect)
        if make_insert is None:
            raise ConfigurationError(
                f"AI column values cannot be stored on a {dialect} database.",
                hint="Use SQLite or PostgreSQL.",
            )
        statement = make_insert(AIColumnValueRow.__table__).values(rows)  # type: ignore[arg-type]
        assert isinstance(statement, Insert)
        excluded = statement.excluded  # type: ignore[attr-defined]
        await self.scope.session.execute(
            statement.on_conflict_do_update(  # type: ignore[attr-defined]
                index_elements=["column_id", "item_key"],
                set_={
                    "content_hash": excluded.content_hash,
                    "value": excluded.value,
                    "reason": excluded.reason,
                    "model": excluded.model,
                    "created_at": excluded.created_at,
                },
            )
        )

    # --- internals -----------------------------------------------------------------------

    async def _row(self, column_id: uuid.UUID) -> AIColumnRow:
        return await self.scope.get(AIColumnRow, column_id, what=WHAT)

    async def _check_free_name(self, table: str, name: str) -> None:
        query = self.scope.select(AIColumnRow).where(
            AIColumnRow.table_key == table, AIColumnRow.name == name
        )
        if await self.scope.session.scalar(query) is not None:
            raise _duplicate(table, name)

    async def _flush_new_name(self, row: AIColumnRow, *, add: bool) -> None:
        """Flushes in a savepoint: a name taken by a concurrent request is a 409, and the
        request's transaction stays usable."""
        try:
            async with self.scope.session.begin_nested():
                if add:
                    self.scope.add(row)
                await self.scope.session.flush()
        except IntegrityError as exc:
            raise _duplicate(row.table_key, row.name) from exc


def _table_key(table: str) -> str:
    """The stored key of one of the results tables; ``InvalidInputError`` for any other."""
    try:
        return ResultsTable(table).value
    except ValueError:
        raise InvalidInputError(
            "AI columns belong to a results table, and that is not one of them.",
            hint=f"Use one of: {RESULTS_TABLES}.",
        ) from None


def _duplicate(table: str, name: str) -> ConflictError:
    return ConflictError(
        f"The {table} table already has an AI column named {name!r}.",
        hint="Pick another name, or edit the existing column.",
    )
