"""One model turn on pydantic-ai: the page's tools wrapped so they stream progress and
report failures, text streamed through the marker filter, a bounded number of tool rounds.
Everything the user should see goes out through ``emit``."""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic_ai import Agent, ModelRetry, Tool
from pydantic_ai.exceptions import UsageLimitExceeded
from pydantic_ai.messages import (
    AgentStreamEvent,
    FunctionToolResultEvent,
    ModelMessage,
    PartDeltaEvent,
    PartStartEvent,
    TextPart,
    TextPartDelta,
)
from pydantic_ai.settings import ModelSettings
from pydantic_ai.usage import RunUsage, UsageLimits

from scholarstream.chat.continuity.state import QuerySent
from scholarstream.chat.events import (
    ChatEvent,
    StatusEvent,
    TextDeltaEvent,
    ToolCompleteEvent,
    ToolProgressEvent,
    ToolStartEvent,
)
from scholarstream.chat.markers import MarkerFilter
from scholarstream.chat.payloads import CustomPayload
from scholarstream.chat.response import ToolHistoryEntry
from scholarstream.chat.tools.execution import ToolArgumentsError, execute_tool
from scholarstream.chat.tools.registry import ToolConfig, ToolContext, ToolProgress
from scholarstream.errors import LLMError, ScholarStreamError
from scholarstream.llm import MODEL_FAILURES, ResolvedModel, model_error, retry_capabilities
from scholarstream.prompt_fences import fenced_data

log = logging.getLogger(__name__)

Emit = Callable[[ChatEvent], object]
TOOL_RETRIES = 2


@dataclass
class TurnTranscript:
    """What a turn produced, for the finished answer and the stored history."""

    text: str = ""
    tool_history: list[ToolHistoryEntry] = field(default_factory=list)
    tool_payloads: list[CustomPayload] = field(default_factory=list)
    new_messages: list[ModelMessage] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    queries: list[QuerySent] = field(default_factory=list)
    usage: RunUsage | None = None
    model: ResolvedModel | None = None


QueryRewrite = Callable[[str], str]


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
        self.calls = 0

    async def run(self, tool: ToolConfig, arguments: dict[str, Any]) -> str:
        if self.calls >= self.max_calls:
            return (
                f"Not run: this answer has used its {self.max_calls} tool calls. "
                "Answer now with what you have, and say what is still open."
            )
        index = self.calls
        self.calls += 1
        arguments, note = self._rewritten(tool, arguments)
        self.emit(ToolStartEvent(tool=tool.name, input=arguments, index=index))

        def progress(report: ToolProgress) -> None:
            self.emit(ToolProgressEvent(tool=tool.name, index=index, **report.model_dump()))

        try:
            result = await execute_tool(tool, arguments, self.context, progress)
        except ToolArgumentsError as exc:
            self._failed(tool, arguments, index, exc.message, sent=False)
            # The model gets to correct its call.
            raise ModelRetry(f"{exc.message} {exc.hint or ''}".strip()) from exc
        except ScholarStreamError as exc:
            return self._failed(tool, arguments, index, str(exc))
        except Exception:
            log.exception("chat tool %s failed", tool.name)
            return self._failed(tool, arguments, index, "The tool failed unexpectedly.")
        if result.payload is not None:
            self.transcript.tool_payloads.append(result.payload)
        self.transcript.queries.extend(result.queries)
        self.transcript.tool_history.append(
            ToolHistoryEntry(tool_name=tool.name, input=arguments, output=result.text)
        )
        self.emit(ToolCompleteEvent(tool=tool.name, index=index, payload=result.payload))
        return note + result.text

    def _rewritten(self, tool: ToolConfig, arguments: dict[str, Any]) -> tuple[dict[str, Any], str]:
        """The arguments with the query rewritten, and a note telling the model so."""
        name = tool.query_argument
        query = arguments.get(name) if name else None
        if self.rewrite is None or name is None or not isinstance(query, str):
            return arguments, ""
        rewritten = self.rewrite(query)
        if rewritten == query:
            return arguments, ""
        note = (
            f"(Follow-up: the query was sent as {rewritten!r}, with the conversation's topic, "
            f"instead of {query!r}.)\n"
        )
        return {**arguments, name: rewritten}, note

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
            self.transcript.queries.append(QuerySent(tool=tool.name, query=query, ok=False))
        self.transcript.tool_history.append(
            ToolHistoryEntry(tool_name=tool.name, input=arguments, output=error, ok=False)
        )
        self.emit(ToolCompleteEvent(tool=tool.name, index=index, ok=False, error=error))
        return f"The tool {tool.name} failed: {error}"

    def as_pydantic_tool(self, tool: ToolConfig) -> Tool[None]:
        async def call(**arguments: Any) -> str:
            # What a tool returns (a web page, an abstract) may carry text written to steer
            # the model: it reaches the model fenced as data (ASSISTANT_INSTRUCTIONS say so).
            return fenced_data(f"Result of {tool.name}", await self.run(tool, arguments))

        return Tool.from_schema(
            call,
            name=tool.name,
            description=tool.description,
            json_schema=tool.input_schema,
        )


