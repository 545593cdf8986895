"""Per-stream chat instructions (``ResearchStream.chat_instructions`` in seed 002): added to
the system prompt when the context names a ``stream_id``. Research streams plug their
loader in here; until one is set there are no stream instructions."""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from scholarstream.runtime import Runtime

StreamInstructionsLoader = Callable[["Runtime", uuid.UUID, str], Awaitable[str | None]]
"""(runtime, owner id, stream id) -> the stream's chat instructions, or None."""

_loader: list[StreamInstructionsLoader] = []


def set_stream_instructions_loader(loader: StreamInstructionsLoader | None) -> None:
    _loader.clear()
    if loader is not None:
        _loader.append(loader)


async def stream_instructions(
    runtime: Runtime, owner_id: uuid.UUID, stream_id: str | None
) -> str | None:
    if stream_id is None or not _loader:
        return None
    return await _loader[0](runtime, owner_id, stream_id)
