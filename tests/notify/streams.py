"""A research stream for a user, made through the streams package's public API."""

from __future__ import annotations

import uuid

from scholarstream.runtime import Runtime
from scholarstream.streams import PartialStreamConfig, StreamStore, finish_config
from tests.streams.script import FULL_CONFIG


async def new_stream(runtime: Runtime, owner_id: uuid.UUID, name: str = "Tracker") -> uuid.UUID:
    config = finish_config(PartialStreamConfig.model_validate({**FULL_CONFIG, "stream_name": name}))
    return (await StreamStore(runtime.database).create(owner_id, config)).id
