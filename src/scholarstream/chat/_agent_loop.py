"""One model turn: the agent loop on pydantic-ai's model layer. Each model request streams
its text through the marker filter; its tool calls run through the page's tools (with
streamed progress, failures reported to the model), and their results go back to the model,
for a bounded number of rounds. Everything the user should see goes out through ``emit``.

The loop calls models with ``pydantic_ai.direct.model_request_stream``, not through
``Agent``: an agent run passes through the event loop 28 times before it calls the model and
costs about 50 µs per streamed token, a direct request once and about 15 µs (measured with
pydantic-ai 2.68). Under load, every pass waits behind every other stream's tokens: that was
most of the delay before the first token (``bench/chat_sse.py``)."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic_ai import ModelRetry
from pydantic_ai.direct import model_request_stream
from pydantic_ai.exceptions import UnexpectedModelBehavior
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelRequestPart,
    ModelResponse,
    ModelResponseStreamEvent,
    PartDeltaEvent,
    PartStartEvent,
    RetryFeedbackPart,
    RetryInfo,
    TextPart,
    TextPartDelta,
    ToolCallPart,
    ToolRetryCause,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models import ModelRequestParameters
from pydantic_ai.settings import ModelSettings
from pydantic_ai.tools import ToolDefinition
from pydantic_ai.usage import RunUsage

from scholarstream.chat._commands import command_chip, command_line
from scholarstream.chat._text_tool_calls import (
    TEXT_CALL_PREFIX,
    adopt_text_calls,
    invalid_arguments_notice,
    without_tool_parts,
)
from scholarstream.chat._tool_outcome import ToolOutcome
from scholarstream.chat.continuity import QuerySent, RewrittenQuery, recites_context_pack
from scholarstream.chat.core import (
    ChatEvent,
    CustomPayload,
    MarkerFilter,
    StatusEvent,
    SuggestedValue,
    TextCall,
    TextCallFilter,
    TextDeltaEvent,
    ToolCompleteEvent,
    ToolHistoryEntry,
    ToolProgressEvent,
    ToolStartEvent,
    call_key,
    repeats_message,
)
from scholarstream.chat.tools import (
    ToolArgumentsError,
    ToolConfig,
    ToolContext,
    ToolProgress,
    execute_tool,
    tool_label,
    tools,
    without_null_options,
)
from scholarstream.errors import LLMError, ModelCapabilityError, ScholarStreamError
from scholarstream.grounding import PackBuilder
from scholarstream.llm import MODEL_FAILURES, ModelCall, ResolvedModel, RetryPolicy, model_error
from scholarstream.prompt_fences import fenced_data
from scholarstream.search.core import FallbackReason, ModelFallback
from scholarstream.settings import LLMSettings

log = logging.getLogger(__name__)

Emit = Callable[[ChatEvent], object]
TOOL_RETRIES = 2
UNFINISHED_AFTER_TOOLS = (
    "The model did not finish its answer; the results above are what the tools found."
)
EARLIER_TURNS_LEFT_OUT = (
    "The conversation is longer than the model can read at once, so this answer was "
    "written without the earlier turns (the conversation's topic was kept)."
)


@dataclass
class TurnTranscript:
    """What a turn produced, for the finished answer and the stored history."""

    text: str = ""
    tool_history: list[ToolHistoryEntry] = field(default_factory=list)
    tool_payloads: list[CustomPayload] = field(default_factory=list)
    new_messages: list[ModelMessage] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    queries: list[QuerySent] = field(default_factory=list)
    corrections: list[str] = field(default_factory=list)
    """How follow-up continuity corrected the model's queries, in plain words."""
    usage: RunUsage | None = None
    model: ResolvedModel | None = None
    chips: list[SuggestedValue] = field(default_factory=list)
    """Slash commands offered for what the model could not run itself."""
    offer_commands: bool = False
    """The model answered without tools: the answer offers the commands."""
    fallback: ModelFallback | None = None
    """The model did not finish the answer (it failed, was cut off, or only repeated its
    tool calls after tools ran): the turn completed with what the tools returned."""
    evidence: PackBuilder = field(default_factory=PackBuilder)
    """The records the conversation's tools showed the model (in this turn and earlier
    ones), under the citation keys they keep for the whole conversation."""
    feedback: list[str] = field(default_factory=list)
    """What the product told the model about its calls in this turn (refused arguments,
    skipped calls): an answer that repeats it is no answer. A tool's own error is not here:
    telling the user that a source failed is an answer."""


