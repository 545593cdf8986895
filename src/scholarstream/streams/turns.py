"""One creation turn as the API runs it, on a stored session.

Before anything is streamed, ``check_turn`` refuses what the turn would refuse (a closed
creation, an unknown field, a value outside an enum, a required field skipped...), so the
client gets a plain 4xx. Then the guide streams its message (``text_delta``, ``retry``)
and the session the turn produced is saved (creating the stream at ``complete``) *before*
the ``turn_result`` is sent: an ``error`` event, or a client that leaves mid-turn, saves
nothing and the stored session stays as it was."""

from __future__ import annotations

import uuid
from collections.abc import AsyncGenerator, Callable
from contextlib import aclosing
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, JsonValue, TypeAdapter
from pydantic_ai.usage import RunUsage

from scholarstream.db.scope import OwnerScope
from scholarstream.errors import ScholarStreamError
from scholarstream.llm import ResolvedModel, record_usage
from scholarstream.runtime import Runtime
from scholarstream.sse import encode_sse
from scholarstream.streams.actions import UserAction
from scholarstream.streams.creation import advance, prepare_turn
from scholarstream.streams.events import GuideError, GuideRetry, GuideTextDelta, GuideTurnResult
from scholarstream.streams.guide import Guide
from scholarstream.streams.model_guide import FEATURE, ModelGuide, UsageSink
from scholarstream.streams.records import CreationRecord
from scholarstream.streams.selection import guide_for
from scholarstream.streams.store import StreamStore

StreamLocator = Callable[[uuid.UUID], str]
"""A stream id -> the URL of that stream (the API knows its own routes)."""


class CreationTurnIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    message: str = Field(
        default="", description="What the user typed (may be empty with an action)."
    )
    action: UserAction | None = Field(
        default=None, description="What the user did (seed 000, section 2); none is typed text."
    )
    edits: dict[str, JsonValue] | None = Field(
        default=None,
        description="Inline edits from the preview panel: field -> value (null clears), "
        "applied before the action.",
    )


class CreationTurnResult(GuideTurnResult):
    """The guide's ``turn_result`` once the session it carries is saved, with where it was
    saved and, when the turn completed the workflow, the new stream."""

    creation_id: uuid.UUID
    revision: int = Field(description="The creation's revision after this turn.")
    stream_id: uuid.UUID | None = None
    stream_url: str | None = None


CreationEvent = Annotated[
    GuideTextDelta | GuideRetry | CreationTurnResult | GuideError, Field(discriminator="type")
]
creation_event_adapter: TypeAdapter[CreationEvent] = TypeAdapter(CreationEvent)


def encode_creation_event(event: CreationEvent, event_id: str) -> bytes:
    """The one SSE encoding of a creation turn's events (``type`` in the JSON data)."""
    return encode_sse(event_id, event.model_dump_json())


def check_turn(record: CreationRecord, turn: CreationTurnIn) -> None:
    """Raises what the turn would be refused for: ``ConflictError`` for a creation that is
    over, ``InvalidInputError`` for edits or an action the current step does not accept."""
    if record.status != "open":
        raise record.closed_error()
    prepare_turn(record.session, turn.message, turn.action, turn.edits)


async def creation_guide(runtime: Runtime, owner_id: uuid.UUID) -> Guide:
    """The owner's guide (``guide_for``): a model guide records each turn's usage under the
    ``stream_guide`` feature."""
    async with runtime.database.session() as session:
        guide = await guide_for(
            runtime.models,
            OwnerScope(session, owner_id),
            timeout_seconds=runtime.settings.llm.timeout_seconds,
        )
    if isinstance(guide, ModelGuide):
        guide.on_usage = _usage_recorder(runtime, owner_id, guide.resolved)
    return guide


def _usage_recorder(runtime: Runtime, owner_id: uuid.UUID, resolved: ResolvedModel) -> UsageSink:
    async def record(usage: RunUsage) -> None:
        async with runtime.database.session(write=True) as session:
            await record_usage(
                OwnerScope(session, owner_id),
                runtime.settings,
                feature=FEATURE,
                resolved=resolved,
                usage=usage,
            )

    return record


async def run_creation_turn(
    store: StreamStore,
    owner_id: uuid.UUID,
    record: CreationRecord,
    turn: CreationTurnIn,
    guide: Guide,
    *,
    locate: StreamLocator,
) -> AsyncGenerator[CreationEvent, None]:
    """The turn's events; the last is a saved ``turn_result`` or an ``error``."""
    turn_events = advance(record.session, turn.message, turn.action, guide, edits=turn.edits)
    async with aclosing(turn_events) as events:
        async for event in events:
            if not isinstance(event, GuideTurnResult):
                yield event
                continue
            try:
                saved = await store.save_turn(owner_id, record.id, record.revision, event.session)
            except ScholarStreamError as exc:
                yield GuideError(code=exc.code, message=exc.message, hint=exc.hint)
                return
            yield CreationTurnResult.model_validate(
                {
                    **dict(event),
                    "creation_id": saved.id,
                    "revision": saved.revision,
                    "stream_id": saved.stream_id,
                    "stream_url": locate(saved.stream_id) if saved.stream_id else None,
                }
            )
