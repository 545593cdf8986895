from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from scholarstream.db.tables import User
from scholarstream.runtime import Runtime
from scholarstream.settings import Settings
from tests.helpers import make_runtime, new_user


@pytest.fixture
async def runtime(db_settings: Settings) -> AsyncIterator[Runtime]:
    """A runtime on each database backend (SQLite, and PostgreSQL when available)."""
    runtime = make_runtime(db_settings)
    yield runtime
    await runtime.close()


@pytest.fixture
async def owner(runtime: Runtime) -> User:
    return await new_user(runtime)
