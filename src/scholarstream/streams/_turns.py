"""One creation turn as the API runs it, on a stored session.

Before the guide is asked, ``check_turn`` finds what the turn would refuse (a closed
creation, an unknown field, a value outside an enum, a required field skipped...): such a
turn is answered with one ``error`` event naming the field, and the guide is not asked.
Otherwise the guide streams its message (``text_delta``, ``retry``) and the session the
turn produced is saved (creating the stream at ``complete``) *before* the ``turn_result``
is sent: an ``error`` event, or a client that leaves mid-turn, saves nothing and the
stored session stays as it was. ``turn_stream`` gives the turn's events their SSE ids
(``<revision>:<n>``) for ``scholarstream.sse``, the one encoder."""

from __future__ import annotations

import uuid
from collections.abc import AsyncGenerator, Callable, Collection
from contextlib import aclosing
from typing import Annotated

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    JsonValue,
    TypeAdapter,
    ValidationInfo,
    field_validator,
    model_validator,
)
from pydantic_ai.usage import RunUsage
from pydantic_core import PydanticCustomError

from scholarstream.db import Database, OwnerScope
from scholarstream.errors import InvalidInputError, ScholarStreamError
from scholarstream.llm import LLMGateway, ModelRegistry, ResolvedModel, record_usage
from scholarstream.settings import Settings
from scholarstream.sse import Identified
from scholarstream.streams._fallback_guide import FallbackGuide
from scholarstream.streams._model_guide import FEATURE, ModelGuide, UsageSink
from scholarstream.streams._selection import guide_for
from scholarstream.streams._store import StreamStore
from scholarstream.streams.core import (
    MAX_MESSAGE_CHARS,
    STEP_TO_FIELD_MAPPING,
    CreationRecord,
    CreationSession,
    Guide,
    GuideError,
    GuideRetry,
    GuideTextDelta,
    GuideTurnResult,
    OptionSelected,
    OptionsSelected,
    SkipStep,
    TextInput,
    UserAction,
    advance,
    apply_field_edits,
    prepare_turn,
)

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
    user_action: UserAction | None = Field(
        default=None,
        description="The seed's name for ``action`` (seed 000's request field): either may "
        "be sent; when both are, they must be the same action.",
    )
    edits: dict[str, JsonValue] | None = Field(
        default=None,
        description="Inline edits from the preview panel: field -> value (null clears), "
        "applied before the action.",
    )

    @field_validator("user_action")
    @classmethod
    def _one_action(cls, value: UserAction | None, info: ValidationInfo) -> UserAction | None:
        action = info.data.get("action")
        if value is not None and action is not None and action != value:
            raise PydanticCustomError(
                "conflicting_actions",
                "user_action and action name two different actions: send the action once, "
                "under either name",
            )
        return value

    @model_validator(mode="after")
    def _action_from_user_action(self) -> CreationTurnIn:
        if self.action is None:
            self.action = self.user_action
        return self


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


async def turn_stream(
    revision: int, events: AsyncGenerator[CreationEvent, None]
) -> AsyncGenerator[list[Identified], None]:
    """A turn's events as server-sent events, each sent as it comes, with the id
    ``<revision>:<n>`` (``revision``: the creation's revision the turn started from)."""
    async with aclosing(events):
        n = 0
        async for event in events:
            n += 1
            yield [Identified(f"{revision}:{n}", event)]


def check_turn(record: CreationRecord, turn: CreationTurnIn) -> GuideError | None:
    """The ``error`` event the turn is refused with, or ``None`` when the guide may answer
    it: ``conflict`` for a creation that is over, ``invalid_input`` (with the ``field``)
    for a message, edits or an action the current step does not accept."""
    if record.status != "open":
        return _refusal(record.closed_error(), None)
    try:
        prepare_turn(record.session, turn.message, turn.action, turn.edits)
    except InvalidInputError as exc:
        return _refusal(exc, _refused_field(record.session, turn))
    except ScholarStreamError as exc:
        return _refusal(exc, None)
    return None


async def refused_turn(error: GuideError) -> AsyncGenerator[CreationEvent, None]:
    """A refused turn's events: its one ``error``."""
    yield error


def _refusal(exc: ScholarStreamError, field: str | None) -> GuideError:
    return GuideError(code=exc.code, message=exc.message, hint=exc.hint, field=field)


def _refused_field(session: CreationSession, turn: CreationTurnIn) -> str | None:
    """What a refused turn is about, checked in ``prepare_turn``'s order: the message, then
    the first edit refused on its own, then the action's field."""
    action = turn.action if turn.action is not None else TextInput()
    empty = isinstance(action, TextInput) and not turn.message.strip()
    if empty or len(turn.message) > MAX_MESSAGE_CHARS:
        return "message"
    for name, value in (turn.edits or {}).items():
        try:
            apply_field_edits(session.config, {name: value})
        except InvalidInputError:
            return name
    if isinstance(action, OptionSelected | OptionsSelected):
        return action.target_field
    if isinstance(action, SkipStep):
        return action.target_field or STEP_TO_FIELD_MAPPING.get(session.current_step)
    return None


async def creation_guide(
    database: Database, models: ModelRegistry, settings: Settings, owner_id: uuid.UUID
) -> Guide:
    """The owner's guide (``guide_for``): a model guide records each turn's usage under the
    ``stream_guide`` feature, answers within its budget and deadline, and leaves a turn it
    cannot answer to the rule-based guide (``FallbackGuide``). ``settings``: the llm
    section (timeouts, budgets) and what ``record_usage`` prices the usage with."""
    async with database.session() as session:
        guide = await guide_for(
            models,
            OwnerScope(session, owner_id),
            timeout_seconds=settings.llm.timeout_seconds,
        )
    if not isinstance(guide, ModelGuide):
        return guide
    guide.on_usage = _usage_recorder(database, settings, owner_id, guide.resolved)
    guide.max_tokens = LLMGateway(settings, models).max_tokens(guide.resolved, FEATURE)
    return FallbackGuide(guide, deadline_seconds=settings.llm.deadline_seconds)


def _usage_recorder(
    database: Database, settings: Settings, owner_id: uuid.UUID, resolved: ResolvedModel
) -> UsageSink:
    async def record(usage: RunUsage) -> None:
        async with database.session(write=True) as session:
            await record_usage(
                OwnerScope(session, owner_id),
                settings,
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
    unavailable_sources: Collection[str] = (),
) -> AsyncGenerator[CreationEvent, None]:
    """The turn's events; the last is a saved ``turn_result`` or an ``error``. A stream the
    turn creates does not enable ``unavailable_sources`` (sources that cannot run here)."""
    turn_events = advance(
        record.session,
        turn.message,
        turn.action,
        guide,
        edits=turn.edits,
        unavailable_sources=unavailable_sources,
    )
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
