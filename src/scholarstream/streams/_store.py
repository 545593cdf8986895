"""Research streams and their creation sessions in the database, always through the
owner's scope: another user's stream or session is simply not found.

Each call is one short transaction of its own, so a creation turn holds no connection
while the guide writes. A turn's session is saved only once the turn succeeded, and only
if no other turn was saved since it started (``revision``); the turn that completes the
workflow creates the stream in the same transaction."""

from __future__ import annotations

import builtins
import uuid
from typing import Any

from sqlalchemy import update

from scholarstream.db import Database, OwnerScope
from scholarstream.db.tables import StreamCreationRow, StreamRow
from scholarstream.errors import ConflictError
from scholarstream.streams.core import (
    CreationRecord,
    CreationSession,
    CreationStatus,
    CreationSummary,
    Stream,
    StreamConfig,
    StreamUpdate,
    WorkflowStep,
    apply_update,
    new_session,
)

STREAM = "Stream"
CREATION = "Stream creation"


def to_stream(row: StreamRow) -> Stream:
    return Stream.model_validate(
        {
            "id": row.id,
            "stream_name": row.stream_name,
            "purpose": row.purpose,
            "business_goals": row.business_goals,
            "expected_outcomes": row.expected_outcomes,
            "stream_type": row.stream_type,
            "focus_areas": row.focus_areas,
            "keywords": row.keywords,
            "competitors": row.competitors,
            "report_frequency": row.report_frequency,
            "chat_instructions": row.chat_instructions,
            "retrieval": row.retrieval,
            "enabled": row.enabled,
            "last_run_at": row.last_run_at,
            "created_at": row.created_at,
            "updated_at": row.updated_at,
        }
    )


def _config_columns(config: StreamConfig) -> dict[str, Any]:
    """The row's columns for ``config``: one column per field, the retrieval as JSON."""
    return config.model_dump(mode="json")


def to_record(row: StreamCreationRow) -> CreationRecord:
    return CreationRecord.model_validate(
        {
            "id": row.id,
            "status": row.status,
            "revision": row.revision,
            "session": row.state,
            "stream_id": row.stream_id,
            "created_at": row.created_at,
            "updated_at": row.updated_at,
        }
    )


