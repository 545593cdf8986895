"""One turn of the AI-guided stream creation (seed 000, section 4), for any guide:

1. apply the user's inline edits, then the user's action (before the guide is asked);
   the fields edited are the user's for the whole turn: what the guide extracts for
   them is not used (``validate_answer``);
2. work out the valid next steps;
3. build the system and user prompts;
4. let the guide stream its message and give its answer;
5-6. validate the answer (extracted data, target field, next step);
7. emit the result with the next session.

Bad input and a guide that cannot answer end the turn with one ``error`` event; the
session given in is never changed, so nothing already entered is lost.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Collection, Mapping
from contextlib import aclosing

from scholarstream.errors import ConflictError, InvalidInputError, LLMError, ScholarStreamError
from scholarstream.search.core import ModelFallback
from scholarstream.streams.core._actions import (
    SkipStep,
    TextInput,
    UserAction,
    apply_field_edits,
    apply_user_action,
)
from scholarstream.streams.core._answer import GuideAnswer
from scholarstream.streams.core._events import GuideError, GuideEvent, GuideTurnResult
from scholarstream.streams.core._fields import field_spec
from scholarstream.streams.core._guide import Guide, GuideFellBack, GuideRequest
from scholarstream.streams.core._prompt import build_system_prompt, build_user_prompt
from scholarstream.streams.core._session import CreationSession, GuideMessage, GuideOffer
from scholarstream.streams.core._validation import ValidatedTurn, validate_answer
from scholarstream.streams.core._workflow import (
    STEP_TO_FIELD_MAPPING,
    WorkflowStep,
    completed_steps,
    get_available_next_steps,
    is_data_step,
    step_guidance,
)

MAX_MESSAGE_CHARS = 8000
# A typed answer that says "nothing here" to an optional step: the step is skipped, as the
# Skip button does, instead of "none" becoming a value (an organisation called "none").
_NOTHING = frozenset(
    {"none", "no", "nope", "nothing", "no one", "nobody", "n/a", "na", "skip", "skip it",
     "skip this", "not applicable", "none for now", "no thanks", "no organisations",
     "no organizations", "-"}
)  # fmt: skip


def _typed_skip(step: WorkflowStep, message: str, action: UserAction) -> UserAction:
    if not isinstance(action, TextInput) or not is_data_step(step):
        return action
    name = STEP_TO_FIELD_MAPPING[step]
    said = " ".join(message.lower().strip(" .!").split())
    if field_spec(name).optional and said in _NOTHING:
        return SkipStep(target_field=name)
    return action


async def advance(
    session: CreationSession,
    message: str,
    action: UserAction | None,
    guide: Guide,
    *,
    edits: Mapping[str, object] | None = None,
    unavailable_sources: Collection[str] = (),
) -> AsyncGenerator[GuideEvent, None]:
    """Runs one turn. ``action`` ``None`` means typed text; ``edits`` are the preview
    panel's inline edits (field -> value, ``None`` clears); ``unavailable_sources`` are
    not enabled in a stream this turn creates. Yields ``text_delta`` (and ``retry``)
    events, then one ``turn_result`` carrying the next session, or one ``error``."""
    try:
        request = prepare_turn(
            session, message, action, edits, unavailable_sources=unavailable_sources
        )
    except ScholarStreamError as exc:
        yield _error(exc)
        return
    answer: GuideAnswer | None = None
    fallback: ModelFallback | None = None
    try:
        # Closed with the turn, so a client that leaves stops the model call too.
        async with aclosing(guide.respond(request)) as items:
            async for item in items:
                if isinstance(item, GuideAnswer):
                    answer = item
                elif isinstance(item, GuideFellBack):
                    fallback = item.fallback
                else:
                    yield item
        if answer is None:
            raise LLMError("The guide ended its turn without an answer.", hint="Try again.")
    except ScholarStreamError as exc:
        yield _error(exc)
        return
    yield _result(session, request, validate_answer(answer, request), fallback)


def prepare_turn(
    session: CreationSession,
    message: str,
    action: UserAction | None,
    edits: Mapping[str, object] | None = None,
    *,
    unavailable_sources: Collection[str] = (),
) -> GuideRequest:
    """Steps 1-3: the edits and action applied, the valid next steps, the prompts.
    ``InvalidInputError`` (or ``ConflictError`` once complete) when the input is refused."""
    if session.current_step is WorkflowStep.COMPLETE:
        raise ConflictError(
            "This stream has already been created; the creation workflow is finished.",
            hint="Open the stream to change it, or start a new creation.",
        )
    action = _typed_skip(session.current_step, message, action or TextInput())
    if isinstance(action, TextInput) and not message.strip():
        raise InvalidInputError("The message is empty.", hint="Type a message.")
    if len(message) > MAX_MESSAGE_CHARS:
        raise InvalidInputError(
            f"The message is longer than {MAX_MESSAGE_CHARS} characters.",
            hint="Send a shorter message.",
        )
    edited = session.model_copy(update={"config": apply_field_edits(session.config, edits)})
    edited_fields = tuple(edits or ())
    outcome = apply_user_action(edited, action)
    current = session.current_step
    valid = get_available_next_steps(
        current, completed_steps(outcome.config, outcome.skipped_steps)
    )
    guidance = step_guidance(current)
    system_prompt = build_system_prompt(
        current_step=current,
        step_guidance=guidance,
        valid_next_steps=valid,
        step_just_completed=outcome.step_just_completed,
        field_name=outcome.populated_field,
        skipped=isinstance(action, SkipStep),
    )
    user_prompt = build_user_prompt(
        message=message,
        action_note=outcome.prompt_note,
        config=outcome.config,
        skipped_steps=outcome.skipped_steps,
        step_guidance=guidance,
        edited_fields=edited_fields,
    )
    return GuideRequest(
        current_step=current,
        message=message,
        action=action,
        action_note=outcome.note,
        config=outcome.config,
        skipped_steps=outcome.skipped_steps,
        history=tuple(session.history),
        valid_next_steps=tuple(valid),
        step_just_completed=outcome.step_just_completed,
        system_prompt=system_prompt,
        user_prompt=user_prompt,
        unavailable_sources=frozenset(unavailable_sources),
        edited_fields=frozenset(edited_fields),
    )


def _result(
    session: CreationSession,
    request: GuideRequest,
    turn: ValidatedTurn,
    fallback: ModelFallback | None = None,
) -> GuideTurnResult:
    history = [
        *session.history,
        GuideMessage(
            role="user",
            content=request.message.strip(),
            action=request.action_note,
            step=session.current_step,
        ),
        GuideMessage(role="assistant", content=turn.message, fallback=fallback),
    ]
    offer = (
        GuideOffer(
            target_field=turn.target_field,
            suggestions=turn.suggestions,
            options=turn.options,
            proposed_message=turn.proposed_message,
        )
        if turn.target_field and (turn.suggestions or turn.options)
        else None
    )
    next_session = CreationSession(
        current_step=turn.next_step,
        config=turn.config,
        skipped_steps=list(request.skipped_steps),
        history=history,
        stream=turn.stream,
        offer=offer,
    )
    return GuideTurnResult(
        mode=turn.mode,
        message=turn.message,
        next_step=turn.next_step,
        updated_config=turn.config,
        target_field=turn.target_field,
        suggestions=turn.suggestions,
        options=turn.options,
        proposed_message=turn.proposed_message,
        step_just_completed=turn.step_just_completed,
        completed_steps=next_session.completed_steps,
        available_next_steps=next_session.available_next_steps(),
        warnings=turn.warnings,
        fallback=fallback,
        stream=turn.stream,
        session=next_session,
    )


def _error(exc: ScholarStreamError) -> GuideError:
    return GuideError(code=exc.code, message=exc.message, hint=exc.hint)
