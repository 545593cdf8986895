"""Shared fixtures for the streams tests."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable

import pytest

from scholarstream.runtime import Runtime
from scholarstream.settings import Settings
from tests.helpers import make_runtime
from tests.search.world import LiteratureWorld

Make = Callable[[LiteratureWorld], Runtime]


@pytest.fixture
async def make(db_settings: Settings) -> AsyncIterator[Make]:
    """Runtimes on the test's database whose sources answer from ``world``; closed after."""
    runtimes: list[Runtime] = []

    def build(world: LiteratureWorld) -> Runtime:
        runtime = make_runtime(db_settings, source_transport=world.transport())
        runtimes.append(runtime)
        return runtime

    yield build
    for runtime in runtimes:
        await runtime.close()
