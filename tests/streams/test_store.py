"""Streams and creation sessions in the database, on each backend: per-owner storage,
edits checked like the workflow's, turns saved only from the revision they started from,
the completing turn creating the stream in the same transaction, and the chat's loader of
a stream's instructions."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator

import pytest

from scholarstream.chat import stream_instructions
from scholarstream.errors import ConflictError, InvalidInputError, NotFoundError
from scholarstream.runtime import Runtime
from scholarstream.settings import Settings
from scholarstream.streams import (
    EDITABLE_FIELDS,
    CreationSession,
    PartialStreamConfig,
    RetrievalUpdate,
    StreamConfig,
    StreamQueryUpdate,
    StreamStore,
    StreamUpdate,
    WorkflowStep,
    build_retrieval_config,
    finish_config,
)
from tests.helpers import make_runtime, new_user
from tests.streams.script import FULL_CONFIG

S = WorkflowStep
THEN = " \N{SINGLE RIGHT-POINTING ANGLE QUOTATION MARK} "  # between nested field names


def config(**changes: object) -> StreamConfig:
    return finish_config(PartialStreamConfig.model_validate({**FULL_CONFIG, **changes}))


def completed(stream: StreamConfig) -> CreationSession:
    return CreationSession(
        current_step=S.COMPLETE,
        config=PartialStreamConfig.model_validate(FULL_CONFIG),
        stream=stream,
    )


@pytest.fixture
async def runtime(db_settings: Settings) -> AsyncIterator[Runtime]:
    runtime = make_runtime(db_settings)
    yield runtime
    await runtime.close()


async def test_streams_are_stored_per_owner(runtime: Runtime) -> None:
    alice, bob = await new_user(runtime), await new_user(runtime)
    store = StreamStore(runtime.database)
    first = await store.create(alice.id, config())
    second = await store.create(alice.id, config(stream_name="Second"))
    assert first.config() == config()
    assert (first.enabled, first.last_run_at) == (True, None)
    assert first.retrieval.queries["pubmed"].query.startswith('("bremelanotide"[tiab]')
    assert await store.get(alice.id, first.id) == first
    assert [s.id for s in await store.list(alice.id)] == [second.id, first.id]

    assert await store.list(bob.id) == []
    with pytest.raises(NotFoundError, match=r"stream was not found"):
        await store.get(bob.id, first.id)
    with pytest.raises(NotFoundError):
        await store.update(bob.id, first.id, StreamUpdate(stream_name="Mine"))
    with pytest.raises(NotFoundError):
        await store.delete(bob.id, first.id)
    assert await store.get(alice.id, first.id) == first

    await store.delete(alice.id, first.id)
    with pytest.raises(NotFoundError):
        await store.get(alice.id, first.id)
    assert [s.id for s in await store.list(alice.id)] == [second.id]


def test_every_field_the_workflow_edits_can_be_edited_on_a_stream() -> None:
    assert set(EDITABLE_FIELDS) <= set(StreamUpdate.model_fields)


async def test_edits_are_checked_like_the_workflows_and_a_refused_edit_changes_nothing(
    runtime: Runtime,
) -> None:
    owner = await new_user(runtime)
    store = StreamStore(runtime.database)
    stream = await store.create(owner.id, config())

    edited = await store.update(
        owner.id,
        stream.id,
        StreamUpdate(
            stream_type="Regulatory",
            keywords="bremelanotide; Vyleesi",
            competitors=None,
            chat_instructions="Focus on trial methodology.",
            enabled=False,
        ),
    )
    assert edited.stream_type == "regulatory"
    assert edited.keywords == ["bremelanotide", "Vyleesi"]
    assert edited.competitors == []
    assert edited.chat_instructions == "Focus on trial methodology."
    assert edited.enabled is False
    assert edited.updated_at >= stream.updated_at
    # The queries had not been edited: they follow the new keywords.
    assert edited.retrieval == build_retrieval_config(
        keywords=["bremelanotide", "Vyleesi"], focus_areas=FULL_CONFIG["focus_areas"]
    )

    refused = [
        (StreamUpdate(stream_type="banana"), "'banana' is not a stream type"),
        (StreamUpdate(report_frequency="hourly"), "'hourly' is not a report frequency"),
        (StreamUpdate(stream_name=None), "stream name is required and cannot be cleared"),
        (StreamUpdate(keywords=[" ", ""]), "Invalid keywords: must have at least one item"),
        (StreamUpdate(purpose="x" * 2001), "Invalid purpose: it is longer than 2000 characters"),
        (
            StreamUpdate(
                retrieval=RetrievalUpdate(queries={"nowhere": StreamQueryUpdate(query="x")})
            ),
            "unknown source 'nowhere'",
        ),
        (
            StreamUpdate(retrieval=RetrievalUpdate(queries={"pubmed": StreamQueryUpdate(limit=0)})),
            f"queries{THEN}pubmed{THEN}limit must be at least 1",
        ),
        (
            StreamUpdate(
                stream_name="Renamed",
                retrieval=RetrievalUpdate(queries={"pubmed": StreamQueryUpdate(query="  ")}),
            ),
            "a query cannot be blank",
        ),
    ]
    for change, message in refused:
        with pytest.raises(InvalidInputError, match=message):
            await store.update(owner.id, stream.id, change)
        assert await store.get(owner.id, stream.id) == edited


async def test_edited_queries_are_kept_until_derivation_is_asked_for(runtime: Runtime) -> None:
    owner = await new_user(runtime)
    store = StreamStore(runtime.database)
    stream = await store.create(owner.id, config())
    pubmed = '"bremelanotide"[tiab] AND "obesity"[mh]'
    edited = await store.update(
        owner.id,
        stream.id,
        StreamUpdate(
            retrieval=RetrievalUpdate(
                queries={
                    "pubmed": StreamQueryUpdate(query=pubmed, limit=200),
                    "arxiv": StreamQueryUpdate(enabled=False),
                }
            )
        ),
    )
    queries = edited.retrieval.queries
    assert (queries["pubmed"].query, queries["pubmed"].limit) == (pubmed, 200)
    assert queries["arxiv"].enabled is False
    assert queries["arxiv"].query == stream.retrieval.queries["arxiv"].query
    assert queries["openalex"] == stream.retrieval.queries["openalex"]

    kept = await store.update(owner.id, stream.id, StreamUpdate(keywords=["setmelanotide"]))
    assert kept.keywords == ["setmelanotide"]
    assert kept.retrieval == edited.retrieval

    derived = await store.update(owner.id, stream.id, StreamUpdate(derive_retrieval=True))
    assert derived.retrieval.queries["pubmed"].query.startswith('("setmelanotide"[tiab]')
    # Deriving changes what each source searches for, not which sources are searched.
    assert derived.retrieval.queries["arxiv"].enabled is False
    assert derived.retrieval.queries["arxiv"].query.startswith("(all:setmelanotide")


async def test_a_switched_off_source_does_not_stop_queries_following_the_keywords(
    runtime: Runtime,
) -> None:
    """Queries the user never edited follow the keywords, even with a source turned off (as
    a source that cannot run here is, from the start)."""
    owner = await new_user(runtime)
    store = StreamStore(runtime.database)
    stream = await store.create(owner.id, config())
    off = StreamUpdate(
        retrieval=RetrievalUpdate(queries={"google_scholar": StreamQueryUpdate(enabled=False)})
    )
    await store.update(owner.id, stream.id, off)
    changed = await store.update(owner.id, stream.id, StreamUpdate(keywords=["setmelanotide"]))
    queries = changed.retrieval.queries
    assert queries["pubmed"].query.startswith('("setmelanotide"[tiab]')
    assert queries["google_scholar"].enabled is False
    assert "setmelanotide" in queries["google_scholar"].query


async def test_a_creation_is_saved_turn_by_turn_and_completes_with_its_stream(
    runtime: Runtime,
) -> None:
    alice, bob = await new_user(runtime), await new_user(runtime)
    store = StreamStore(runtime.database)
    started = await store.start_creation(alice.id)
    assert (started.status, started.revision, started.stream_id) == ("open", 0, None)
    assert started.session.current_step is S.EXPLORATION
    assert started.session.history[0].role == "assistant"
    assert await store.creation(alice.id, started.id) == started

    at_purpose = CreationSession(current_step=S.PURPOSE)
    saved = await store.save_turn(alice.id, started.id, 0, at_purpose)
    assert (saved.revision, saved.session, saved.status) == (1, at_purpose, "open")

    # A turn that started from revision 0 lost the race: refused, nothing changed.
    with pytest.raises(ConflictError, match="changed while this turn ran"):
        await store.save_turn(alice.id, started.id, 0, CreationSession(current_step=S.KEYWORDS))
    with pytest.raises(ConflictError, match="changed while this turn ran"):
        await store.save_turn(alice.id, started.id, 0, completed(config()))
    assert await store.creation(alice.id, started.id) == saved
    assert await store.list(alice.id) == []

    with pytest.raises(NotFoundError, match=r"stream creation was not found"):
        await store.creation(bob.id, started.id)
    with pytest.raises(NotFoundError):
        await store.save_turn(bob.id, started.id, 1, completed(config()))

    done = await store.save_turn(alice.id, started.id, 1, completed(config()))
    assert (done.status, done.revision) == ("completed", 2)
    assert done.stream_id is not None
    (stream,) = await store.list(alice.id)
    assert stream.id == done.stream_id
    assert stream.config() == config()
    assert await store.list(bob.id) == []

    with pytest.raises(ConflictError, match="already been created"):
        await store.save_turn(alice.id, started.id, 2, completed(config()))
    with pytest.raises(ConflictError, match="its stream exists"):
        await store.abandon(alice.id, started.id)
    assert len(await store.list(alice.id)) == 1

    # Deleting the stream leaves the finished conversation readable.
    await store.delete(alice.id, stream.id)
    after = await store.creation(alice.id, started.id)
    assert (after.status, after.stream_id) == ("completed", None)


async def test_an_abandoned_creation_takes_no_more_turns(runtime: Runtime) -> None:
    owner = await new_user(runtime)
    store = StreamStore(runtime.database)
    started = await store.start_creation(owner.id)
    abandoned = await store.abandon(owner.id, started.id)
    assert (abandoned.status, abandoned.revision) == ("abandoned", 0)
    with pytest.raises(ConflictError, match="was abandoned"):
        await store.save_turn(owner.id, started.id, 0, completed(config()))
    assert await store.list(owner.id) == []


async def test_the_chat_reads_a_streams_instructions_from_its_owners_streams(
    runtime: Runtime,
) -> None:
    alice, bob = await new_user(runtime), await new_user(runtime)
    store = StreamStore(runtime.database)
    stream = await store.create(alice.id, config())
    default = stream.chat_instructions
    assert default.startswith("This research stream is 'Palatin Pipeline Tracker'.")
    assert await stream_instructions(runtime.database, alice.id, str(stream.id)) == default
    assert await stream_instructions(runtime.database, bob.id, str(stream.id)) is None
    assert await stream_instructions(runtime.database, alice.id, str(uuid.uuid4())) is None
    assert await stream_instructions(runtime.database, alice.id, "not-a-stream-id") is None
    assert await stream_instructions(runtime.database, alice.id, None) is None
    await store.update(alice.id, stream.id, StreamUpdate(chat_instructions="Cite trial phases."))
    assert (
        await stream_instructions(runtime.database, alice.id, str(stream.id))
        == "Cite trial phases."
    )
    await store.update(alice.id, stream.id, StreamUpdate(chat_instructions=""))
    assert await stream_instructions(runtime.database, alice.id, str(stream.id)) is None
