"""Search runs in the database, on each backend: a checkpoint published twice (a workflow
killed before the engine recorded the step publishes it again on recovery) stays the one
the user saw."""

from __future__ import annotations

import datetime as dt
from collections.abc import AsyncIterator

import pytest

from scholarstream.runtime import Runtime
from scholarstream.search import SearchRequest, SearchRunStore
from scholarstream.search.core import (
    Checkpoint,
    CheckpointKind,
    ParsedIntent,
    SearchStrategy,
    SourceQuery,
    StrategyPayload,
)
from scholarstream.settings import Settings
from tests.helpers import make_runtime, new_user


@pytest.fixture
async def runtime(db_settings: Settings) -> AsyncIterator[Runtime]:
    runtime = make_runtime(db_settings)
    yield runtime
    await runtime.close()


def _strategy_checkpoint(run_id: str, iteration: int, at: dt.datetime) -> Checkpoint:
    question = "aspirin for stroke prevention"
    return Checkpoint(
        kind=CheckpointKind.STRATEGY_CONFIRMATION,
        payload=StrategyPayload(
            intent=ParsedIntent(question=question, topic=question),
            strategy=SearchStrategy(
                queries=[SourceQuery(source="library", query="aspirin AND stroke")]
            ),
            iteration=iteration,
        ),
        run_id=run_id,
        iteration=iteration,
        timestamp=at.isoformat(),
    )


async def test_a_checkpoint_published_again_keeps_what_the_user_saw(runtime: Runtime) -> None:
    owner = await new_user(runtime)
    store = SearchRunStore(runtime.database)
    run = await store.create(owner.id, SearchRequest(question="aspirin for stroke prevention"))
    first = _strategy_checkpoint(str(run.id), 0, dt.datetime(2026, 11, 27, 9, 0, tzinfo=dt.UTC))
    replayed = first.model_copy(update={"timestamp": "2026-11-27T09:00:05+00:00"})

    pending_id = await store.set_pending(run.id, first)
    seen = (await store.get(owner.id, run.id)).pending
    assert await store.set_pending(run.id, replayed) == pending_id

    assert (await store.get(owner.id, run.id)).pending == seen
    assert seen is not None and seen.checkpoint.timestamp == first.timestamp


async def test_the_next_checkpoint_replaces_the_one_answered(runtime: Runtime) -> None:
    owner = await new_user(runtime)
    store = SearchRunStore(runtime.database)
    run = await store.create(owner.id, SearchRequest(question="aspirin for stroke prevention"))
    at = dt.datetime(2026, 11, 27, 9, 0, tzinfo=dt.UTC)
    await store.set_pending(run.id, _strategy_checkpoint(str(run.id), 0, at))

    later = _strategy_checkpoint(str(run.id), 1, at + dt.timedelta(minutes=3))
    pending_id = await store.set_pending(run.id, later)

    pending = (await store.get(owner.id, run.id)).pending
    assert pending is not None
    assert (pending.id, pending.checkpoint.timestamp) == (pending_id, later.timestamp)
    assert pending_id == "1-strategy_confirmation"