QueryRewrite = Callable[[str], RewrittenQuery]
YEAR_ARGUMENTS = ("year_from", "year_to")


class ToolRunner:
    """Runs tool calls for one turn: numbers them, streams their progress, keeps their
    history and the queries they sent, turns failures into text the model can act on, and
    enforces the round budget. ``rewrite`` is follow-up continuity's hook: it gets each
    retrieval tool's query (see ``ToolConfig.query_argument``) before the tool runs."""

    def __init__(
        self,
        context: ToolContext,
        emit: Emit,
        transcript: TurnTranscript,
        max_calls: int,
        rewrite: QueryRewrite | None = None,
    ) -> None:
        self.context = context
        self.emit = emit
        self.transcript = transcript
        self.max_calls = max_calls
        self.rewrite = rewrite
        # Numbered after the turn's earlier calls: the panel keys each call by its index.
        self.calls = 0
        self.first = len(transcript.tool_history)
        # How the last call ended, for what a user reads of it (``ToolOutcome.for_user``).
        self.last = ToolOutcome()
        # The answer itself says what a person reads of each run (``run_for_user``): the
        # tool's line says only that it is done, or failed, not the same words again.
        self.said_in_answer = False

    async def run(self, tool: ToolConfig, arguments: dict[str, Any]) -> str:
        if self.calls >= self.max_calls:
            return (
                f"Not run: this answer has used its {self.max_calls} tool calls. "
                "Answer now with what you have, and say what is still open."
            )
        index = self.first + self.calls
        self.calls += 1
        self.last = ToolOutcome()
        arguments, note = self._rewritten(tool, without_null_options(tool, arguments))
        self.emit(
            ToolStartEvent(
                tool=tool.name, input=arguments, index=index, label=tool_label(tool.name)
            )
        )

        def progress(report: ToolProgress) -> None:
            self.emit(ToolProgressEvent(tool=tool.name, index=index, **report.model_dump()))

        try:
            result = await execute_tool(tool, arguments, self.context, progress)
        except ToolArgumentsError as exc:
            self.last.error = exc
            self._failed(tool, arguments, index, exc.message, sent=False)
            # The model gets to correct its call.
            raise ModelRetry(f"{exc.message} {exc.hint or ''}".strip()) from exc
        except ScholarStreamError as exc:
            self.last.error = exc
            return self._failed(tool, arguments, index, str(exc))
        except Exception as exc:
            log.exception("chat tool %s failed", tool.name)
            self.last.error = exc
            return self._failed(tool, arguments, index, "The tool failed unexpectedly.")
        self.last.result = result
        if result.payload is not None:
            self.transcript.tool_payloads.append(result.payload)
        self.transcript.queries.extend(_with_years(result.queries, arguments))
        shown = None if self.said_in_answer else result.for_user
        self.transcript.tool_history.append(
            ToolHistoryEntry(tool_name=tool.name, input=arguments, output=result.text, shown=shown)
        )
        self.emit(
            ToolCompleteEvent(tool=tool.name, index=index, message=shown, payload=result.payload)
        )
        return note + result.text

    async def run_for_user(self, tool: ToolConfig, arguments: dict[str, Any]) -> str:
        """Runs ``tool`` as ``run`` does (its events, payload and queries) and returns what
        the user reads of the run, never the text written for a model."""
        self.said_in_answer = True
        try:
            with contextlib.suppress(ModelRetry):  # refused arguments: the outcome says why
                await self.run(tool, arguments)
        finally:
            self.said_in_answer = False
        return self.last.for_user(tool, arguments, self.context)

    def _rewritten(self, tool: ToolConfig, arguments: dict[str, Any]) -> tuple[dict[str, Any], str]:
        """The arguments with the query rewritten and the conversation's years set (where
        the tool takes years and the call gave none), and a note telling the model so."""
        name = tool.query_argument
        query = arguments.get(name) if name else None
        if self.rewrite is None or name is None or not isinstance(query, str):
            return arguments, ""
        rewritten = self.rewrite(query)
        changed = {**arguments, name: rewritten.query}
        accepted = tool.input_schema.get("properties", {})
        for key in YEAR_ARGUMENTS:
            value = getattr(rewritten, key)
            if key in accepted and value is not None and arguments.get(key) is None:
                changed[key] = value
        self.transcript.corrections.extend(rewritten.corrections)
        if rewritten.query == query and not rewritten.corrections:
            return changed, ""
        how = "; ".join(rewritten.corrections) or "with the conversation's topic"
        note = (
            f"(Follow-up: the query was sent as {rewritten.query!r} instead of {query!r}: {how}.)\n"
        )
        return changed, note

    def _failed(
        self,
        tool: ToolConfig,
        arguments: dict[str, Any],
        index: int,
        error: str,
        *,
        sent: bool = True,
    ) -> str:
        """``sent``: the query reached the tool (it was not refused for its arguments)."""
        query = arguments.get(tool.query_argument) if tool.query_argument else None
        if sent and isinstance(query, str):
            # With its years: the report says what was asked, whether or not it was answered.
            failed = QuerySent(tool=tool.name, query=query, ok=False)
            self.transcript.queries.extend(_with_years([failed], arguments))
        # The tool's line shows the failure in the tool's words for a person, unless the
        # answer says it.
        shown = None if self.said_in_answer else self.last.for_user(tool, arguments, self.context)
        self.transcript.tool_history.append(
            ToolHistoryEntry(
                tool_name=tool.name, input=arguments, output=error, ok=False, shown=shown
            )
        )
        self.emit(
            ToolCompleteEvent(tool=tool.name, index=index, ok=False, message=shown, error=shown)
        )
        return f"The tool {tool.name} failed: {error}"


