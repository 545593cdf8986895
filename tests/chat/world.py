"""A test page for the chat, its own tools and payload, scripted models, and an SSE reader:
what the API tests need, registered once, non-global so no other page sees it."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import httpx
from pydantic_ai.messages import ModelMessage, ModelRequest, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, DeltaToolCall, DeltaToolCalls, FunctionModel

from scholarstream.chat import (
    ClientAction,
    CustomPayload,
    PayloadType,
    TabConfig,
    ToolConfig,
    ToolContext,
    ToolProgress,
    ToolResult,
    make_json_parser,
    register_page,
    register_payload_type,
    register_tool,
)
from scholarstream.errors import SourceUnavailableError

PAGE = "chat_test"
MARKER = "TEST_PROPOSAL:"

register_payload_type(
    PayloadType(
        name="chat_test_items",
        description="Items a test tool found.",
        source="tool",
        schema={
            "type": "object",
            "properties": {"words": {"type": "array", "items": {"type": "string"}}},
            "required": ["words"],
        },
    )
)
register_payload_type(
    PayloadType(
        name="chat_test_proposal",
        description="A proposal the model makes.",
        source="llm",
        parse_marker=MARKER,
        parser=make_json_parser("chat_test_proposal"),
        llm_instructions=f'{MARKER} {{"query": "..."}} proposes a query.',
        schema={
            "type": "object",
            "properties": {"query": {"type": "string", "minLength": 1}},
            "required": ["query"],
            "additionalProperties": False,
        },
    )
)


async def _split_words(
    params: dict[str, Any], ctx: ToolContext
) -> AsyncIterator[ToolProgress | ToolResult]:
    yield ToolProgress(stage="splitting", message="Splitting the text", progress=0.5)
    words = str(params["text"]).split()
    yield ToolResult(
        text=f"{len(words)} words: {', '.join(words)}",
        for_user=f"Split the text into {len(words)} words.",
        payload=CustomPayload(type="chat_test_items", data={"words": words}),
    )


async def _always_down(params: dict[str, Any], ctx: ToolContext) -> ToolResult:
    raise SourceUnavailableError("testsource", "The test source is down.")


async def _page_echo(params: dict[str, Any], ctx: ToolContext) -> ToolResult:
    return ToolResult(
        text=f"page={ctx.chat.current_page} items={len(ctx.chat.item_summaries)}",
        for_user=f"Read the page: {len(ctx.chat.item_summaries)} items.",
    )


register_tool(
    ToolConfig(
        name="chat_test_split",
        description="Splits text into words. Streams progress.",
        input_schema={
            "type": "object",
            "properties": {"text": {"type": "string"}},
            "required": ["text"],
            "additionalProperties": False,
        },
        executor=_split_words,
        payload_type="chat_test_items",
        is_global=False,
        command="split",
        command_summary="Split text into words",
        command_argument="text",
    )
)
register_tool(
    ToolConfig(
        name="chat_test_down",
        description="Always fails like a source that is down.",
        input_schema={"type": "object", "properties": {}},
        executor=_always_down,
        is_global=False,
    )
)
register_tool(
    ToolConfig(
        name="chat_test_echo",
        description="Says what page it was called from.",
        input_schema={"type": "object", "properties": {}},
        executor=_page_echo,
        is_global=False,
    )
)
register_page(
    PAGE,
    context_builder=lambda c: f"The test page. Form: {c.search_form}.",
    payloads=["chat_test_proposal"],
    tools=["chat_test_split", "chat_test_down"],
    tabs={"echo": TabConfig(tools=("chat_test_echo",))},
    client_actions=[ClientAction("open_thing", "Opens the thing.")],
)

Step = Callable[[list[ModelMessage], AgentInfo], AsyncIterator[str | DeltaToolCalls]]


def call(tool: str, args: dict[str, Any], call_id: str = "c1") -> DeltaToolCalls:
    return {0: DeltaToolCall(name=tool, json_args=json.dumps(args), tool_call_id=call_id)}


class Script:
    """A FunctionModel that plays its steps in order, one per model request; each step
    yields text chunks or a tool call. ``seen`` keeps what the model was sent."""

    def __init__(self, *steps: Sequence[str | DeltaToolCalls], pace: float = 0.0) -> None:
        self.steps = list(steps)
        self.pace = pace
        self.seen: list[list[ModelMessage]] = []
        self.tools_offered: list[list[str]] = []
        self.instructions: list[str | None] = []

    async def stream(
        self, messages: list[ModelMessage], info: AgentInfo
    ) -> AsyncIterator[str | DeltaToolCalls]:
        self.seen.append(list(messages))
        self.tools_offered.append([t.name for t in info.function_tools])
        self.instructions.append(info.instructions)
        step = self.steps.pop(0) if self.steps else ["(script finished)"]
        for chunk in step:
            if self.pace:
                await asyncio.sleep(self.pace)
            yield chunk

    def model(self) -> FunctionModel:
        return FunctionModel(stream_function=self.stream)

    def last_tool_return(self) -> str:
        request = self.seen[-1][-1]
        assert isinstance(request, ModelRequest)
        part = request.parts[0]
        assert isinstance(part, ToolReturnPart)
        return str(part.content)


@dataclass
class Event:
    id: str
    data: dict[str, Any]

    @property
    def type(self) -> str:
        return str(self.data["type"])


def read_events(response: httpx.Response, *, stop_after: int | None = None) -> Iterator[Event]:
    """The SSE events of a streamed response (comments and keep-alives skipped)."""
    event_id, data = "", ""
    count = 0
    for line in response.iter_lines():
        if line.startswith("id:"):
            event_id = line[3:].strip()
        elif line.startswith("data:"):
            data += line[5:].strip()
        elif line == "" and data:
            yield Event(event_id, json.loads(data))
            count += 1
            event_id, data = "", ""
            if stop_after is not None and count >= stop_after:
                return


def context(**extra: Any) -> dict[str, Any]:
    return {"current_page": PAGE, **extra}
