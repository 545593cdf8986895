"""Notification targets in the database, on each backend: stored per owner and encrypted,
listed per level, the stream's and the user's combined for sending, and another user's
targets and streams simply not found."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator

import pytest
from sqlalchemy import select

from scholarstream.db.tables import NotificationTargetRow
from scholarstream.errors import InvalidInputError, NotFoundError
from scholarstream.notify import MAX_TARGETS, NotificationTargetStore
from scholarstream.runtime import Runtime
from scholarstream.settings import Settings
from scholarstream.streams import StreamStore
from tests.helpers import make_runtime, new_user
from tests.notify.streams import new_stream

MAIL = "mailto://me:hunter22@example.com"
NTFY = "ntfy://user:s3cret-pw@ntfy.example.com/reports"
HOOK = "json://127.0.0.1:9/hooks/abcdef0123456789abcdef"


@pytest.fixture
async def runtime(db_settings: Settings) -> AsyncIterator[Runtime]:
    runtime = make_runtime(db_settings)
    yield runtime
    await runtime.close()


@pytest.fixture
def store(runtime: Runtime) -> NotificationTargetStore:
    return NotificationTargetStore.for_server(runtime.settings, runtime.database)


async def _rows(runtime: Runtime) -> list[NotificationTargetRow]:
    async with runtime.database.session() as session:
        return list((await session.scalars(select(NotificationTargetRow))).all())


async def test_targets_are_stored_encrypted_per_level(
    runtime: Runtime, store: NotificationTargetStore
) -> None:
    alice = await new_user(runtime)
    stream_id = await new_stream(runtime, alice.id)
    mine = await store.add(alice.id, MAIL, label="Inbox")
    streams = await store.add(alice.id, NTFY, stream_id=stream_id, kinds=["stream_report"])

    assert (mine.label, mine.preview, mine.stream_id, mine.kinds) == (
        "Inbox",
        "mailto://***@example.com",
        None,
        None,
    )
    assert (streams.label, streams.stream_id, streams.kinds) == (
        "ntfy",
        stream_id,
        ["stream_report"],
    )
    assert await store.list(alice.id) == [mine]
    assert await store.list(alice.id, stream_id=stream_id) == [streams]
    for row in await _rows(runtime):
        assert "hunter22" not in row.url_encrypted and "s3cret-pw" not in row.url_encrypted
    assert (await store.target(alice.id, mine.id)).url.get_secret_value() == MAIL

    # A target is found only at its own level.
    with pytest.raises(NotFoundError):
        await store.delete(alice.id, streams.id)
    with pytest.raises(NotFoundError):
        await store.target(alice.id, mine.id, stream_id=stream_id)
    await store.delete(alice.id, streams.id, stream_id=stream_id)
    assert await store.list(alice.id, stream_id=stream_id) == []


async def test_a_refused_url_saves_nothing(
    runtime: Runtime, store: NotificationTargetStore
) -> None:
    alice = await new_user(runtime)
    with pytest.raises(InvalidInputError):
        await store.add(alice.id, "https://example.com/not-apprise")
    with pytest.raises(InvalidInputError):
        await store.add(alice.id, NTFY, kinds=[])
    with pytest.raises(InvalidInputError):
        await store.add(alice.id, NTFY, label="x" * 121)
    assert await _rows(runtime) == []


async def test_the_stream_and_user_targets_are_combined_for_sending(
    runtime: Runtime, store: NotificationTargetStore
) -> None:
    alice = await new_user(runtime)
    tracker, other = await new_stream(runtime, alice.id), await new_stream(runtime, alice.id, "B")
    await store.add(alice.id, MAIL, label="mail")
    await store.add(alice.id, NTFY, label="research only", kinds=["research_report"])
    await store.add(alice.id, HOOK, label="tracker hook", stream_id=tracker)
    await store.add(alice.id, MAIL, label="same mail", stream_id=tracker)
    await store.add(alice.id, "ntfy://other-stream", stream_id=other)

    targets = await store.urls_for(alice.id, tracker)
    # The stream's own first, a URL at both levels once, no other stream's.
    assert [t.label for t in targets] == ["tracker hook", "same mail", "research only"]
    assert targets[0].url.get_secret_value() == HOOK
    assert targets[0].preview == "json://127.0.0.1:9/hooks/***"
    report = await store.urls_for(alice.id, tracker, kind="stream_report")
    assert [t.label for t in report] == ["tracker hook", "same mail"]
    research = await store.urls_for(alice.id, kind="research_report")
    assert [t.label for t in research] == ["mail", "research only"]


async def test_another_users_targets_and_streams_are_not_found(
    runtime: Runtime, store: NotificationTargetStore
) -> None:
    alice, bob = await new_user(runtime), await new_user(runtime)
    stream_id = await new_stream(runtime, alice.id)
    mine = await store.add(alice.id, MAIL)
    streams = await store.add(alice.id, NTFY, stream_id=stream_id)

    assert await store.list(bob.id) == []
    assert await store.urls_for(bob.id) == []
    for call in (
        store.list(bob.id, stream_id=stream_id),
        store.add(bob.id, NTFY, stream_id=stream_id),
        store.urls_for(bob.id, stream_id),
        store.target(bob.id, mine.id),
        store.delete(bob.id, mine.id),
        store.delete(bob.id, streams.id, stream_id=stream_id),
    ):
        with pytest.raises(NotFoundError):
            await call
    assert len(await _rows(runtime)) == 2


async def test_a_streams_targets_go_with_the_stream(
    runtime: Runtime, store: NotificationTargetStore
) -> None:
    alice = await new_user(runtime)
    stream_id = await new_stream(runtime, alice.id)
    await store.add(alice.id, NTFY, stream_id=stream_id)
    mine = await store.add(alice.id, MAIL)
    await StreamStore(runtime.database).delete(alice.id, stream_id)
    assert [row.id for row in await _rows(runtime)] == [mine.id]


async def test_a_level_holds_a_limited_number_of_targets(
    runtime: Runtime, store: NotificationTargetStore
) -> None:
    alice = await new_user(runtime)
    for n in range(MAX_TARGETS):
        await store.add(alice.id, f"ntfy://topic{n}")
    with pytest.raises(InvalidInputError):
        await store.add(alice.id, "ntfy://one-more")
    stream_id = await new_stream(runtime, alice.id)
    await store.add(alice.id, "ntfy://one-more", stream_id=stream_id)


async def test_an_unknown_target_is_not_found(
    runtime: Runtime, store: NotificationTargetStore
) -> None:
    alice = await new_user(runtime)
    with pytest.raises(NotFoundError):
        await store.target(alice.id, uuid.uuid4())
