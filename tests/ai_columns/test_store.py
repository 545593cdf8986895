"""The AI column store: columns are owned, named uniquely per table, edited with validation,
and their cached values are valid only for the criteria and item text they were made from.
Runs on SQLite and PostgreSQL."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import pytest

from scholarstream.ai_columns import (
    AIColumn,
    AIColumnSpec,
    AIColumnStore,
    AIColumnUpdate,
    ColumnItem,
    ColumnValue,
    EvaluatedValue,
    ResultsTable,
)
from scholarstream.db import OwnerScope
from scholarstream.db.tables import User
from scholarstream.errors import ConflictError, InvalidInputError, NotFoundError
from scholarstream.runtime import Runtime

RCT = AIColumnSpec(
    name="RCT", criteria="Is this a randomized controlled trial?", output_type="yes_no"
)
DESIGN = AIColumnSpec(
    name="Design",
    criteria="What is the study design?",
    output_type="category",
    categories=["RCT", "cohort", "other"],
)
ITEM = ColumnItem(
    key="rec-1",
    title="A randomized trial of taurine in dogs",
    abstract="We randomized 40 dogs.",
    fields={"year": "2024"},
)


@asynccontextmanager
async def store_of(runtime: Runtime, user: User) -> AsyncIterator[AIColumnStore]:
    async with runtime.database.session() as session:
        yield AIColumnStore(OwnerScope(session, user.id))


def done(item_key: str, value: bool | str | float | None, reason: str) -> EvaluatedValue:
    return EvaluatedValue(
        value=ColumnValue(item_key=item_key, value=value, reason=reason), model="judge"
    )


async def test_columns_are_created_listed_per_table_and_owned(
    runtime: Runtime, alice: User, bob: User
) -> None:
    async with store_of(runtime, alice) as store:
        rct = await store.create("library", RCT)
        design = await store.create("library", DESIGN)
        await store.create("trials", RCT)  # the same name on another table is another column
    assert (rct.table, rct.name, rct.output_type, rct.categories) == (
        "library",
        "RCT",
        "yes_no",
        None,
    )
    assert design.categories == ["RCT", "cohort", "other"]

    async with store_of(runtime, alice) as store:
        assert [c.name for c in await store.list("library")] == ["RCT", "Design"]
        assert [c.name for c in await store.list("trials")] == ["RCT"]
        assert await store.list("search") == []
        assert (await store.get(design.id)).criteria == "What is the study design?"

    async with store_of(runtime, bob) as store:
        assert await store.list("library") == []
        with pytest.raises(NotFoundError, match="AI column"):
            await store.get(rct.id)
        with pytest.raises(NotFoundError):
            await store.update(rct.id, AIColumnUpdate(name="Mine now"))
        with pytest.raises(NotFoundError):
            await store.delete(rct.id)
        # Bob may use the same name on his own table.
        await store.create("library", RCT)

    async with store_of(runtime, alice) as store:
        assert (await store.get(rct.id)).name == "RCT"


async def test_columns_belong_to_the_real_results_tables_only(
    runtime: Runtime, alice: User
) -> None:
    async with store_of(runtime, alice) as store:
        for table in ("users", "report", "api_tokens"):
            with pytest.raises(InvalidInputError, match="not one of them") as caught:
                await store.create(table, RCT)
            assert caught.value.hint == "Use one of: library, search, trials."
            with pytest.raises(InvalidInputError):
                await store.list(table)
        created = await store.create(ResultsTable.SEARCH, RCT)
        assert created.table == "search"
        assert [c.name for c in await store.list("search")] == ["RCT"]


async def test_a_duplicate_name_is_a_conflict(runtime: Runtime, alice: User) -> None:
    async with store_of(runtime, alice) as store:
        await store.create("library", RCT)
        await store.create("library", DESIGN)
        with pytest.raises(ConflictError, match="already has an AI column named 'RCT'") as caught:
            await store.create("library", RCT)
        assert caught.value.hint and "another name" in caught.value.hint
        design = (await store.list("library"))[1]
        with pytest.raises(ConflictError):
            await store.update(design.id, AIColumnUpdate(name="RCT"))
        # The transaction is still usable after the refusal.
        assert [c.name for c in await store.list("library")] == ["RCT", "Design"]


async def test_an_edit_is_validated_as_a_whole(runtime: Runtime, alice: User) -> None:
    async with store_of(runtime, alice) as store:
        column = await store.create("library", RCT)
        with pytest.raises(InvalidInputError, match="at least 2 categories"):
            await store.update(column.id, AIColumnUpdate(output_type="category"))
        edited = await store.update(
            column.id,
            AIColumnUpdate(output_type="category", categories=["yes", "no", "unclear"]),
        )
        assert (edited.output_type, edited.categories) == ("category", ["yes", "no", "unclear"])
        # Back to yes/no: the categories go with the old type.
        back = await store.update(column.id, AIColumnUpdate(output_type="yes_no"))
        assert (back.output_type, back.categories, back.criteria) == ("yes_no", None, RCT.criteria)
        renamed = await store.update(column.id, AIColumnUpdate(name="Randomized"))
        assert renamed.name == "Randomized"
    async with store_of(runtime, alice) as store:
        assert (await store.get(column.id)).name == "Randomized"


async def test_cached_values_follow_the_criteria_and_the_item_text(
    runtime: Runtime, alice: User, bob: User
) -> None:
    other = ColumnItem(key="rec-2", title="A cohort of cats")
    async with store_of(runtime, alice) as store:
        column = await store.create("library", RCT)
        assert await store.cached(column, [ITEM, other]) == {}
        await store.save(
            column,
            [done("rec-1", True, "Randomized, says the abstract."), done("rec-2", None, "x")],
            {"rec-1": ITEM, "rec-2": other},
        )
    async with store_of(runtime, alice) as store:
        hits = await store.cached(column, [ITEM, other])
        assert hits == {
            "rec-1": ColumnValue(
                item_key="rec-1", value=True, reason="Randomized, says the abstract.", cached=True
            ),
            "rec-2": ColumnValue(item_key="rec-2", value=None, reason="x", cached=True),
        }
        # An edited item (its abstract) is a miss; so is any edited criterion.
        edited_item = ITEM.model_copy(update={"abstract": "We followed 40 dogs."})
        assert await store.cached(column, [edited_item]) == {}
        assert await store.cached(column, [ITEM.model_copy(update={"fields": {}})]) == {}
        edited = await store.update(column.id, AIColumnUpdate(criteria="Is it randomized?"))
        assert await store.cached(edited, [ITEM, other]) == {}
        # Storing again replaces the old value of the item.
        await store.save(edited, [done("rec-1", False, "Not randomized.")], {"rec-1": ITEM})
    async with store_of(runtime, alice) as store:
        hits = await store.cached(edited, [ITEM])
        assert hits["rec-1"].value is False and hits["rec-1"].reason == "Not randomized."
    async with store_of(runtime, bob) as store:
        assert await store.cached(edited, [ITEM]) == {}, "another user never sees the values"


async def test_failures_are_not_cached_and_deleting_drops_the_values(
    runtime: Runtime, alice: User
) -> None:
    failed = EvaluatedValue(
        value=ColumnValue(item_key="rec-1", value=None, reason="HTTP 429", failed=True), model=""
    )
    async with store_of(runtime, alice) as store:
        column = await store.create("library", RCT)
        await store.save(column, [failed], {"rec-1": ITEM})
        assert await store.cached(column, [ITEM]) == {}
        await store.save(column, [done("rec-1", True, "Yes.")], {"rec-1": ITEM})
        assert set(await store.cached(column, [ITEM])) == {"rec-1"}
        await store.delete(column.id)
    async with store_of(runtime, alice) as store:
        with pytest.raises(NotFoundError):
            await store.get(column.id)
        assert await store.list("library") == []
        again: AIColumn = await store.create("library", RCT)
        assert await store.cached(again, [ITEM]) == {}


@pytest.mark.parametrize(
    ("spec", "problem"),
    [
        ({"name": "", "criteria": "c", "output_type": "yes_no"}, "at least 1 character"),
        ({"name": "n", "criteria": "c" * 2001, "output_type": "text"}, "at most 2000"),
        ({"name": "n", "criteria": "c", "output_type": "maybe"}, "literal_error"),
        ({"name": "n", "criteria": "c", "output_type": "category"}, "at least 2 categories"),
        (
            {"name": "n", "criteria": "c", "output_type": "number", "categories": ["a", "b"]},
            "only allowed with output_type 'category'",
        ),
        (
            {"name": "n", "criteria": "c", "output_type": "category", "categories": ["a", " A "]},
            "differ",
        ),
    ],
)
def test_specs_are_validated(spec: dict[str, object], problem: str) -> None:
    with pytest.raises(ValueError, match=problem):
        AIColumnSpec.model_validate(spec)