def _with_years(queries: list[QuerySent], arguments: dict[str, Any]) -> list[QuerySent]:
    """The queries a tool reports, with the publication years the call limited them to."""
    years = {k: arguments[k] for k in YEAR_ARGUMENTS if isinstance(arguments.get(k), int)}
    return [q.model_copy(update=years) if years else q for q in queries]


@dataclass(frozen=True)
class AgentTools:
    """The tools of a turn: ``tools`` (what text calls may name and what runs),
    ``definitions`` (what the model is told; empty when it is called without tools), and
    ``no_tools_prompt``, the system prompt to go on with when the model's server turns
    out not to support tool calling (``None``: no fallback, the error ends the turn)."""

    tools: Sequence[ToolConfig]
    definitions: Sequence[ToolDefinition]
    no_tools_prompt: str | None = None

    @property
    def enabled(self) -> bool:
        return bool(self.definitions)


async def run_agent_turn(
    *,
    resolved: ResolvedModel,
    system_prompt: str,
    message: str,
    history: Sequence[ModelMessage],
    tools: AgentTools,
    tool_context: ToolContext,
    markers: Sequence[str],
    emit: Emit,
    transcript: TurnTranscript,
    max_tool_calls: int,
    llm: LLMSettings,
    rewrite: QueryRewrite | None = None,
    instructions: Sequence[str] = (),
) -> None:
    """Fills ``transcript`` as it goes, so a stopped turn still has what it said.
    ``message`` is the user's message as the model reads it (in the compact layout, with
    the turn's page context before it); an answer that repeats ``instructions`` (the
    prompt's fixed text) is taken back like one that repeats a tool's error."""
    runner = ToolRunner(tool_context, emit, transcript, max_tool_calls, rewrite)
    known = {tool.name: tool for tool in tools.tools}
    text = _TextCollector(MarkerFilter(markers), emit, known, transcript.feedback)
    calls = _ToolCalls(runner, known, transcript, emit)
    model = _ModelCalls(resolved, llm, tools.definitions)
    messages = [*history] if tools.enabled else without_tool_parts(history)
    earlier = len(messages)  # the earlier turns' messages, left out if they do not fit
    new_messages: list[ModelMessage] = []
    usage = RunUsage()
    request = ModelRequest(parts=[UserPromptPart(message)], instructions=system_prompt)
    unrecorded: ModelRequest | None = None
    described = [d.description for d in tools.definitions if d.description]
    try:
        # Tool rounds are bounded by the runner; this only stops a model that loops on retries.
        for _ in range(max_tool_calls + 2 * TOOL_RETRIES + 2):
            messages.append(request)
            try:
                response = await model.request(messages, text)
            except ModelCapabilityError as exc:
                if exc.capability == "context" and earlier:
                    # Too long for the model's context window: the turn goes on without
                    # the earlier turns (the conversation's topic travels in the message).
                    messages = messages[earlier:]
                    earlier = 0
                    transcript.warnings.append(EARLIER_TURNS_LEFT_OUT)
                    emit(StatusEvent(message=EARLIER_TURNS_LEFT_OUT))
                    response = await model.request(messages, text)
                elif exc.capability != "tools" or tools.no_tools_prompt is None or not model.tools:
                    raise
                else:
                    prompt = _without_tools(exc, tools.no_tools_prompt, model, transcript, emit)
                    system_prompt = prompt
                    request = dataclasses.replace(request, instructions=system_prompt)
                    messages = [*without_tool_parts(messages[:-1]), request]
                    response = await model.request(messages, text)
            if request is not unrecorded:
                new_messages.append(request)
            messages.append(response)
            usage.requests += 1
            usage.incr(response.usage)
            tool_calls = [part for part in response.parts if isinstance(part, ToolCallPart)]
            if not tool_calls and text.calls:
                response = _adopt(response, text, known, model.tools_enabled, transcript, emit)
                messages[-1] = response
                tool_calls = [part for part in response.parts if isinstance(part, ToolCallPart)]
            new_messages.append(response)
            if tool_calls:
                usage.tool_calls += len(tool_calls)
                parts = await calls.answer_all(tool_calls)
                if not calls.progressed:
                    # Only calls already run or given up on: asking again would get them again.
                    log.warning(
                        "chat: model %s only repeated tool calls; the turn ends with the "
                        "tools' results",
                        resolved.model_string,
                    )
                    new_messages.pop()
                    _finish_without_model(transcript, text, new_messages, usage, "unusable")
                    return
                request = ModelRequest(parts=parts, instructions=system_prompt)
            elif _has_text(response):
                told = [*transcript.feedback, *described, *instructions]
                if (
                    text.withheld
                    or repeats_message(text.response_text, told)
                    or recites_context_pack(text.response_text)
                ):
                    # Not an answer: the model repeated what it was told (a refused call's
                    # error, often as JSON, its tools' definitions as its chat template
                    # lists them, its instructions or the conversation's context pack). It
                    # is taken back, never stored as the answer.
                    text.retract()
                    new_messages.pop()
                    if any(entry.ok for entry in transcript.tool_history):
                        _finish_without_model(transcript, text, new_messages, usage, "unusable")
                        return
                    request = ModelRequest(
                        parts=[calls.repeated_answer()], instructions=system_prompt
                    )
                    unrecorded = request  # the history keeps neither it nor the repetition
                    continue
                if response.finish_reason == "length" and transcript.tool_history:
                    # The answer budget cut the answer after tools ran.
                    _finish_without_model(transcript, text, new_messages, usage, "unusable")
                    return
                transcript.new_messages = new_messages
                transcript.usage = usage
                return
            else:
                request = ModelRequest(parts=[calls.empty_answer()], instructions=system_prompt)
        raise LLMError(
            "The model kept calling tools without answering.",
            hint="Ask a narrower question, or raise chat.max_tool_rounds.",
        )
    except (*MODEL_FAILURES, LLMError) as exc:
        error = (
            exc
            if isinstance(exc, LLMError)
            else model_error(exc, resolved, timeout_seconds=llm.timeout_seconds)
        )
        if not any(entry.ok for entry in transcript.tool_history):
            # Nothing but (part of) an answer: a failed answer, kept as such (its text is
            # stored with the error), never passed off as a complete one.
            transcript.text = text.full
            raise error from exc
        # The tools' results came: the turn completes with them.
        if request is not unrecorded and not any(m is request for m in new_messages):
            new_messages.append(request)  # the request the model did not answer
        late = isinstance(error.__cause__, TimeoutError)
        _finish_without_model(
            transcript, text, new_messages, usage, "late" if late else "failed", error.hint
        )
    finally:
        text.finish()
        transcript.text = text.full


