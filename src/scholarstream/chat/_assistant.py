"""The chat's orchestration: check a message, store it, and answer it as a turn (a command,
the offline notice, or a model run), publishing the seed's events as it goes and storing
the finished (or stopped, or failed) answer."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import uuid
from collections.abc import Awaitable, Callable

from pydantic import BaseModel, ConfigDict, Field, field_validator

from scholarstream.chat._actions import server_actions
from scholarstream.chat._agent_loop import AgentTools, ToolRunner, TurnTranscript, run_agent_turn
from scholarstream.chat._citations import checked_citations
from scholarstream.chat._commands import (
    HELP,
    available_commands,
    command_chips,
    help_text,
    is_command,
    missing_argument_text,
    parse_command,
)
from scholarstream.chat._compact_prompt import tool_definitions
from scholarstream.chat._conversations import (
    ConversationStore,
    EvidenceChange,
    MessageError,
    StartedTurn,
)
from scholarstream.chat._planned_search import (
    NO_TOPIC,
    SAME_SEARCH,
    offline_retrieval,
    search_if_skipped,
)
from scholarstream.chat._prompt import RECITABLE_INSTRUCTIONS, TurnPrompt, build_turn_prompt
from scholarstream.chat._stream_instructions import stream_instructions
from scholarstream.chat._turns import Turn, TurnHub
from scholarstream.chat.continuity import (
    ThreadState,
    TurnContinuity,
    begin_turn,
    context_pack,
    finish_turn,
    report,
)
from scholarstream.chat.core import (
    SUGGESTED_ACTIONS,
    SUGGESTION_MARKERS,
    ChatContext,
    ChatResponsePayload,
    CompleteEvent,
    ConversationEvidence,
    ErrorEvent,
    ParsedAnswer,
    StatusEvent,
    SuggestedValue,
    TextDeltaEvent,
    earlier_citations,
    parse_answer,
)
from scholarstream.chat.pages import Resolution, resolve
from scholarstream.chat.tools import ToolArgumentsError, ToolContext, ToolServices
from scholarstream.db import Database, OwnerScope
from scholarstream.errors import InvalidInputError, ScholarStreamError
from scholarstream.llm import DEFAULT_ROLE, ModelRegistry, record_usage
from scholarstream.settings import Settings

log = logging.getLogger(__name__)
MAX_CHIPS = 6
# How long storing the user's message waits for the turn's first output (see _record_start).
RECORD_WAIT_SECONDS = 0.05


class ChatMessageIn(BaseModel):
    # A misspelt field ("conversationId") is refused, never read as a new conversation.
    model_config = ConfigDict(extra="forbid")

    message: str = Field(description="What the user typed (or the value of a clicked chip).")
    context: ChatContext
    conversation_id: uuid.UUID | None = None

    @field_validator("message")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("it is empty: type a question or a /command")
        return value.strip()


class Assistant:
    """``settings``: the chat section (limits), the llm section (the model's timeout and
    prices, for the usage it records); ``tools``: what the tools a turn calls work with."""

    def __init__(
        self,
        *,
        settings: Settings,
        database: Database,
        models: ModelRegistry,
        tools: ToolServices,
        hub: TurnHub,
    ) -> None:
        self.app_settings = settings
        self.database = database
        self.models = models
        self.tools = tools
        self.hub = hub
        self.settings = settings.chat
        self.store = ConversationStore(database, history_messages=self.settings.history_messages)

    def check(self, request: ChatMessageIn) -> Resolution:
        """Refuses what cannot be answered, before anything is stored."""
        if len(request.message) > self.settings.max_message_chars:
            raise InvalidInputError(
                f"The message has {len(request.message)} characters; the limit is "
                f"{self.settings.max_message_chars}.",
                hint="Shorten it, or put long text in the library and refer to it.",
            )
        size = len(request.context.model_dump_json().encode())
        if size > self.settings.max_context_bytes:
            raise InvalidInputError(
                f"The page context is {size} bytes; the limit is "
                f"{self.settings.max_context_bytes}.",
                hint="Send item summaries (id, title, key fields), not full records; the "
                "retrieve_items tool fetches full records when needed.",
            )
        return resolve(request.context)

    async def start(self, owner_id: uuid.UUID, request: ChatMessageIn) -> Turn:
        resolution = self.check(request)
        turn_id = self.hub.new_turn_id()
        started = await self.store.open_turn(
            owner_id,
            conversation_id=request.conversation_id,
            message=request.message,
            context=request.context.model_dump(mode="json", exclude_none=True),
            turn_id=turn_id,
        )
        turn = Turn(turn_id, owner_id, started.conversation_id)
        turn.publish(
            StatusEvent(
                message="Thinking…", conversation_id=started.conversation_id, turn_id=turn_id
            )
        )
        continuity = _read_against_thread(request.message, resolution, started.thread)
        self.hub.start(turn, lambda t: self._answer(t, request, resolution, started, continuity))
        return turn

    async def _answer(
        self,
        turn: Turn,
        request: ChatMessageIn,
        resolution: Resolution,
        started: StartedTurn,
        continuity: TurnContinuity | None,
    ) -> None:
        # Every way out of the turn waits for the message to be stored before storing the answer.
        recorded = asyncio.create_task(self._record_start(turn, started))
        # The conversation's records under their keys: what the tools show keeps them.
        transcript = TurnTranscript(evidence=started.evidence.builder())
        context = ToolContext(
            self.tools,
            turn.owner_id,
            request.context,
            turn.conversation_id,
            evidence=transcript.evidence,
        )
        try:
            if is_command(request.message):
                await self._run_command(
                    turn, request.message, resolution, context, transcript, continuity
                )
            elif await self.models.offline_for_owner(self.database, turn.owner_id):
                await self._run_offline(turn, resolution, context, transcript, continuity)
            else:
                await self._run_model(
                    turn, request, resolution, context, started, transcript, continuity
                )
            response = await self._response(turn, resolution, transcript, started)
            await recorded
            await self.store.finish_turn(
                turn.owner_id,
                started.assistant_message_id,
                status="complete",
                content=response.message,
                response=response,
                model_messages=transcript.new_messages,
                also=self._usage_writer(transcript),
                thread=_thread_update(continuity, transcript, response),
                evidence=_evidence_update(transcript, response),
            )
            turn.publish(CompleteEvent(payload=response))
        except asyncio.CancelledError:
            await asyncio.shield(self._stopped(turn, resolution, transcript, started, recorded))
            raise
        except ScholarStreamError as exc:
            await self._failed(turn, started, transcript, recorded, exc.code, exc.message, exc.hint)
        except Exception:
            log.exception("chat turn %s failed", turn.id)
            await self._failed(
                turn,
                started,
                transcript,
                recorded,
                "internal_error",
                "The assistant failed unexpectedly.",
                "Try again; if it keeps failing, the server log has the details.",
            )

    async def _record_start(self, turn: Turn, started: StartedTurn) -> None:
        """Stores the message once the turn has published its first output, or after
        ``RECORD_WAIT_SECONDS`` if a slow model has not answered by then. Written while the
        model starts, the write would delay the first token: the writes run in SQLite's
        thread and that thread and the event loop take turns holding the interpreter."""
        await turn.next_publish(RECORD_WAIT_SECONDS)
        await self.store.record_start(turn.owner_id, started)

    async def _run_command(
        self,
        turn: Turn,
        message: str,
        resolution: Resolution,
        context: ToolContext,
        transcript: TurnTranscript,
        continuity: TurnContinuity | None,
    ) -> None:
        call = parse_command(message, resolution)
        name = message.split()[0]
        offline = await self.models.offline_for_owner(self.database, turn.owner_id)
        if call is None:
            unknown = None if name[1:].lower() == HELP else name
            transcript.text = help_text(resolution, offline=offline, unknown=unknown)
        else:
            rewrite = continuity.rewrite if continuity is not None else None
            runner = ToolRunner(context, turn.publish, transcript, max_calls=1, rewrite=rewrite)
            # A command's answer is the user's to read: the tool's words for a person.
            transcript.text = await runner.run_for_user(call.command.tool, call.arguments)
            if isinstance(runner.last.error, ToolArgumentsError):
                transcript.text = missing_argument_text(call) or (
                    f"{transcript.text} Usage: {call.command.usage}"
                )
        turn.publish(TextDeltaEvent(text=transcript.text))

    async def _run_offline(
        self,
        turn: Turn,
        resolution: Resolution,
        context: ToolContext,
        transcript: TurnTranscript,
        continuity: TurnContinuity | None,
    ) -> None:
        """Without a model, a message that is not a command is a retrieval request: the
        blueprint's (reframed) queries run against the library and the sources."""
        if continuity is not None and continuity.closing_reply:
            transcript.text = continuity.closing_reply
        elif continuity is not None and continuity.points_at_results:
            transcript.text = SAME_SEARCH
        elif continuity is None or not continuity.steps:
            usages = [command.usage for command in available_commands(resolution)[:3]]
            transcript.text = NO_TOPIC.format(commands=", ".join(usages) or "none on this page")
        else:
            transcript.text = await offline_retrieval(
                continuity, resolution, ToolRunner(context, turn.publish, transcript, 10)
            )
        turn.publish(TextDeltaEvent(text=transcript.text))

    async def _run_model(
        self,
        turn: Turn,
        request: ChatMessageIn,
        resolution: Resolution,
        context: ToolContext,
        started: StartedTurn,
        transcript: TurnTranscript,
        continuity: TurnContinuity | None,
    ) -> None:
        async with self.database.session() as session:
            resolved = await self.models.resolve(DEFAULT_ROLE, OwnerScope(session, turn.owner_id))
        instructions = await stream_instructions(
            self.database, turn.owner_id, request.context.stream_id
        )
        capabilities = resolved.capabilities
        sections = [
            context_pack(started.thread, continuity) if continuity else None,
            earlier_citations(started.evidence),
        ]
        conversation = "\n\n".join(s for s in sections if s) or None

        def prompt(*, tools: bool) -> TurnPrompt:
            return build_turn_prompt(
                resolution,
                request.context,
                compact=capabilities.compact_prompt,
                server_actions=[(a.name, a.description) for a in server_actions()],
                stream_instructions=instructions,
                conversation=conversation,
                tools=tools,
            )

        with_tools = capabilities.supports_tools and bool(resolution.tools)
        turn_prompt = prompt(tools=with_tools)
        if not with_tools:
            transcript.offer_commands = True
        markers = [p.parse_marker for p in resolution.llm_payloads() if p.parse_marker]
        await run_agent_turn(
            resolved=resolved,
            system_prompt=turn_prompt.system,
            message=turn_prompt.user_message(request.message),
            history=started.model_history(),
            tools=AgentTools(
                tools=resolution.tools,
                definitions=tool_definitions(resolution.tools, compact=capabilities.compact_prompt)
                if with_tools
                else [],
                # A server without tool support: the turn goes on without tools.
                no_tools_prompt=prompt(tools=False).system if with_tools else None,
            ),
            tool_context=context,
            instructions=RECITABLE_INSTRUCTIONS,
            markers=[*markers, *SUGGESTION_MARKERS],
            emit=turn.publish,
            transcript=transcript,
            max_tool_calls=self.settings.max_tool_rounds,
            llm=self.app_settings.llm,
            rewrite=continuity.rewrite if continuity is not None else None,
        )
        transcript.model = resolved
        if continuity is not None and continuity.expects_search:
            await search_if_skipped(
                continuity,
                resolution,
                context,
                transcript,
                turn.publish,
                offered_an_action=_offers_a_server_action(transcript.text, resolution),
            )

    def _usage_writer(
        self, transcript: TurnTranscript
    ) -> Callable[[OwnerScope], Awaitable[object]] | None:
        """Records the turn's tokens, in the transaction that stores its answer."""
        resolved, usage = transcript.model, transcript.usage
        if resolved is None or usage is None:
            return None

        async def write(scope: OwnerScope) -> None:
            await record_usage(
                scope, self.app_settings, feature="chat", resolved=resolved, usage=usage
            )

        return write

    async def _response(
        self,
        turn: Turn,
        resolution: Resolution,
        transcript: TurnTranscript,
        started: StartedTurn,
    ) -> ChatResponsePayload:
        parsed = _parsed(transcript.text, resolution)
        for warning in parsed.warnings:
            log.warning("chat turn %s: %s", turn.id, warning)
        payloads = [*transcript.tool_payloads, *parsed.payloads]
        custom = parsed.payloads[0] if parsed.payloads else (payloads[-1] if payloads else None)
        offline = await self.models.offline_for_owner(self.database, turn.owner_id)
        offline_chips = offline and not parsed.suggested_values
        chips = _chips(parsed.suggested_values, transcript.chips)
        if transcript.offer_commands and not chips:
            chips = command_chips(resolution)
        message, citations = await checked_citations(parsed.text, transcript.evidence, self.tools)
        return ChatResponsePayload(
            message=message,
            citations=citations,
            custom_payload=custom,
            payloads=payloads,
            suggested_values=command_chips(resolution) if offline_chips else chips,
            suggested_actions=parsed.suggested_actions,
            tool_history=transcript.tool_history,
            conversation_id=turn.conversation_id,
            message_id=started.assistant_message_id,
            warnings=[*transcript.warnings, *parsed.warnings],
            fallback=transcript.fallback,
        )

    async def _stopped(
        self,
        turn: Turn,
        resolution: Resolution,
        transcript: TurnTranscript,
        started: StartedTurn,
        recorded: asyncio.Task[None],
    ) -> None:
        response = await self._response(turn, resolution, transcript, started)
        with contextlib.suppress(Exception):  # as in _failed
            await recorded
        await self.store.finish_turn(
            turn.owner_id,
            started.assistant_message_id,
            status="cancelled",
            content=response.message,
            response=response,
            error=MessageError(code="cancelled", message="Stopped before the answer was complete."),
            evidence=_evidence_update(transcript, response),
        )
        if not turn.done:
            turn.publish(
                ErrorEvent(
                    code="cancelled",
                    message="Stopped. The answer so far is kept in the conversation.",
                    conversation_id=turn.conversation_id,
                )
            )

    async def _failed(
        self,
        turn: Turn,
        started: StartedTurn,
        transcript: TurnTranscript,
        recorded: asyncio.Task[None],
        code: str,
        message: str,
        hint: str | None,
    ) -> None:
        # A failed start write is the failure; the answer row then does not exist.
        with contextlib.suppress(Exception):
            await recorded
        await self.store.finish_turn(
            turn.owner_id,
            started.assistant_message_id,
            status="error",
            content=transcript.text,
            error=MessageError(code=code, message=message, hint=hint),
            # The keys the tools showed stay theirs, though no answer cites them.
            evidence=_evidence_update(transcript, None),
        )
        turn.publish(
            ErrorEvent(code=code, message=message, hint=hint, conversation_id=turn.conversation_id)
        )


