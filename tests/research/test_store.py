"""Research records in the database, on SQLite and PostgreSQL: owner-scoped reads, changes
saved with their events in one transaction (or not at all), and changes racing from
separate connections serialised by the row lock, so models finishing at the same instant
lose no result and exactly one of them starts the synthesis."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator, Callable

import pytest

from scholarstream.db import Database
from scholarstream.errors import ConflictError, NotFoundError
from scholarstream.research import (
    ConfirmAction,
    LLMResultStatus,
    Research,
    ResearchChange,
    ResearchStatus,
    ResearchStore,
    confirm,
    record_call_failed,
    record_call_started,
    record_call_succeeded,
)
from scholarstream.research.core import advance
from scholarstream.runtime import Runtime
from scholarstream.settings import Settings
from tests.helpers import make_runtime, new_user
from tests.research.builders import ANTHROPIC, GOOGLE, MODELS, OPENAI, research, result


@pytest.fixture
async def runtime(db_settings: Settings) -> AsyncIterator[Runtime]:
    runtime = make_runtime(db_settings)
    yield runtime
    await runtime.close()


def answered(model: str) -> Callable[[Research], ResearchChange]:
    return lambda research: advance(record_call_succeeded(research, model, 1, model))


def calling(*models: str) -> Research:
    """A research whose ``models`` are all being called."""
    return research(
        ResearchStatus.PROCESSING,
        id=uuid.uuid4(),
        llm_results=[result(model, "processing") for model in models],
    )


async def test_records_are_scoped_to_their_owner(runtime: Runtime) -> None:
    store = ResearchStore(runtime.database)
    alice, bob = await new_user(runtime), await new_user(runtime)
    first = await store.create(alice.id, research(id=uuid.uuid4()))
    second = await store.create(alice.id, calling(OPENAI))
    await store.create(bob.id, research(id=uuid.uuid4()))

    assert await store.get(alice.id, first.id) == first
    assert {r.id for r in await store.list(alice.id)} == {first.id, second.id}
    assert [r.id for r in await store.list(alice.id, statuses=[ResearchStatus.PROCESSING])] == [
        second.id
    ]
    # Another user's research is not found, whatever they try.
    with pytest.raises(NotFoundError):
        await store.get(bob.id, first.id)
    with pytest.raises(NotFoundError):
        await store.events(bob.id, first.id)
    with pytest.raises(NotFoundError):
        await store.apply(bob.id, first.id, lambda r: ResearchChange(research=r))
    with pytest.raises(NotFoundError, match="was not found"):
        await store.get(alice.id, uuid.uuid4())
    assert await store.get(alice.id, first.id) == first


async def test_a_change_is_saved_with_its_events_and_a_new_revision(runtime: Runtime) -> None:
    store = ResearchStore(runtime.database)
    owner = (await new_user(runtime)).id
    saved = await store.create(owner, calling(OPENAI, ANTHROPIC))

    # Recording what is already recorded changes nothing: no new revision, no event.
    same = await store.apply(owner, saved.id, lambda r: record_call_started(r, OPENAI, 1))
    assert (same.revision, same.change.events) == (0, [])

    first = await store.apply(
        owner, saved.id, lambda r: advance(record_call_succeeded(r, OPENAI, 1, "A"))
    )
    assert first.revision == 1
    assert first.research.status == ResearchStatus.PROCESSING  # anthropic still running
    second = await store.apply(
        owner, saved.id, lambda r: advance(record_call_failed(r, ANTHROPIC, 1, "HTTP 500"))
    )
    assert second.revision == 2
    assert second.research.status == ResearchStatus.AWAITING_CONFIRMATION

    stored = await store.get_stored(owner, saved.id)
    assert (stored.research, stored.revision) == (second.research, 2)
    events = await store.events(owner, saved.id)
    assert [(e.seq, e.event.type) for e in events] == [
        (1, "research.llm_completed"),
        (2, "research.llm_failed"),
        (3, "research.awaiting_confirmation"),
    ]
    assert [e.seq for e in await store.events(owner, saved.id, after_seq=2)] == [3]


async def test_a_refused_change_leaves_everything_as_it_was(runtime: Runtime) -> None:
    store = ResearchStore(runtime.database)
    owner = (await new_user(runtime)).id
    saved = await store.create(owner, calling(OPENAI))

    with pytest.raises(ConflictError, match="awaiting confirmation"):
        await store.apply(owner, saved.id, lambda r: confirm(r, ConfirmAction.PROCEED))
    with pytest.raises(ConflictError, match="changed since revision 7"):
        await store.apply(
            owner,
            saved.id,
            lambda r: record_call_succeeded(r, OPENAI, 1, "A"),
            expected_revision=7,
        )
    assert await store.get(owner, saved.id) == saved
    assert (await store.get_stored(owner, saved.id)).revision == 0
    assert await store.events(owner, saved.id) == []


async def test_active_lists_every_owners_research_in_flight(runtime: Runtime) -> None:
    store = ResearchStore(runtime.database)
    alice, bob = await new_user(runtime), await new_user(runtime)
    running = await store.create(alice.id, calling(OPENAI))
    other = await store.create(bob.id, calling(GOOGLE))
    await store.create(alice.id, research(id=uuid.uuid4()))
    await store.create(bob.id, research(ResearchStatus.COMPLETED, id=uuid.uuid4()))

    active = {(a.owner_id, a.research.id) for a in await store.active()}
    assert active == {(alice.id, running.id), (bob.id, other.id)}


async def test_models_finishing_at_the_same_instant_lose_nothing_and_synthesise_once(
    runtime: Runtime, db_settings: Settings
) -> None:
    """Each model's outcome is recorded through its own database handle (as by separate
    worker processes), all at once. Were each change saved over the record it read, every
    one would read the record before the others saved theirs and overwrite them."""
    owner = (await new_user(runtime)).id
    saved = await ResearchStore(runtime.database).create(owner, calling(*MODELS))
    handles = [Database(db_settings.app_database_url) for _ in MODELS]
    try:
        applied = await asyncio.gather(
            *(
                ResearchStore(handle).apply(
                    owner,
                    saved.id,
                    answered(model),
                )
                for handle, model in zip(handles, MODELS, strict=True)
            )
        )
    finally:
        for handle in handles:
            await handle.dispose()

    final = await ResearchStore(runtime.database).get_stored(owner, saved.id)
    assert [r.status for r in final.research.llm_results] == [LLMResultStatus.COMPLETED] * 3
    assert [r.content for r in final.research.llm_results] == list(MODELS)
    assert final.research.status == ResearchStatus.SYNTHESIZING
    assert final.revision == len(MODELS)
    # Exactly one change saw every model done and moved the research on.
    moved = [a for a in applied if a.research.status == ResearchStatus.SYNTHESIZING]
    assert len(moved) == 1
    assert sorted(a.revision for a in applied) == [1, 2, 3]
    events = await ResearchStore(runtime.database).events(owner, saved.id)
    assert [e.seq for e in events] == [1, 2, 3, 4]
    assert [e.event.type for e in events].count("research.synthesizing") == 1