def _finish_without_model(
    transcript: TurnTranscript,
    text: _TextCollector,
    messages: list[ModelMessage],
    usage: RunUsage,
    reason: FallbackReason,
    hint: str | None = None,
) -> None:
    """Completes a turn the model did not finish: a plain note closes the answer (after the
    tools' results, whose cards the user has), the turn records the fallback, and the
    history ends with that note, so the next turn reads a closed exchange (no call left
    without its result)."""
    text.note(UNFINISHED_AFTER_TOOLS)
    while messages and isinstance(messages[-1], ModelResponse):
        messages.pop()  # calls left without results, or a cut answer: replaced below
    if messages:
        messages.append(ModelResponse(parts=[TextPart(text.response_text.strip())]))
    transcript.new_messages = messages
    transcript.usage = usage
    transcript.fallback = ModelFallback(
        skill="chat", reason=reason, message=UNFINISHED_AFTER_TOOLS, hint=hint
    )


def _without_tools(
    error: ModelCapabilityError,
    prompt: str,
    model: _ModelCalls,
    transcript: TurnTranscript,
    emit: Emit,
) -> str:
    """The server refused tools: the turn goes on without them (the prompt offers the
    slash commands), and the user is told once, with what would give tools back."""
    model.disable_tools()
    transcript.offer_commands = True
    note = (
        "This model's server does not take tool calls, so the model cannot run tools "
        "itself: a question for the literature is searched for it, and the commands "
        "(/help) run the other tools."
    )
    if error.hint:
        note += f" {error.hint}"
    transcript.warnings.append(note)
    emit(StatusEvent(message=note))
    return prompt