class StreamStore:
    def __init__(self, database: Database) -> None:
        self.database = database

    # --- streams ---------------------------------------------------------------------------

    async def list(self, owner_id: uuid.UUID) -> list[Stream]:
        """The owner's streams, newest first."""
        async with self.database.session() as session:
            query = (
                OwnerScope(session, owner_id)
                .select(StreamRow)
                .order_by(StreamRow.created_at.desc(), StreamRow.stream_name)
            )
            return [to_stream(row) for row in await session.scalars(query)]

    async def get(self, owner_id: uuid.UUID, stream_id: uuid.UUID) -> Stream:
        async with self.database.session() as session:
            return to_stream(
                await OwnerScope(session, owner_id).get(StreamRow, stream_id, what=STREAM)
            )

    async def create(self, owner_id: uuid.UUID, config: StreamConfig) -> Stream:
        async with self.database.session(write=True) as session:
            return to_stream(await _add_stream(OwnerScope(session, owner_id), config))

    async def update(
        self, owner_id: uuid.UUID, stream_id: uuid.UUID, change: StreamUpdate
    ) -> Stream:
        """Applies the fields sent (validated like the workflow's); nothing changes when any
        of them is refused."""
        async with self.database.session(write=True) as session:
            row = await OwnerScope(session, owner_id).get(StreamRow, stream_id, what=STREAM)
            config = apply_update(to_stream(row).config(), change)
            for name, value in _config_columns(config).items():
                setattr(row, name, value)
            if change.enabled is not None:
                row.enabled = change.enabled
            await session.flush()
            return to_stream(row)

    async def delete(self, owner_id: uuid.UUID, stream_id: uuid.UUID) -> None:
        async with self.database.session(write=True) as session:
            scope = OwnerScope(session, owner_id)
            await scope.delete(await scope.get(StreamRow, stream_id, what=STREAM))

    async def chat_instructions(self, owner_id: uuid.UUID, stream_id: str) -> str | None:
        """The stream's chat instructions, for the chat's system prompt; None when the id
        names none of the owner's streams (a stream deleted while its page is open, or not a
        stream id at all) or the stream has none."""
        try:
            key = uuid.UUID(stream_id)
        except ValueError:
            return None
        async with self.database.session() as session:
            query = (
                OwnerScope(session, owner_id)
                .select(StreamRow)
                .where(StreamRow.id == key)
                .with_only_columns(StreamRow.chat_instructions)
            )
            instructions = await session.scalar(query)
        return instructions or None

    # --- creation sessions -----------------------------------------------------------------

    async def start_creation(
        self, owner_id: uuid.UUID, session: CreationSession | None = None
    ) -> CreationRecord:
        """A new open creation, at ``exploration`` with the guide's opening question."""
        state = session if session is not None else new_session()
        async with self.database.session(write=True) as db:
            row = OwnerScope(db, owner_id).add(
                StreamCreationRow(status="open", state=state.model_dump(mode="json"), revision=0)
            )
            await db.flush()
            return to_record(row)

    async def open_creation(self, owner_id: uuid.UUID) -> tuple[CreationRecord, bool]:
        """The owner's empty draft (open, no turn taken yet) if there is one, else a new
        creation; and whether it is new. Opening "New stream" again and again leaves one
        draft, not a pile of untitled ones."""
        async with self.database.session() as session:
            query = (
                OwnerScope(session, owner_id)
                .select(StreamCreationRow)
                .where(StreamCreationRow.status == "open", StreamCreationRow.revision == 0)
                .order_by(StreamCreationRow.created_at.desc(), StreamCreationRow.id)
                .limit(1)
            )
            row = await session.scalar(query)
            if row is not None:
                return to_record(row), False
        return await self.start_creation(owner_id), True

    async def delete_creation(self, owner_id: uuid.UUID, creation_id: uuid.UUID) -> None:
        """Deletes a draft (open or abandoned) and its conversation; a completed creation
        stays, as its stream's history (``ConflictError``)."""
        async with self.database.session(write=True) as session:
            scope = OwnerScope(session, owner_id)
            row = await scope.get(StreamCreationRow, creation_id, what=CREATION)
            if row.status == "completed":
                raise ConflictError(
                    "This creation is completed: its stream exists, and this is its history.",
                    hint="Delete the stream instead.",
                )
            await scope.delete(row)

    async def creations(
        self, owner_id: uuid.UUID, status: CreationStatus | None = "open"
    ) -> builtins.list[CreationSummary]:  # ``list`` is a method here
        """The owner's creations with ``status`` (``None``: all), most recently changed
        first."""
        async with self.database.session() as session:
            query = OwnerScope(session, owner_id).select(StreamCreationRow)
            if status is not None:
                query = query.where(StreamCreationRow.status == status)
            query = query.order_by(
                StreamCreationRow.updated_at.desc(),
                StreamCreationRow.created_at.desc(),
                StreamCreationRow.id,
            )
            rows = await session.scalars(query)
            return [CreationSummary.of(to_record(row)) for row in rows]

    async def creation(self, owner_id: uuid.UUID, creation_id: uuid.UUID) -> CreationRecord:
        async with self.database.session() as session:
            row = await OwnerScope(session, owner_id).get(
                StreamCreationRow, creation_id, what=CREATION
            )
            return to_record(row)

    async def save_turn(
        self, owner_id: uuid.UUID, creation_id: uuid.UUID, revision: int, state: CreationSession
    ) -> CreationRecord:
        """Saves the session a turn produced. The turn must have started from ``revision``
        of an open session (``ConflictError`` otherwise: another turn was saved meanwhile,
        or the creation is over). A session at ``complete`` creates its stream in the same
        transaction, and the creation becomes ``completed``."""
        async with self.database.session(write=True) as session:
            scope = OwnerScope(session, owner_id)
            values: dict[str, Any] = {
                "state": state.model_dump(mode="json"),
                "revision": revision + 1,
            }
            if state.current_step is WorkflowStep.COMPLETE:
                if state.stream is None:
                    raise ConflictError(
                        "The creation reached its end without a finished configuration.",
                        hint="Review the stream and confirm it again.",
                    )
                stream = await _add_stream(scope, state.stream)
                values |= {"status": "completed", "stream_id": stream.id}
            result = await session.execute(
                update(StreamCreationRow)
                .where(
                    StreamCreationRow.id == creation_id,
                    StreamCreationRow.owner_id == owner_id,
                    StreamCreationRow.status == "open",
                    StreamCreationRow.revision == revision,
                )
                .values(**values)
                .execution_options(synchronize_session=False)
            )
            if not result.rowcount:  # type: ignore[attr-defined]
                # Rolls back the stream created above with the transaction.
                raise _not_saved(
                    await scope.get(StreamCreationRow, creation_id, what=CREATION), revision
                )
            return to_record(await scope.get(StreamCreationRow, creation_id, what=CREATION))

    async def abandon(self, owner_id: uuid.UUID, creation_id: uuid.UUID) -> CreationRecord:
        """Ends an open creation without a stream; its conversation stays readable."""
        async with self.database.session(write=True) as session:
            row = await OwnerScope(session, owner_id).get(
                StreamCreationRow, creation_id, what=CREATION
            )
            if row.status == "completed":
                raise ConflictError(
                    "This creation is completed: its stream exists.",
                    hint="Delete the stream instead (DELETE /api/v1/streams/{id}).",
                )
            row.status = "abandoned"
            await session.flush()
            return to_record(row)


async def _add_stream(scope: OwnerScope, config: StreamConfig) -> StreamRow:
    row = scope.add(StreamRow(**_config_columns(config), enabled=True))
    await scope.session.flush()
    return row


def _not_saved(row: StreamCreationRow, revision: int) -> ConflictError:
    record = to_record(row)
    if record.status != "open":
        return record.closed_error()
    return ConflictError(
        f"The creation changed while this turn ran (revision {row.revision}, the turn started "
        f"from {revision}); the turn was not saved.",
        hint="Reload the creation (GET /api/v1/streams/creation/{id}) and send the message again.",
    )
