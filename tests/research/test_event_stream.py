"""The outbox reader on each database backend: a follower gets the events after its
resume point, then each new one as it is saved, in order and once, and stops at the end
of the research; an idle follower gets keep-alives; a finished research with nothing more
to send, and another user's research, are told apart before anything is streamed."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator, Callable
from datetime import UTC, datetime

import pytest

from scholarstream.errors import NotFoundError
from scholarstream.research import (
    OutboxReader,
    Research,
    ResearchChange,
    ResearchStatus,
    ResearchStore,
    StoredEvent,
)
from scholarstream.research.core import (
    ResearchCompleted,
    ResearchEvent,
    ResearchLLMCompleted,
)
from scholarstream.runtime import Runtime
from scholarstream.settings import Settings
from scholarstream.sse import Identified, encode_batch
from tests.helpers import make_runtime, new_user
from tests.research.builders import ANTHROPIC, OPENAI, research, result

AT = datetime(2026, 1, 1, tzinfo=UTC)
FAST = {"poll_seconds": 0.01, "keepalive_seconds": 60.0}


@pytest.fixture
async def runtime(db_settings: Settings) -> AsyncIterator[Runtime]:
    runtime = make_runtime(db_settings)
    yield runtime
    await runtime.close()


def answered(model: str) -> Callable[[Research], ResearchChange]:
    def change(r: Research) -> ResearchChange:
        event = ResearchLLMCompleted(research_id=r.id, occurred_at=AT, model=model, attempt=1)
        return ResearchChange(research=r, events=[event])

    return change


def completed(r: Research) -> ResearchChange:
    event: ResearchEvent = ResearchCompleted(research_id=r.id, occurred_at=AT, synthesized=False)
    done = r.model_copy(update={"status": ResearchStatus.COMPLETED})
    return ResearchChange(research=done, events=[event])


async def calling(store: ResearchStore, owner: uuid.UUID) -> Research:
    return await store.create(
        owner,
        research(
            ResearchStatus.PROCESSING,
            id=uuid.uuid4(),
            llm_results=[result(OPENAI, "processing"), result(ANTHROPIC, "processing")],
        ),
    )


def seqs(batches: list[list[StoredEvent]]) -> list[int]:
    return [stored.seq for batch in batches for stored in batch]


async def test_a_follower_replays_then_follows_until_the_research_ends(runtime: Runtime) -> None:
    store = ResearchStore(runtime.database)
    owner = (await new_user(runtime)).id
    saved = await calling(store, owner)
    await store.apply(owner, saved.id, answered(OPENAI))
    await store.apply(owner, saved.id, answered(ANTHROPIC))

    follower = OutboxReader(store, **FAST).follow(owner, saved.id, after=1)
    first = await anext(follower)
    assert [(e.seq, e.event.type) for e in first] == [(2, "research.llm_completed")]

    async def rest() -> list[list[StoredEvent]]:
        return [batch async for batch in follower]

    later = asyncio.create_task(rest())
    await asyncio.sleep(0.05)
    assert not later.done()  # still following: the research is not over
    await store.apply(owner, saved.id, completed)
    batches = await asyncio.wait_for(later, 5)
    assert seqs(batches) == [3]
    assert batches[-1][-1].event.type == "research.completed"


async def test_an_idle_follower_gets_keepalives_and_closing_it_stops_it(
    runtime: Runtime,
) -> None:
    store = ResearchStore(runtime.database)
    owner = (await new_user(runtime)).id
    saved = await calling(store, owner)
    follower = OutboxReader(store, poll_seconds=0.01, keepalive_seconds=0.03).follow(
        owner, saved.id
    )
    assert await asyncio.wait_for(anext(follower), 5) == []
    assert encode_batch([]) == b": keepalive\n\n"
    await follower.aclose()
    with pytest.raises(StopAsyncIteration):
        await anext(follower)


async def test_a_finished_research_is_read_to_its_end_then_nothing_is_opened(
    runtime: Runtime,
) -> None:
    store = ResearchStore(runtime.database)
    alice, bob = (await new_user(runtime)).id, (await new_user(runtime)).id
    saved = await calling(store, alice)
    await store.apply(alice, saved.id, answered(OPENAI))
    await store.apply(alice, saved.id, completed)
    reader = OutboxReader(store, **FAST)

    opened = await reader.open(alice, saved.id, after=0)
    assert opened is not None
    assert seqs([batch async for batch in opened]) == [1, 2]
    assert await reader.open(alice, saved.id, after=2) is None  # nothing will ever come
    with pytest.raises(NotFoundError):
        await reader.open(bob, saved.id)


async def test_a_stored_event_goes_out_named_with_its_seq_as_id(runtime: Runtime) -> None:
    store = ResearchStore(runtime.database)
    owner = (await new_user(runtime)).id
    saved = await calling(store, owner)
    await store.apply(owner, saved.id, answered(OPENAI))
    (stored,) = await store.events(owner, saved.id)
    frame = encode_batch([stored], named=True)
    assert frame == encode_batch([Identified("1", stored.event)], named=True)
    assert frame.startswith(b"event: research.llm_completed\nid: 1\ndata: {")
    assert b'"researchId":' in frame and frame.endswith(b"}\n\n")