def _adopt(
    response: ModelResponse,
    text: _TextCollector,
    known: dict[str, ToolConfig],
    tools_enabled: bool,
    transcript: TurnTranscript,
    emit: Emit,
) -> ModelResponse:
    """A response whose calls were written as text, as the response a native call leaves;
    the calls that cannot run are reported (in the answer, when nothing else runs)."""
    adopted = adopt_text_calls(
        response, text.calls, text.response_text, known, tools_enabled=tools_enabled
    )
    transcript.chips.extend(c for c in adopted.chips if c not in transcript.chips)
    if adopted.runnable:
        for notice in adopted.notices:
            transcript.warnings.append(notice)
            emit(StatusEvent(message=notice))
    else:
        for notice in adopted.notices:
            text.note(notice)
    return adopted.response


class _ToolCalls:
    """Answers a model's tool calls: each result (fenced as data: what a tool returns, a web
    page or an abstract, may carry text written to steer the model, and the instructions
    say so), or a retry prompt for an unknown tool or bad arguments, at most
    ``TOOL_RETRIES`` times per tool; after that the tool's calls are skipped (the user is
    told which command would do it), as is a call already run in this turn (same tool, same
    arguments): a small model repeats its calls, and neither ends the turn in an error."""

    def __init__(
        self,
        runner: ToolRunner,
        tools: dict[str, ToolConfig],
        transcript: TurnTranscript,
        emit: Emit,
    ) -> None:
        self.runner = runner
        self.tools = tools
        self.transcript = transcript
        self.emit = emit
        self.retries: Counter[str] = Counter()
        self.seen: set[str] = set()
        """The calls of this turn (tool and arguments): one asked for again is not run."""
        self.given_up: set[str] = set()
        """Tools whose arguments were refused more than ``TOOL_RETRIES`` times."""
        self.progressed = False
        """Whether the latest round ran a call or asked the model to correct one (else
        its calls were all repeats or given up on, and asking again would get them again)."""

    async def answer_all(self, calls: Sequence[ToolCallPart]) -> list[ModelRequestPart]:
        """The answers, in the calls' order; the calls of one response run at once."""
        self.progressed = False
        outcomes = await asyncio.gather(*(self.answer(c) for c in calls), return_exceptions=True)
        for outcome in outcomes:
            if isinstance(outcome, BaseException):
                raise outcome
        return [outcome for outcome in outcomes if not isinstance(outcome, BaseException)]

    async def answer(self, call: ToolCallPart) -> ModelRequestPart:
        name = call.tool_name
        tool = self.tools.get(name)
        if tool is None:
            note = f"The model asked for a tool that is not available here ({name})."
            self.transcript.warnings.append(note)
            self.emit(StatusEvent(message=note + " It was told which tools exist."))
            available = ", ".join(repr(n) for n in sorted(self.tools)) or "none"
            return self._retry(
                call, f"Unknown tool name: {name!r}. Available tools: {available}", "unknown_tool"
            )
        try:
            arguments = call.args_as_dict(raise_if_invalid=True)
        except (ValueError, AssertionError):
            return self._retry(
                call, f"The arguments for {name} are not a JSON object.", "validation_error"
            )
        key = call_key(name, arguments)
        if key in self.seen or name in self.given_up:
            return self._skipped(call, "It was not run again: its result is above.")
        self.seen.add(key)
        try:
            result = await self.runner.run(tool, arguments)
        except ModelRetry as exc:  # bad arguments: the runner says what is wrong
            self.seen.discard(key)  # refused, not run: the same call may be tried again
            if self.retries[name] >= TOOL_RETRIES:
                return self._give_up(call, tool, arguments)
            if call.tool_call_id.startswith(TEXT_CALL_PREFIX):
                self._warn(invalid_arguments_notice(tool, arguments))
            return self._retry(call, exc.message, "validation_error")
        self.progressed = True
        return ToolReturnPart(
            tool_name=name,
            content=fenced_data(f"Result of {name}", result),
            tool_call_id=call.tool_call_id,
        )

    def empty_answer(self) -> RetryFeedbackPart:
        """The prompt after an answer with neither text nor a tool call, once."""
        self.retries[""] += 1
        if self.retries[""] > 1:
            raise UnexpectedModelBehavior("The model answered with nothing, twice.")
        return RetryFeedbackPart(
            content="Your answer was empty. Answer with text, or call a tool.",
            retry=RetryInfo(cause="no_output"),
        )

    def repeated_answer(self) -> RetryFeedbackPart:
        """The prompt after an answer that only repeated the product's message, once."""
        self.retries["repeated"] += 1
        if self.retries["repeated"] > 1:
            raise LLMError(
                "The model repeated the messages it was sent instead of answering.",
                hint="Ask again in other words, or choose a larger model for chat in "
                "Settings → Models.",
            )
        return RetryFeedbackPart(
            content="Your answer repeated the message you were sent; it is not shown. Answer "
            "the user's question in plain words, not JSON.",
            retry=RetryInfo(cause="no_output"),
        )

    def _warn(self, notice: str) -> None:
        if notice not in self.transcript.warnings:
            self.transcript.warnings.append(notice)

    def _give_up(
        self, call: ToolCallPart, tool: ToolConfig, arguments: dict[str, Any]
    ) -> ToolReturnPart:
        """The tool's arguments were refused once more than the model may correct them: the
        call is skipped, the user told which command would do it, and the model asked to
        answer with what the other tools returned (it does not fail the turn)."""
        self.given_up.add(tool.name)
        self.progressed = True  # the model is asked once more, to answer without the tool
        line = command_line(tool, arguments)
        label = tool_label(tool.name)
        notice = f"The model could not give “{label}” details it takes, so it was skipped." + (
            f" You can run it yourself: {line}" if line else ""
        )
        self._warn(notice)
        self.emit(StatusEvent(message=notice))
        chip = command_chip(tool, arguments)
        if chip is not None and chip not in self.transcript.chips:
            self.transcript.chips.append(chip)
        return self._skipped(
            call, f"Its arguments were refused {TOOL_RETRIES + 1} times, so it was skipped."
        )

    def _skipped(self, call: ToolCallPart, why: str) -> ToolReturnPart:
        content = (
            f"Not run. {why} Do not call it again: answer now with what the tools "
            "returned, and say what is still open."
        )
        self.transcript.feedback.append(content)
        return ToolReturnPart(
            tool_name=call.tool_name,
            content=content,
            tool_call_id=call.tool_call_id,
            outcome="failed",
        )

    def _retry(self, call: ToolCallPart, message: str, cause: ToolRetryCause) -> ToolReturnPart:
        name = call.tool_name
        self.retries[name] += 1
        if self.retries[name] > TOOL_RETRIES:
            self.given_up.add(name)
            return self._skipped(call, f"It was refused {TOOL_RETRIES + 1} times.")
        self.progressed = True
        self.transcript.feedback.append(message)
        return ToolReturnPart(
            tool_name=name,
            content=message,
            tool_call_id=call.tool_call_id,
            outcome="retried",
            retry=RetryInfo(cause=cause),
        )


