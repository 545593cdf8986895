"""Per-stream chat instructions (``ResearchStream.chat_instructions`` in seed 002): added to
the system prompt when the context names a ``stream_id``. The loader reads them from the
owner's streams (``StreamStore.chat_instructions``: another user's stream gives none);
``set_stream_instructions_loader`` replaces it (``None`` restores it)."""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from scholarstream.db import Database

StreamInstructionsLoader = Callable[["Database", uuid.UUID, str], Awaitable[str | None]]
"""(database, owner id, stream id) -> the stream's chat instructions, or None."""


async def stored_stream_instructions(
    database: Database, owner_id: uuid.UUID, stream_id: str
) -> str | None:
    # Imported here: the chat must not need the streams package to load.
    from scholarstream.streams import StreamStore

    return await StreamStore(database).chat_instructions(owner_id, stream_id)


_loader: list[StreamInstructionsLoader] = [stored_stream_instructions]


def set_stream_instructions_loader(loader: StreamInstructionsLoader | None) -> None:
    _loader.clear()
    _loader.append(loader if loader is not None else stored_stream_instructions)


async def stream_instructions(
    database: Database, owner_id: uuid.UUID, stream_id: str | None
) -> str | None:
    if stream_id is None or not _loader:
        return None
    return await _loader[0](database, owner_id, stream_id)
