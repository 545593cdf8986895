"""Naming a merge by the start of its id: people read and type eight hex digits, not a
UUID."""

from __future__ import annotations

import uuid

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from scholarstream.db.tables import LibraryMerge
from scholarstream.errors import InvalidInputError, NotFoundError

SHORT_ID = 8
"""Hex digits of a merge's id shown to people; commands take any unique start of 4 or more."""
_MIN_PREFIX = 4


def short_id(merge_id: uuid.UUID) -> str:
    return merge_id.hex[:SHORT_ID]


async def find_merge(session: AsyncSession, owner_id: uuid.UUID, reference: str) -> uuid.UUID:
    """The owner's merge whose id is ``reference`` or starts with it (its short id)."""
    text = reference.strip().lower().replace("-", "")
    hint = "List the merges (scholarstream library merges) and copy an id from the first column."
    if not text:
        raise InvalidInputError("No merge id given.", hint=hint)
    if len(text) < _MIN_PREFIX or any(c not in "0123456789abcdef" for c in text):
        raise InvalidInputError(
            f"“{reference.strip()}” is not a merge id: ids are {SHORT_ID} letters and digits "
            "(0-9, a-f), like 3f9a0c2e.",
            hint=hint,
        )
    every: list[uuid.UUID] = list(
        await session.scalars(select(LibraryMerge.id).where(LibraryMerge.owner_id == owner_id))
    )
    found = [merge_id for merge_id in every if merge_id.hex.startswith(text)]
    if not found:
        raise NotFoundError(f"No merge in your library has the id {reference.strip()}.", hint=hint)
    if len(found) > 1:
        longer = ", ".join(sorted(merge_id.hex[: len(text) + 4] for merge_id in found)[:5])
        raise InvalidInputError(
            f"{len(found)} merges have ids starting with {text}: {longer}.",
            hint="Give more of the id, enough to name one merge.",
        )
    return found[0]
