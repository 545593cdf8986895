"""What the development provider answers: the reply kinds a test scripts per model, and the
error bodies real servers send for the failures of issue 22."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

ToolTextStyle = Literal["bare", "fenced", "tagged"]
"""How a model writes a tool call as text: a bare JSON object, in a ```json fence, or in
``<tool_call>`` tags (Qwen's chat template)."""

InvalidKind = Literal["syntax", "schema"]
"""A broken structured answer: not JSON at all, or JSON of the wrong shape."""


@dataclass(frozen=True)
class Text:
    """A whole answer, streamed in ``chunks`` pieces ``delay`` seconds apart (or at once)."""

    text: str
    delay: float = 0.0
    chunks: int = 4


@dataclass(frozen=True)
class Status:
    """An HTTP error, e.g. ``Status(429, retry_after=2)`` or ``Status(500)``.

    A whole ``retry_after`` is sent as ``Retry-After: <seconds>`` (the only number the
    header allows); a fractional one as OpenAI and Anthropic send it, ``retry-after-ms``
    (which clients read first) with ``Retry-After`` rounded up next to it."""

    code: int
    retry_after: float | None = None
    message: str = "fake provider error"
    error_code: str | None = None
    """The error's ``code``, as OpenAI names it (``insufficient_quota`` ...); else the status."""
    error_type: str = "fake_error"
    extra: dict[str, Any] = field(default_factory=dict)
    """More fields of the ``error`` object (llama-server's ``n_ctx`` ...)."""
    param: str | None = None
    """OpenAI's ``param`` (the request field at fault); sent only when set."""


@dataclass(frozen=True)
class Hang:
    """Accepts the request and answers nothing for ``seconds`` (past the client's timeout).
    A client that gives up first is recorded as cancelled."""

    seconds: float = 30.0


@dataclass(frozen=True)
class Cut:
    """Starts streaming ``text`` and drops the connection after ``after`` of its chunks.
    A request that does not stream gets its connection dropped before any answer."""

    text: str
    after: int = 2
    chunks: int = 4


@dataclass(frozen=True)
class ToolCall:
    """A call of a tool. ``name`` None: the tool the request forces, else its first tool;
    ``arguments`` None: a document built from the tool's parameter schema. A request
    without tools gets the ``Auto`` answer instead."""

    name: str | None = None
    arguments: dict[str, Any] | None = None
    delay: float = 0.0
    chunks: int = 4


@dataclass(frozen=True)
class TextToolCall:
    """A model that writes its tool call as text instead of calling: the content is
    ``{"name": ..., "arguments": {...}}``, bare, fenced or tagged. ``name``/``arguments``
    None as in ``ToolCall``; a request without tools names ``search_library``."""

    name: str | None = None
    arguments: dict[str, Any] | None = None
    style: ToolTextStyle = "bare"


@dataclass(frozen=True)
class InvalidJSON:
    """A structured answer that cannot be used: ``syntax`` is not JSON (prose, then a cut
    document), ``schema`` is JSON that does not validate against the requested schema. It
    goes where the request wants the structure: the content, or the forced tool's
    arguments."""

    kind: InvalidKind = "syntax"


@dataclass(frozen=True)
class Endless:
    """A model that never stops: a stream gets ``text`` every ``interval`` seconds until
    the client leaves (so a per-read timeout never fires); a request that does not stream
    gets nothing until the client leaves. Either way the abandonment is recorded."""

    text: str = "more "
    interval: float = 0.2


@dataclass(frozen=True)
class Slow:
    """The first byte after ``seconds``, then ``then`` (``Auto()`` when None)."""

    seconds: float
    then: Reply | None = None


@dataclass(frozen=True)
class Auto:
    """The answer a capable model would give, read off the request: a JSON document valid
    against a ``response_format`` json_schema (or a schema given in the prompt); a call of
    the forced tool, or of the first tool when the last message is the user's; a text
    answer after a tool result, or when nothing structured is asked (``text``, else a
    line naming the model and quoting the question)."""

    text: str | None = None
    delay: float = 0.0
    chunks: int = 8


Reply = Text | Status | Hang | Cut | ToolCall | TextToolCall | InvalidJSON | Endless | Slow | Auto


def no_tools() -> Status:
    """llama-server started without ``--jinja``, asked with ``tools`` (its exact body)."""
    return Status(500, message="tools param requires --jinja flag", error_type="server_error")


def no_json_schema() -> Status:
    """A server or model that refuses ``response_format`` json_schema (OpenAI's wording)."""
    return Status(
        400,
        message="Invalid parameter: 'response_format' of type 'json_schema' is not supported "
        "with this model.",
        error_type="invalid_request_error",
        error_code="unsupported_parameter",
        param="response_format",
    )


def context_too_long(prompt_tokens: int, n_ctx: int) -> Status:
    """llama-server's answer to a prompt longer than its context (``-c``)."""
    return Status(
        400,
        message="the request exceeds the available context size, try increasing it",
        error_type="exceed_context_size_error",
        extra={"n_prompt_tokens": prompt_tokens, "n_ctx": n_ctx},
    )