class _ModelCalls:
    """One streamed request to the model at a time, each a ``ModelCall`` of the ``chat``
    feature (its answer budget, ``max_tokens``; its total deadline, ``llm.deadline_seconds``,
    which also stops a stream that keeps producing; its failure logged), under the product's
    retry policy for a provider's model (``llm.retries``): a transient fault before anything
    streamed is tried again within the request's budget; a stream that broke after it started
    is not."""

    def __init__(
        self, resolved: ResolvedModel, llm: LLMSettings, tools: Sequence[ToolDefinition]
    ) -> None:
        self.resolved = resolved
        self.llm = llm
        self.timeout_seconds = llm.timeout_seconds
        self.policy = RetryPolicy(self.timeout_seconds) if resolved.from_provider else None
        self.tools = list(tools)
        self.tools_enabled = bool(self.tools)
        self.parameters = ModelRequestParameters(function_tools=self.tools)

    def disable_tools(self) -> None:
        self.tools_enabled = False
        self.parameters = ModelRequestParameters(function_tools=[])

    async def request(self, messages: list[ModelMessage], text: _TextCollector) -> ModelResponse:
        async with ModelCall.of(self.resolved, "chat", self.llm) as call:
            return await self._attempts(call, messages, text)
        # The call's exit raises every failure (as an LLMError); it never swallows one.
        raise AssertionError("unreachable")  # pragma: no cover

    async def _attempts(
        self, call: ModelCall, messages: list[ModelMessage], text: _TextCollector
    ) -> ModelResponse:
        deadline = time.monotonic() + self.timeout_seconds
        attempt = 0
        while True:
            attempt += 1
            text.begin_response()
            try:
                async with model_request_stream(
                    self.resolved.model,
                    messages,
                    model_settings=self._settings(call, deadline - time.monotonic()),
                    model_request_parameters=self.parameters,
                ) as stream:
                    async for event in stream:
                        call.output_started()
                        _show(event, text)
                        if text.round_complete():
                            # The rest would be more calls: leaving the stream closes the
                            # request on the wire, so the server stops writing them.
                            break
                response = stream.get()
                text.end_response()
                return response
            except MODEL_FAILURES as exc:
                if self.policy is None or call.answered:
                    raise
                remaining = deadline - time.monotonic()
                await asyncio.sleep(self.policy.wait_before_retry(exc, attempt, remaining))

    def _settings(self, call: ModelCall, remaining: float) -> ModelSettings:
        if self.policy is None:  # a test's scripted model: its faults are the test's script
            return call.model_settings
        return self.policy.attempt_settings(remaining, streaming=True, base=call.model_settings)


