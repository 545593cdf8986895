"""From a chat-completions request, a reply kind and the modes in force, the answer to send:
an HTTP error, a message (text or tool calls, with usage and finish reason), an endless
stream, or silence. Pure: the HTTP server only paces and writes what is planned here."""

from __future__ import annotations

import json
import math
import re
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from scholarstream.devtools._modes import Modes
from scholarstream.devtools._replies import (
    Auto,
    Cut,
    Endless,
    Hang,
    InvalidJSON,
    Reply,
    Slow,
    Status,
    Text,
    TextToolCall,
    ToolCall,
    context_too_long,
    no_json_schema,
    no_tools,
)
from scholarstream.devtools._schema_values import instance_for, invalid_instance_for

CHARS_PER_TOKEN = 4
"""The server's rough tokenizer: four characters a token, for usage and ``max_tokens``."""

OUTPUT_TOOL_PREFIX = "final_result"
"""pydantic-ai names the tool of a tool-mode structured answer ``final_result`` (or
``final_result_<Type>`` for a union): such a tool's arguments *are* the structured answer."""

_PROMPTED = re.compile(r"compatible with this schema:\s*", re.IGNORECASE)
"""pydantic-ai's prompted-output instructions put the schema right after these words."""


@dataclass(frozen=True)
class Tool:
    name: str
    parameters: dict[str, Any]


@dataclass(frozen=True)
class Request:
    """What the planner reads of a chat-completions request body."""

    model: str
    stream: bool
    tools: list[Tool]
    tool_choice: Any
    json_schema: dict[str, Any] | None
    json_object: bool
    prompted_schema: dict[str, Any] | None
    max_tokens: int | None
    prompt_tokens: int
    last_role: str
    question: str
    prompt: str
    """What a structured answer reads (``instance_for(..., prompt=)``): the instructions
    (system and developer messages) and the user's last message."""
    tool_result: tuple[str, str] | None
    """The last tool result, when the last message is one: (tool name, its content)."""

    @property
    def forced_tool(self) -> Tool | None:
        """The tool ``tool_choice`` forces by name, if any."""
        choice = self.tool_choice
        name: str | None = None
        if isinstance(choice, dict):
            if isinstance(choice.get("function"), dict):
                name = str(choice["function"].get("name", ""))
            elif isinstance(choice.get("allowed_tools"), dict):
                allowed = choice["allowed_tools"]
                tools = allowed.get("tools") or []
                if allowed.get("mode") == "required" and len(tools) == 1:
                    name = str(tools[0].get("function", {}).get("name", ""))
        return next((t for t in self.tools if t.name == name), None)

    @property
    def output_tool(self) -> Tool | None:
        return next((t for t in self.tools if t.name.startswith(OUTPUT_TOOL_PREFIX)), None)

    @property
    def structure(self) -> dict[str, Any] | None:
        """The schema of the structured answer the request wants in the content."""
        return self.json_schema if self.json_schema is not None else self.prompted_schema


def read_request(body: dict[str, Any]) -> Request:
    messages = [m for m in body.get("messages") or [] if isinstance(m, dict)]
    tools = [
        Tool(str(f.get("name", "")), dict(f.get("parameters") or {}))
        for t in body.get("tools") or []
        if isinstance(t, dict) and isinstance(f := t.get("function"), dict)
    ]
    response_format = body.get("response_format") or {}
    json_schema: dict[str, Any] | None = None
    if response_format.get("type") == "json_schema":
        json_schema = dict((response_format.get("json_schema") or {}).get("schema") or {})
    limit = body.get("max_completion_tokens") or body.get("max_tokens")
    prompt = json.dumps(messages) + json.dumps(body.get("tools") or [])
    last = messages[-1] if messages else {}
    return Request(
        model=str(body.get("model", "")),
        stream=bool(body.get("stream")),
        tools=tools,
        tool_choice=body.get("tool_choice"),
        json_schema=json_schema,
        json_object=response_format.get("type") == "json_object",
        prompted_schema=_prompted_schema(messages),
        max_tokens=int(limit) if isinstance(limit, int | float) and limit > 0 else None,
        prompt_tokens=tokens(prompt),
        last_role=str(last.get("role", "")),
        question=next((_text(m) for m in reversed(messages) if m.get("role") == "user"), ""),
        prompt=_prompt(messages),
        tool_result=_tool_result(messages),
    )


