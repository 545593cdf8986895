"""Tool calls a model wrote as text (``chat/core/_text_calls.py`` finds them and keeps them
off the screen): a call to a tool of this turn runs as the tool call it was meant to be,
with the same validation, events, payloads and history, because the response is rewritten
into the one a native call leaves. One that cannot run (a tool this page does not have,
arguments that cannot be read, a model set up without tools) is hidden, and the user is
told in plain words what happened and which slash command would do it."""

from __future__ import annotations

import dataclasses
import difflib
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from pydantic_ai.messages import (
    ModelMessage,
    ModelRequestPart,
    ModelResponse,
    ModelResponsePart,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)

from scholarstream.chat._commands import command_chip, command_line
from scholarstream.chat.core import SuggestedValue, TextCall
from scholarstream.chat.tools import ToolConfig, tool_label

TEXT_CALL_PREFIX = "text-call-"
"""The id of a tool call the model wrote as text (the server gave it none)."""


@dataclass
class AdoptedCalls:
    response: ModelResponse
    """The response as history keeps it: its prose, then the runnable calls as tool calls."""
    runnable: list[ToolCallPart] = field(default_factory=list)
    notices: list[str] = field(default_factory=list)
    """What the user is told about the calls that were not run."""
    chips: list[SuggestedValue] = field(default_factory=list)
    """Slash commands that would do what those calls asked for."""


def adopt_text_calls(
    response: ModelResponse,
    calls: Sequence[TextCall],
    prose: str,
    tools: Mapping[str, ToolConfig],
    *,
    tools_enabled: bool,
) -> AdoptedCalls:
    runnable: list[ToolCallPart] = []
    notices: list[str] = []
    chips: list[SuggestedValue] = []
    for call in calls:
        tool = tools.get(call.name)
        if tools_enabled and tool is not None and call.arguments is not None:
            runnable.append(
                ToolCallPart(
                    tool_name=call.name,
                    args=call.arguments,
                    tool_call_id=f"{TEXT_CALL_PREFIX}{uuid.uuid4().hex[:12]}",
                )
            )
            continue
        notice, chip = _not_run(call, tool, tools, tools_enabled=tools_enabled)
        notices.append(notice)
        if chip is not None and chip not in chips:
            chips.append(chip)
    kept: list[ModelResponsePart] = [p for p in response.parts if not isinstance(p, TextPart)]
    text = prose.strip()
    if not runnable and notices:
        text = "\n\n".join([t for t in (text, *notices) if t])
    parts: list[ModelResponsePart] = [*kept, *([TextPart(text)] if text else []), *runnable]
    return AdoptedCalls(dataclasses.replace(response, parts=parts), runnable, notices, chips)


def invalid_arguments_notice(tool: ToolConfig, arguments: Mapping[str, object]) -> str:
    """What the user reads when a call written as text was refused for its arguments."""
    line = command_line(tool, dict(arguments))
    tail = f" You can run it yourself: {line}" if line else ""
    label = tool_label(tool.name)
    return f"The model's request to run “{label}” had details it does not take.{tail}"


def _not_run(
    call: TextCall,
    tool: ToolConfig | None,
    tools: Mapping[str, ToolConfig],
    *,
    tools_enabled: bool,
) -> tuple[str, SuggestedValue | None]:
    name = f"“{tool_label(call.name)}”" if call.name else "a tool"
    if not call.name and call.problem:  # a call cut off before its tool's name
        return (
            f"The model tried to run a tool, but {call.problem}, so nothing was run. "
            "Type /help for the commands of this page.",
            SuggestedValue(label="/help", value="/help"),
        )
    if tool is None:
        close = difflib.get_close_matches(call.name, list(tools), n=1, cutoff=0.6)
        nearest = tools[close[0]] if close else None
        line = command_line(nearest, call.arguments) if nearest is not None else None
        about = f"The model asked for a tool this page does not have ({name}), so nothing was run."
        if nearest is not None and line is not None:
            return f"{about} The nearest command here is {line}", command_chip(
                nearest, call.arguments
            )
        return (
            f"{about} Type /help for the commands of this page.",
            SuggestedValue(label="/help", value="/help"),
        )
    line = command_line(tool, call.arguments)
    tail = f" You can run it yourself: {line}" if line else ""
    chip = command_chip(tool, call.arguments)
    if not tools_enabled:
        return (
            f"This model is set up to answer without tools, so its request to run {name} "
            f"was not carried out.{tail}",
            chip,
        )
    return f"The model tried to run {name}, but {call.problem}, so nothing was run.{tail}", chip


def without_tool_parts(messages: Sequence[ModelMessage]) -> list[ModelMessage]:
    """The history as a model without tools can read it: a server without tool support
    refuses (or garbles) tool calls and tool results in the history, so an earlier call is
    said in words and its result becomes text. Not written as the call's JSON: the model
    would copy it."""
    flat: list[ModelMessage] = []
    for message in messages:
        if isinstance(message, ModelResponse):
            parts: list[ModelResponsePart] = [
                TextPart(f"(I ran the tool {p.tool_name}.)") if isinstance(p, ToolCallPart) else p
                for p in message.parts
            ]
            flat.append(dataclasses.replace(message, parts=parts))
        else:
            request_parts: list[ModelRequestPart] = [
                UserPromptPart(str(p.content)) if isinstance(p, ToolReturnPart) else p
                for p in message.parts
            ]
            flat.append(dataclasses.replace(message, parts=request_parts))
    return flat
