"""The evaluator and the cached values: the model (a scripted FunctionModel, or TestModel)
judges each item with a structured answer of the column's type; values are cached per item,
computed again when the criteria or the item change; one item's failure stays that item's;
evaluations run at most ``ai_column_concurrency`` at a time; no model means a clear
OfflineModeError. Runs on SQLite and PostgreSQL."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from pydantic_ai.exceptions import ModelHTTPError
from pydantic_ai.messages import ModelMessage, ModelResponse, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.models.test import TestModel
from sqlalchemy import func, select

from scholarstream.ai_columns import (
    AIColumn,
    AIColumnSpec,
    AIColumnStore,
    AIColumnUpdate,
    ColumnEvaluator,
    ColumnItem,
    ColumnValues,
    column_values,
)
from scholarstream.db import OwnerScope
from scholarstream.db.tables import LLMUsage, User
from scholarstream.errors import NotFoundError, OfflineModeError
from scholarstream.runtime import Runtime
from scholarstream.settings import Settings, load_settings
from tests.ai_columns.judge import Judge
from tests.helpers import make_runtime, new_user

ITEMS = [
    ColumnItem(key="a", title="A randomized trial of taurine in dogs", abstract="40 dogs."),
    ColumnItem(key="b", title="Taurine in cat food: a survey"),
    ColumnItem(
        key="c",
        title="Phase 3 trial of dupilumab",
        summary="Adults with atopic dermatitis.",
        fields={"phase": "Phase 3", "enrollment": "120"},
    ),
]
RCT = AIColumnSpec(name="RCT", criteria="Is it a trial?", output_type="yes_no")


@asynccontextmanager
async def store_of(runtime: Runtime, user: User) -> AsyncIterator[AIColumnStore]:
    async with runtime.database.session() as session:
        yield AIColumnStore(OwnerScope(session, user.id))


async def create(runtime: Runtime, user: User, spec: AIColumnSpec) -> AIColumn:
    async with store_of(runtime, user) as store:
        return await store.create("library", spec)


async def values(
    runtime: Runtime, user: User, column: AIColumn, items: list[ColumnItem]
) -> ColumnValues:
    evaluator = ColumnEvaluator(
        runtime.llm,
        runtime.database,
        concurrency=runtime.settings.chat.ai_column_concurrency,
    )
    return await column_values(runtime.database, evaluator, user.id, column.id, items)


def by_key(answer: ColumnValues) -> dict[str, tuple[Any, bool]]:
    return {v.item_key: (v.value, v.cached) for v in answer.values}


async def test_values_are_computed_once_then_cached(
    runtime: Runtime, alice: User, judge: Judge
) -> None:
    column = await create(runtime, alice, RCT)
    first = await values(runtime, alice, column, ITEMS)
    assert [v.item_key for v in first.values] == ["a", "b", "c"]
    assert by_key(first) == {"a": (True, False), "b": (False, False), "c": (True, False)}
    assert (
        first.values[0].reason == "The title names a trial: A randomized trial of taurine in dogs."
    )
    assert sorted(judge.titles) == sorted(item.title for item in ITEMS)
    # The prompt carries the criteria and the item's text, fields included.
    prompt_c = next(p for p in judge.prompts if "dupilumab" in p)
    assert "Criteria: Is it a trial?" in prompt_c
    assert "Summary: Adults with atopic dermatitis." in prompt_c
    assert "phase: Phase 3" in prompt_c
    assert judge.value_schemas[0]["type"] == "boolean"

    judge.reset()
    again = await values(runtime, alice, column, [ITEMS[2], ITEMS[0]])
    assert by_key(again) == {"c": (True, True), "a": (True, True)}
    assert [v.item_key for v in again.values] == ["c", "a"]
    assert judge.titles == [], "cached values ask the model nothing"

    # Each evaluation was recorded in the usage ledger under the feature ai_columns.
    async with runtime.database.session() as session:
        count = await session.scalar(
            select(func.count())
            .select_from(LLMUsage)
            .where(LLMUsage.owner_id == alice.id, LLMUsage.feature == "ai_columns")
        )
    assert count == 3


async def test_an_edited_column_or_item_is_evaluated_again(
    runtime: Runtime, alice: User, judge: Judge
) -> None:
    column = await create(runtime, alice, RCT)
    await values(runtime, alice, column, ITEMS)

    judge.reset()
    edited_b = ITEMS[1].model_copy(update={"title": "Taurine in cat food: a randomized trial"})
    answer = await values(runtime, alice, column, [ITEMS[0], edited_b])
    assert by_key(answer) == {"a": (True, True), "b": (True, False)}
    assert judge.titles == [edited_b.title]

    judge.reset()
    async with store_of(runtime, alice) as store:
        edited = await store.update(column.id, AIColumnUpdate(criteria="Is it about dogs?"))
    answer = await values(runtime, alice, edited, ITEMS[:2])
    assert [v.cached for v in answer.values] == [False, False]
    assert sorted(judge.titles) == sorted([ITEMS[0].title, ITEMS[1].title])
    assert all("Criteria: Is it about dogs?" in p for p in judge.prompts)


async def test_one_failed_item_does_not_fail_the_batch(
    runtime: Runtime, alice: User, judge: Judge
) -> None:
    def flaky(criteria: str, title: str) -> tuple[Any, str]:
        if "cat" in title:
            raise ModelHTTPError(status_code=429, model_name="judge", body="slow down")
        return True, "Fine."

    judge.answer = flaky
    column = await create(runtime, alice, RCT)
    answer = await values(runtime, alice, column, ITEMS)
    failed = answer.values[1]
    assert (failed.item_key, failed.value, failed.failed, failed.cached) == ("b", None, True, False)
    assert "429" in failed.reason and "\n" not in failed.reason
    assert [v.value for v in answer.values] == [True, None, True]

    # The failure was not cached: the next request asks the model again, for that item only.
    judge.reset()
    judge.answer = lambda criteria, title: (False, "Recovered.")
    answer = await values(runtime, alice, column, ITEMS)
    assert by_key(answer) == {"a": (True, True), "b": (False, False), "c": (True, True)}
    assert judge.titles == [ITEMS[1].title]


async def test_each_output_type_asks_for_its_own_answer(
    runtime: Runtime, alice: User, judge: Judge
) -> None:
    answers: dict[str, tuple[Any, str]] = {
        "How many dogs?": (40, "The abstract says 40 dogs.\nSecond line."),
        "Which species?": ("  dogs\n and  cats ", "Named in the title."),
        "Which design?": ("cohort", "Followed over time."),
    }
    judge.answer = lambda criteria, title: answers[criteria]
    number = await create(
        runtime, alice, AIColumnSpec(name="N", criteria="How many dogs?", output_type="number")
    )
    text = await create(
        runtime, alice, AIColumnSpec(name="Species", criteria="Which species?", output_type="text")
    )
    category = await create(
        runtime,
        alice,
        AIColumnSpec(
            name="Design",
            criteria="Which design?",
            output_type="category",
            categories=["RCT", "cohort"],
        ),
    )
    item = ITEMS[:1]
    n = (await values(runtime, alice, number, item)).values[0]
    assert (n.value, n.reason) == (40.0, "The abstract says 40 dogs. Second line.")
    assert (await values(runtime, alice, text, item)).values[0].value == "dogs and cats"
    assert (await values(runtime, alice, category, item)).values[0].value == "cohort"
    schemas = judge.value_schemas
    assert schemas[0]["anyOf"][0]["type"] == "number"
    assert schemas[1]["type"] == "string"
    assert schemas[2]["enum"] == ["RCT", "cohort"]
    # The cached category value comes back as it was stored.
    again = await values(runtime, alice, category, item)
    assert (again.values[0].value, again.values[0].cached) == ("cohort", True)


async def test_a_category_outside_the_list_is_a_failed_item(
    runtime: Runtime, alice: User, judge: Judge
) -> None:
    judge.answer = lambda criteria, title: ("meta-analysis", "Pooled studies.")
    column = await create(
        runtime,
        alice,
        AIColumnSpec(
            name="Design",
            criteria="Which design?",
            output_type="category",
            categories=["RCT", "cohort"],
        ),
    )
    (value,) = (await values(runtime, alice, column, ITEMS[:1])).values
    assert value.value is None and value.failed
    assert "could not be used" in value.reason


async def test_test_model_fills_a_category_column(db_settings: Settings) -> None:
    runtime = make_runtime(db_settings, models={"fast": TestModel()})
    try:
        user = await new_user(runtime)
        column = await create(
            runtime,
            user,
            AIColumnSpec(
                name="Design",
                criteria="Design?",
                output_type="category",
                categories=["RCT", "cohort"],
            ),
        )
        answer = await values(runtime, user, column, ITEMS)
        assert all(v.value in {"RCT", "cohort"} and not v.failed for v in answer.values)
    finally:
        await runtime.close()


async def test_evaluations_are_bounded_by_the_concurrency_setting(
    data_dir: Path, db_settings: Settings
) -> None:
    settings = load_settings(
        data_dir=data_dir,
        database_url=db_settings.app_database_url,
        chat={"ai_column_concurrency": 2},
    )
    running = 0
    peak = 0

    async def slow(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        nonlocal running, peak
        running += 1
        peak = max(peak, running)
        await asyncio.sleep(0.05)
        running -= 1
        args = {"value": True, "reason": "Yes."}
        return ModelResponse(parts=[ToolCallPart(info.output_tools[0].name, args)])

    runtime = make_runtime(settings, models={"default": FunctionModel(slow)})
    try:
        user = await new_user(runtime)
        column = await create(runtime, user, RCT)
        items = [ColumnItem(key=str(i), title=f"Paper {i}") for i in range(7)]
        answer = await values(runtime, user, column, items)
        assert [v.value for v in answer.values] == [True] * 7
        assert peak == 2
    finally:
        await runtime.close()


async def test_offline_mode_is_a_clear_error_but_cached_values_still_come(
    db_settings: Settings, runtime: Runtime, alice: User
) -> None:
    column = await create(runtime, alice, RCT)
    await values(runtime, alice, column, ITEMS[:1])

    offline = make_runtime(db_settings)
    try:
        assert offline.models.offline
        answer = await values(offline, alice, column, ITEMS[:1])
        assert by_key(answer) == {"a": (True, True)}
        with pytest.raises(OfflineModeError, match="need a language model") as caught:
            await values(offline, alice, column, ITEMS)
        assert caught.value.hint and "SCHOLARSTREAM_LLM__ROLES__DEFAULT" in caught.value.hint
    finally:
        await offline.close()


async def test_another_users_column_is_not_found(
    runtime: Runtime, alice: User, bob: User, judge: Judge
) -> None:
    column = await create(runtime, alice, RCT)
    with pytest.raises(NotFoundError):
        await values(runtime, bob, column, ITEMS)
    assert judge.titles == []
