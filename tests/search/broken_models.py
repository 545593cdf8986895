"""Scripted models whose answers no skill can use, one per failure kind a small local model
or a provider shows: an answer outside the schema, the structured answer written as text
(a tool call as JSON in the message), an HTTP error, and no answer in time."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable

from pydantic_ai.exceptions import ModelHTTPError
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import AgentInfo, DeltaToolCall, DeltaToolCalls, FunctionModel

BrokenKind = str
KINDS: tuple[BrokenKind, ...] = ("invalid", "text_tool_call", "http_error")


def _off_schema(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    # The right tool, arguments that fit no schema of the product.
    name = info.output_tools[0].name if info.output_tools else "final_result"
    return ModelResponse(parts=[ToolCallPart(name, {"nothing": "useful", "scores": 7})])


def _written_as_text(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    # What a small model behind llama.cpp does: the call written out as text.
    call = {"name": "final_result", "arguments": {"anything": 1}}
    return ModelResponse(parts=[TextPart(f"```json\n{json.dumps(call)}\n```")])


def _server_refuses(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    raise ModelHTTPError(
        status_code=500, model_name="local", body={"error": "tools param requires --jinja flag"}
    )


_RESPONDERS: dict[BrokenKind, Callable[[list[ModelMessage], AgentInfo], ModelResponse]] = {
    "invalid": _off_schema,
    "text_tool_call": _written_as_text,
    "http_error": _server_refuses,
}


def broken_model(kind: BrokenKind) -> FunctionModel:
    """A model answering every request (whole or streamed) with the ``kind`` of failure."""
    responder = _RESPONDERS[kind]

    async def stream(
        messages: list[ModelMessage], info: AgentInfo
    ) -> AsyncIterator[str | DeltaToolCalls]:
        response = responder(messages, info)
        part = response.parts[0]
        if isinstance(part, TextPart):
            yield part.content
        else:
            assert isinstance(part, ToolCallPart)
            args = part.args if isinstance(part.args, str) else json.dumps(part.args)
            yield {0: DeltaToolCall(name=part.tool_name, json_args=args)}

    return FunctionModel(responder, stream_function=stream)


def slow_model(seconds: float = 30.0) -> FunctionModel:
    """A model that answers nothing for ``seconds``: a deadline around it runs out."""

    async def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        await asyncio.sleep(seconds)
        return ModelResponse(parts=[TextPart("too late")])

    async def stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str]:
        await asyncio.sleep(seconds)
        yield "too late"

    return FunctionModel(respond, stream_function=stream)