def tokens(text: str) -> int:
    return math.ceil(len(text) / CHARS_PER_TOKEN)


def _text(message: dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return " ".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    return ""


def _prompt(messages: list[dict[str, Any]]) -> str:
    last_user = next(
        (i for i in range(len(messages) - 1, -1, -1) if messages[i].get("role") == "user"), None
    )
    return "\n".join(
        _text(m)
        for i, m in enumerate(messages)
        if m.get("role") in ("system", "developer") or i == last_user
    )


def _prompted_schema(messages: list[dict[str, Any]]) -> dict[str, Any] | None:
    for message in messages:
        if message.get("role") not in ("system", "developer", "user"):
            continue
        text = _text(message)
        found = _PROMPTED.search(text)
        if found is None:
            continue
        try:
            schema, _ = json.JSONDecoder().raw_decode(text[found.end() :])
        except json.JSONDecodeError:
            continue
        if isinstance(schema, dict):
            return schema
    return None


def _tool_result(messages: list[dict[str, Any]]) -> tuple[str, str] | None:
    if not messages or messages[-1].get("role") != "tool":
        return None
    call_id = messages[-1].get("tool_call_id")
    name = "the tool"
    for message in reversed(messages):
        for call in message.get("tool_calls") or []:
            if isinstance(call, dict) and call.get("id") == call_id:
                name = str(call.get("function", {}).get("name", name))
    return name, _text(messages[-1])


@dataclass(frozen=True)
class Failure:
    status: int
    body: dict[str, Any]
    headers: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class OutCall:
    id: str
    name: str
    arguments: str


@dataclass(frozen=True)
class Message:
    content: str | None
    calls: tuple[OutCall, ...] = ()
    finish_reason: str = "stop"
    prompt_tokens: int = 0
    completion_tokens: int = 0
    first_delay: float = 0.0
    delay: float = 0.0
    chunks: int = 4
    cut_after: int | None = None
    """A ``Cut``: the stream breaks off after this many chunks (a non-stream: no answer)."""


@dataclass(frozen=True)
class Forever:
    """An endless stream (or, not streaming, silence until the client leaves)."""

    text: str
    interval: float
    first_delay: float = 0.0


@dataclass(frozen=True)
class Silence:
    """Nothing, for ``seconds`` (None: until the client leaves), then the connection closes."""

    seconds: float | None
    first_delay: float = 0.0


Plan = Failure | Message | Forever | Silence


def gate(request: Request, modes: Modes) -> Status | None:
    """The refusal a server of these modes sends before any model runs, if any."""
    if modes.no_tools and request.tools:
        return no_tools()
    if modes.context_limit is not None and request.prompt_tokens > modes.context_limit:
        return context_too_long(request.prompt_tokens, modes.context_limit)
    if modes.no_json_schema and request.json_schema is not None:
        return no_json_schema()
    return None


def plan(request: Request, reply: Reply, modes: Modes) -> Plan:
    """The answer to send. Modes shape every answer but errors: ``slow`` delays it,
    ``endless`` never ends it, ``tool-as-text`` writes its tool calls as text;
    ``invalid-json`` breaks the structured documents the server makes up."""
    answer = _plan(request, reply, modes)
    if isinstance(answer, Failure):
        return answer
    if modes.endless is not None and isinstance(answer, Message) and answer.cut_after is None:
        answer = Forever("more ", modes.endless) if request.stream else Silence(None)
    if modes.slow:
        answer = replace(answer, first_delay=answer.first_delay + modes.slow)
    return answer


def _plan(request: Request, reply: Reply, modes: Modes) -> Plan:
    match reply:
        case Status():
            return _failure(reply)
        case Hang(seconds):
            return Silence(seconds)
        case Endless(text, interval):
            return Forever(text, interval) if request.stream else Silence(None)
        case Slow(seconds, then):
            later = _plan(request, then or Auto(), modes)
            return later if isinstance(later, Failure) else _later(later, seconds)
        case Cut(text, after, chunks):
            return _text_message(request, text, chunks=chunks, cut_after=after)
        case Text(text, delay, chunks):
            return _text_message(request, text, delay=delay, chunks=chunks)
        case ToolCall(name, arguments, delay, chunks):
            return _tool_call(request, modes, name, arguments, delay, chunks)
        case TextToolCall(name, arguments, style):
            tool = _pick_tool(request, name)
            args = arguments if arguments is not None else _arguments(request, tool, modes)
            called = tool.name if tool else name or "search_library"
            return _text_message(request, _call_as_text(called, args, style))
        case InvalidJSON(kind):
            return _invalid(request, kind)
        case Auto():
            return _auto(request, reply, modes)
    raise AssertionError(f"unknown reply {reply!r}")  # pragma: no cover


def _later(answer: Message | Forever | Silence, seconds: float) -> Plan:
    return replace(answer, first_delay=answer.first_delay + seconds)


def _failure(reply: Status) -> Failure:
    error: dict[str, Any] = {
        "code": reply.error_code or reply.code,
        "message": reply.message,
        "type": reply.error_type,
    }
    if reply.param is not None:
        error["param"] = reply.param
    error.update(reply.extra)
    return Failure(reply.code, {"error": error}, _retry_after_headers(reply.retry_after))


def _retry_after_headers(seconds: float | None) -> dict[str, str]:
    if seconds is None:
        return {}
    if float(seconds).is_integer():
        return {"retry-after": str(int(seconds))}
    return {"retry-after-ms": f"{seconds * 1000:.0f}", "retry-after": str(math.ceil(seconds))}


def _budget(request: Request, text: str) -> tuple[str, str]:
    """The text cut to ``max_tokens`` (and the finish reason that says whether it was)."""
    if request.max_tokens is not None and tokens(text) > request.max_tokens:
        return text[: request.max_tokens * CHARS_PER_TOKEN], "length"
    return text, "stop"


def _text_message(
    request: Request,
    text: str,
    *,
    delay: float = 0.0,
    chunks: int = 4,
    cut_after: int | None = None,
) -> Message:
    content, finish = _budget(request, text)
    return Message(
        content=content,
        finish_reason=finish,
        prompt_tokens=request.prompt_tokens,
        completion_tokens=tokens(content),
        delay=delay,
        chunks=chunks,
        cut_after=cut_after,
    )


def _pick_tool(request: Request, name: str | None) -> Tool | None:
    if name is not None:
        return next((t for t in request.tools if t.name == name), Tool(name, {}))
    return request.forced_tool or (request.tools[0] if request.tools else None)


def _arguments(request: Request, tool: Tool | None, modes: Modes) -> Any:
    if tool is None:
        return {"query": "example query"}
    if modes.invalid_json and tool.name.startswith(OUTPUT_TOOL_PREFIX):
        return _broken(tool.parameters, modes.invalid_json == "syntax")
    return instance_for(tool.parameters, prompt=request.prompt)


class _Broken(str):
    """Arguments that are already text (broken JSON): sent as they are."""

    __slots__ = ()


def _broken(schema: dict[str, Any], syntax: bool) -> Any:
    if not syntax:
        return invalid_instance_for(schema)
    whole = json.dumps(instance_for(schema))
    return _Broken("Here is the JSON you asked for: " + whole[: max(1, len(whole) // 2)])


def _dump(arguments: Any) -> str:
    return str(arguments) if isinstance(arguments, _Broken) else json.dumps(arguments)


def _tool_call(
    request: Request,
    modes: Modes,
    name: str | None,
    arguments: dict[str, Any] | None,
    delay: float,
    chunks: int,
) -> Plan:
    tool = _pick_tool(request, name)
    if tool is None:
        return _auto(request, Auto(), modes)
    args = arguments if arguments is not None else _arguments(request, tool, modes)
    if modes.tool_as_text is not None:
        return _text_message(request, _call_as_text(tool.name, args, modes.tool_as_text))
    text, finish = _budget(request, _dump(args))
    call = OutCall(f"call_{uuid.uuid4().hex[:12]}", tool.name, text)
    return Message(
        content=None,
        calls=(call,),
        finish_reason="tool_calls" if finish == "stop" else finish,
        prompt_tokens=request.prompt_tokens,
        completion_tokens=tokens(tool.name + text),
        delay=delay,
        chunks=chunks,
    )


def _call_as_text(name: str, arguments: Any, style: str) -> str:
    args = json.loads(json.dumps(arguments)) if not isinstance(arguments, _Broken) else arguments
    call = json.dumps({"name": name, "arguments": args})
    return _STYLES[style](call)


_STYLES: dict[str, Callable[[str], str]] = {
    "bare": lambda call: call,
    "fenced": lambda call: f"```json\n{call}\n```",
    "tagged": lambda call: f"<tool_call>\n{call}\n</tool_call>",
}


def _invalid(request: Request, kind: str) -> Plan:
    schema = request.structure
    target = request.forced_tool or request.output_tool
    if schema is None and target is not None:
        broken = _broken(target.parameters, kind == "syntax")
        call = OutCall(f"call_{uuid.uuid4().hex[:12]}", target.name, _dump(broken))
        return Message(
            None,
            (call,),
            "tool_calls",
            request.prompt_tokens,
            tokens(call.arguments),
        )
    return _text_message(request, _dump(_broken(schema or {"type": "object"}, kind == "syntax")))


def _auto(request: Request, reply: Auto, modes: Modes) -> Plan:
    delay, chunks = reply.delay, reply.chunks
    if request.forced_tool is not None:
        return _tool_call(request, modes, request.forced_tool.name, None, delay, chunks)
    if request.tools and request.tool_choice != "none":
        if request.last_role == "user":
            return _tool_call(request, modes, request.tools[0].name, None, delay, chunks)
        output = request.output_tool
        if request.tool_choice == "required" and output is not None:
            return _tool_call(request, modes, output.name, None, delay, chunks)
    if request.json_schema is not None:
        return _document(request, request.json_schema, modes, reply)
    if request.prompted_schema is not None:
        return _document(request, request.prompted_schema, modes, reply)
    text = reply.text or _default_text(request)
    if request.json_object:
        text = json.dumps({"answer": text})
    return _text_message(request, text, delay=delay, chunks=chunks)


def _document(request: Request, schema: dict[str, Any], modes: Modes, reply: Auto) -> Message:
    if modes.invalid_json is not None:
        text = _dump(_broken(schema, modes.invalid_json == "syntax"))
    else:
        text = json.dumps(instance_for(schema, prompt=request.prompt))
    return _text_message(request, text, delay=reply.delay, chunks=reply.chunks)


def _default_text(request: Request) -> str:
    if request.tool_result is not None:
        name, result = request.tool_result
        return (
            f"Development answer from {request.model} after calling {name}: {_quote(result, 300)}"
        )
    return f"Development answer from {request.model} to: {_quote(request.question, 200)}"


def _quote(text: str, limit: int) -> str:
    flat = " ".join(text.split())
    return f"“{flat[:limit]}{'…' if len(flat) > limit else ''}”"