async def run_agent_turn(
    *,
    resolved: ResolvedModel,
    system_prompt: str,
    message: str,
    history: Sequence[ModelMessage],
    tools: Sequence[ToolConfig],
    tool_context: ToolContext,
    markers: Sequence[str],
    emit: Emit,
    transcript: TurnTranscript,
    max_tool_calls: int,
    timeout_seconds: float,
    rewrite: QueryRewrite | None = None,
) -> None:
    """Fills ``transcript`` as it goes, so a stopped turn still has what it said."""
    runner = ToolRunner(tool_context, emit, transcript, max_tool_calls, rewrite)
    agent = Agent(
        resolved.model,
        instructions=system_prompt,
        tools=[runner.as_pydantic_tool(tool) for tool in tools],
        retries=TOOL_RETRIES,
    )
    text = _TextCollector(MarkerFilter(markers), emit)
    settings: ModelSettings = {"timeout": timeout_seconds}
    # Tool rounds are bounded by the runner; this only stops a model that loops on retries.
    limits = UsageLimits(request_limit=max_tool_calls + 2 * TOOL_RETRIES + 2)
    try:
        # agent.iter with each node's own stream, not run_stream_events: the same events
        # without a task and a channel between the model and us (about a third of the
        # per-token cost).
        async with agent.iter(
            message,
            message_history=list(history),
            model_settings=settings,
            usage_limits=limits,
            # A provider's 429 or 5xx is retried before anything streams; a stream that
            # breaks after it started is not (its text reached the user): see llm.retries.
            capabilities=retry_capabilities(resolved, timeout_seconds),
        ) as run:
            async for node in run:
                if Agent.is_model_request_node(node) or Agent.is_call_tools_node(node):
                    async with node.stream(run.ctx) as events:
                        async for event in events:
                            _handle(event, text, transcript, emit)
            if run.result is not None:
                transcript.new_messages = run.result.new_messages()
                transcript.usage = run.result.usage
    except MODEL_FAILURES as exc:
        transcript.text = text.full
        raise model_error(exc, resolved, timeout_seconds=timeout_seconds) from exc
    except UsageLimitExceeded as exc:
        transcript.text = text.full
        raise LLMError(
            "The model kept calling tools without answering.",
            hint="Ask a narrower question, or raise chat.max_tool_rounds.",
        ) from exc
    finally:
        text.finish()
        transcript.text = text.full


class _TextCollector:
    """The turn's whole text (every response's text parts, separated by a blank line), and
    what of it is streamed."""

    def __init__(self, marker_filter: MarkerFilter, emit: Emit) -> None:
        self.filter = marker_filter
        self.emit = emit
        self.full = ""
        self._new_part = False

    def start_part(self, content: str) -> None:
        if self.full and not self.full.endswith("\n\n"):
            content = "\n\n" + content
        self.add(content)

    def add(self, delta: str) -> None:
        self.full += delta
        shown = self.filter.feed(delta)
        if shown:
            self.emit(TextDeltaEvent(text=shown))

    def finish(self) -> None:
        rest = self.filter.flush()
        if rest:
            self.emit(TextDeltaEvent(text=rest))


def _handle(
    event: AgentStreamEvent, text: _TextCollector, transcript: TurnTranscript, emit: Emit
) -> None:
    if isinstance(event, PartStartEvent) and isinstance(event.part, TextPart):
        text.start_part(event.part.content)
    elif isinstance(event, PartDeltaEvent) and isinstance(event.delta, TextPartDelta):
        text.add(event.delta.content_delta)
    elif isinstance(event, FunctionToolResultEvent):
        retry = getattr(event.part, "retry", None)
        if retry is not None and getattr(retry, "cause", None) == "unknown_tool":
            name = event.part.tool_name
            note = f"The model asked for a tool that is not available here ({name})."
            transcript.warnings.append(note)
            emit(StatusEvent(message=note + " It was told which tools exist."))
