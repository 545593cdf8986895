"""Queries scoped to one owner. Routes get an ``OwnerScope``, never a bare session query,
so a row of another user is simply not found (404), never shown."""

from __future__ import annotations

import uuid
from typing import Any, TypeVar

from sqlalchemy import Select, select
from sqlalchemy.ext.asyncio import AsyncSession

from scholarstream.db._base import Owned
from scholarstream.errors import NotFoundError

RowT = TypeVar("RowT", bound=Owned)


class OwnerScope:
    def __init__(self, session: AsyncSession, owner_id: uuid.UUID) -> None:
        self.session = session
        self.owner_id = owner_id

    def select(self, model: type[RowT]) -> Select[RowT]:
        return select(model).where(model.owner_id == self.owner_id)

    async def get(self, model: type[RowT], row_id: Any, *, what: str) -> RowT:
        """The owner's row ``row_id``; ``NotFoundError`` naming it as ``what`` ("Search
        run") otherwise -- never by its id, which says nothing to a person."""
        row = await self.session.scalar(self.select(model).where(model.id == row_id))
        if row is None:
            label = what if what[:2].isupper() else what[:1].lower() + what[1:]
            raise NotFoundError(
                f"That {label} was not found: it was deleted, or it is not yours.",
                hint=f"List your {label}s to find the right one.",
            )
        return row

    async def list(self, model: type[RowT]) -> list[RowT]:
        return list((await self.session.scalars(self.select(model))).all())

    def add(self, row: RowT) -> RowT:
        row.owner_id = self.owner_id
        self.session.add(row)
        return row

    async def delete(self, row: RowT) -> None:
        if row.owner_id != self.owner_id:
            raise NotFoundError("That item was not found.")
        await self.session.delete(row)