def _read_against_thread(
    message: str, resolution: Resolution, thread: ThreadState
) -> TurnContinuity | None:
    """Follow-up continuity for a message: free text is read whole; a retrieval command
    by its query ("/search their trials"); other commands leave the thread alone."""
    if not is_command(message):
        return begin_turn(thread, message)
    call = parse_command(message, resolution)
    argument = call.command.tool.query_argument if call is not None else None
    query = call.arguments.get(argument) if call is not None and argument else None
    return begin_turn(thread, query) if isinstance(query, str) else None


def _thread_update(
    continuity: TurnContinuity | None, transcript: TurnTranscript, response: ChatResponsePayload
) -> Callable[[ThreadState], None] | None:
    """Folds the finished turn into the stored thread, and completes the answer with the
    continuity report and, when the turn got stuck, the chips of its ask for leverage."""
    if continuity is None:
        return None

    def update(state: ThreadState) -> None:
        chips = finish_turn(state, continuity, transcript.queries, response.message)
        response.continuity = report(state, continuity, transcript.queries, transcript.corrections)
        response.suggested_values = _chips(chips, response.suggested_values)

    return update


def _evidence_update(
    transcript: TurnTranscript, response: ChatResponsePayload | None
) -> EvidenceChange:
    """Folds the records the turn's tools showed, and those its answer cited, into the
    conversation's (read afresh under the conversation's lock)."""
    cited = response.citations.cited_keys if response and response.citations else []

    def update(stored: ConversationEvidence) -> ConversationEvidence:
        return stored.after_turn(transcript.evidence, cited)

    return update


def _parsed(text: str, resolution: Resolution) -> ParsedAnswer:
    return parse_answer(
        text,
        resolution.llm_payloads(),
        client_actions={a.action for a in resolution.client_actions},
        server_actions={a.name for a in server_actions()},
    )


def _offers_a_server_action(text: str, resolution: Resolution) -> bool:
    if SUGGESTED_ACTIONS not in text:
        return False
    actions = _parsed(text, resolution).suggested_actions
    return any(action.handler == "server" for action in actions)


def _chips(first: list[SuggestedValue], then: list[SuggestedValue]) -> list[SuggestedValue]:
    seen: set[str] = set()
    chips = []
    for chip in [*first, *then]:
        if chip.value not in seen:
            seen.add(chip.value)
            chips.append(chip)
    return chips[:MAX_CHIPS]
