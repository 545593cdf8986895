"""AI column cells a model cannot fill: there is no offline way to answer a column's
criteria, so such a cell is 'not available' with a plain reason, is not stored (a retry
asks the model again), the rest of the table is filled, and the request carries one
notice however many cells failed. A good model records nothing."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from typing import Any

import pytest

from scholarstream.db.tables import User
from scholarstream.runtime import Runtime
from scholarstream.settings import Settings
from tests.ai_columns.judge import Judge
from tests.ai_columns.test_evaluator import ITEMS, RCT, create, values
from tests.helpers import make_runtime, new_user
from tests.search.broken_models import KINDS, broken_model

INTERNALS = re.compile(r"Error\b|Exception|pydantic|Traceback|final_result|retries", re.I)


@pytest.fixture
async def broken_runtime(
    db_settings: Settings, request: pytest.FixtureRequest
) -> AsyncIterator[Runtime]:
    runtime = make_runtime(db_settings, models={"default": broken_model(request.param)})
    yield runtime
    await runtime.close()


@pytest.mark.parametrize("broken_runtime", KINDS, indirect=True)
async def test_cells_the_model_cannot_fill_are_not_available_with_one_notice(
    broken_runtime: Runtime,
) -> None:
    alice = await new_user(broken_runtime, "alice")
    column = await create(broken_runtime, alice, RCT)
    answer = await values(broken_runtime, alice, column, ITEMS)
    assert all(v.value is None and v.failed and not v.cached for v in answer.values)
    assert all(v.reason.startswith("Not available: ") for v in answer.values)
    assert all(not INTERNALS.search(v.reason) for v in answer.values), answer.values
    assert {v.unavailable for v in answer.values} <= {"unusable", "failed"}
    (notice,) = answer.fallbacks
    assert notice.skill == "ai_columns"
    assert "show 'not available' (press Retry)" in notice.message

    # Nothing was stored: the retry asks the model again.
    again = await values(broken_runtime, alice, column, ITEMS[:1])
    assert again.values[0].failed and not again.values[0].cached


async def test_one_unusable_cell_leaves_the_others_and_a_good_batch_records_nothing(
    runtime: Runtime, alice: User, judge: Judge
) -> None:
    def picky(criteria: str, title: str) -> tuple[Any, str]:
        return ("not a boolean" if "cat" in title else True), "Because."

    judge.answer = picky
    column = await create(runtime, alice, RCT)
    answer = await values(runtime, alice, column, ITEMS)
    assert [(v.value, v.unavailable) for v in answer.values] == [
        (True, None),
        (None, "unusable"),
        (True, None),
    ]
    assert answer.values[1].reason == "Not available: the model's answer could not be used"
    assert [f.skill for f in answer.fallbacks] == ["ai_columns"]

    judge.answer = lambda criteria, title: (True, "Fine.")
    retried = await values(runtime, alice, column, ITEMS)
    assert [v.value for v in retried.values] == [True, True, True]
    assert retried.fallbacks == []
