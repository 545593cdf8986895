from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from scholarstream.db.tables import User
from scholarstream.runtime import Runtime
from scholarstream.settings import Settings
from tests.ai_columns.judge import Judge
from tests.helpers import make_runtime, new_user


@pytest.fixture
def judge() -> Judge:
    return Judge()


@pytest.fixture
async def runtime(db_settings: Settings, judge: Judge) -> AsyncIterator[Runtime]:
    """Every model role answered by ``judge``, on each database backend."""
    runtime = make_runtime(db_settings, models={"default": judge.model()})
    yield runtime
    await runtime.close()


@pytest.fixture
async def alice(runtime: Runtime) -> User:
    return await new_user(runtime, "alice")


@pytest.fixture
async def bob(runtime: Runtime) -> User:
    return await new_user(runtime, "bob")