class _TextCollector:
    """The turn's whole text (every response's text parts, separated by a blank line), and
    what of it is streamed. Each response's text first passes a ``TextCallFilter``: tool
    calls the model wrote as text are held back and taken out (``calls``), never shown."""

    def __init__(
        self,
        marker_filter: MarkerFilter,
        emit: Emit,
        known: dict[str, ToolConfig],
        feedback: Sequence[str] = (),
    ) -> None:
        self.filter = marker_filter
        self.emit = emit
        self.known = known
        # A call written as text is recognised by any of the product's tools, not only this
        # turn's: a small model calls tools of other pages too, and such a call is hidden
        # (it cannot run here) rather than shown as raw JSON.
        self.recognised = {*known, *(tool.name for tool in tools())}
        self.full = ""
        self.response_text = ""
        """The text of the latest response, calls taken out."""
        self.feedback = feedback
        """What the product told the model: a held-back start that repeats it stays hidden."""
        self._calls = self._new_filter()

    def _new_filter(self) -> TextCallFilter:
        return TextCallFilter(self.recognised, hidden=self._repeats_feedback)

    def _repeats_feedback(self, text: str) -> bool:
        return repeats_message(text, self.feedback)

    @property
    def withheld(self) -> bool:
        """Whether the latest response was held back whole: it repeated the feedback."""
        return self._calls.withheld

    def retract(self) -> None:
        """Takes the latest response's text out of the turn's text (what of it streamed
        is replaced by the finished answer's text, or ends in the error)."""
        self.full = self.full[: len(self.full) - len(self.response_text)]
        self.response_text = ""

    @property
    def calls(self) -> list[TextCall]:
        """The calls the latest response wrote as text."""
        return self._calls.calls

    def round_complete(self) -> bool:
        """Whether the latest response has written its round of calls and goes on with
        only more calls (see ``TextCallFilter.round_complete``)."""
        return self._calls.round_complete()

    def begin_response(self) -> None:
        self._calls = self._new_filter()
        self.response_text = ""

    def end_response(self) -> None:
        self._show(self._calls.flush())

    def start_part(self, content: str) -> None:
        self.add(self._separated(content))

    def note(self, content: str) -> None:
        """Our own words in the answer (they pass no call filter)."""
        self._show(self._separated(content))

    def _separated(self, content: str) -> str:
        """``content`` after a blank line (counting the newlines the text already ends with:
        a call taken out of the text may leave one)."""
        if not self.full:
            return content
        ending = len(self.full) - len(self.full.rstrip("\n"))
        return "\n" * max(0, 2 - ending) + content

    def add(self, delta: str) -> None:
        self._show(self._calls.feed(delta))

    def _show(self, released: str) -> None:
        if not released:
            return
        self.response_text += released
        self.full += released
        shown = self.filter.feed(released)
        if shown:
            self.emit(TextDeltaEvent(text=shown))

    def finish(self) -> None:
        rest = self.filter.flush()
        if rest:
            self.emit(TextDeltaEvent(text=rest))


def _has_text(response: ModelResponse) -> bool:
    return any(isinstance(part, TextPart) and part.content.strip() for part in response.parts)


def _show(event: ModelResponseStreamEvent, text: _TextCollector) -> None:
    if isinstance(event, PartStartEvent) and isinstance(event.part, TextPart):
        text.start_part(event.part.content)
    elif isinstance(event, PartDeltaEvent) and isinstance(event.delta, TextPartDelta):
        text.add(event.delta.content_delta)
