"""Errors that say the model's server *cannot* do what was asked, read from the provider's
own message: no tool calling, no JSON-schema output, a prompt longer than its context.

Servers say so with whatever status they like (llama-server answers a request with tools
HTTP 500 ``tools param requires --jinja flag`` when started without ``--jinja``; Ollama a
400 ``... does not support tools``), so the status says nothing and a 5xx would be retried
as a passing fault. The message is matched against a registry of patterns instead
(``register_capability_pattern``); a match is a capability error: never retried
(``retries``), raised as ``ModelCapabilityError`` with what to change (``model_errors``).

==============  ==============================================  ===========================
capability      what the server said (examples)                 what to change
==============  ==============================================  ===========================
``tools``       ``tools param requires --jinja flag``           llama-server ``--jinja``, or
                (llama-server), ``does not support tools``      ``supports_tools = false``
                (Ollama), ``"auto" tool choice requires         and ``structured_output =
                --enable-auto-tool-choice`` (vLLM)              "native"``
``json_schema`` ``response_format`` / ``json_schema`` not       ``structured_output =
                supported                                       "tool"`` or ``"prompted"``
``context``     ``exceeds the available context size``          raise ``-c`` on the server,
                (llama-server), ``context_length_exceeded``,    shorten the input, or a
                ``maximum context length`` (OpenAI, vLLM)       model with a larger context
==============  ==============================================  ===========================
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Literal

from pydantic_ai.exceptions import (
    ModelAPIError,
    ModelContextWindowExceededError,
    ModelHTTPError,
)

from scholarstream.logs import redact

__all__ = [
    "CAPABILITY_PATTERNS",
    "Capability",
    "CapabilityPattern",
    "missing_capability",
    "provider_message",
    "register_capability_pattern",
]

Capability = Literal["tools", "json_schema", "context"]

_MAX_MESSAGE_CHARS = 400
# A refused key, a forbidden model or a rate limit is never a statement about what the
# server can do, whatever words its message uses.
_NOT_ABOUT_CAPABILITIES = frozenset({401, 402, 403, 429})


@dataclass(frozen=True)
class CapabilityPattern:
    capability: Capability
    pattern: re.Pattern[str]
    """Searched (case-insensitive) in the provider's message."""


CAPABILITY_PATTERNS: list[CapabilityPattern] = []


def register_capability_pattern(capability: Capability, pattern: str) -> None:
    """Teaches the product one more server's way of saying it lacks ``capability``."""
    CAPABILITY_PATTERNS.append(CapabilityPattern(capability, re.compile(pattern, re.IGNORECASE)))


# Tool calling.
register_capability_pattern("tools", r"tools? param(eter)?s? requires? --jinja")
register_capability_pattern("tools", r"does not support (function calling|tools?)\b")
register_capability_pattern("tools", r"\btools?( use| calling| calls)? (is |are )?not supported")
register_capability_pattern("tools", r"tool[_ ]choice\b.*\b(not supported|requires)")
register_capability_pattern("tools", r"--enable-auto-tool-choice")
# JSON-schema output (response_format).
register_capability_pattern(
    "json_schema", r"response_format\b.*\b(not supported|unsupported|must be)"
)
register_capability_pattern("json_schema", r"json_schema\b.*\b(not supported|unsupported)")
register_capability_pattern("json_schema", r"(structured outputs?|json schema)\b.*\bnot supported")
register_capability_pattern("json_schema", r"(unsupported|invalid) (value|type).*response_format")
# Context size.
register_capability_pattern("context", r"exceeds? the available context size")
register_capability_pattern("context", r"context[_ ]length[_ ]exceeded")
register_capability_pattern("context", r"maximum context length")
register_capability_pattern("context", r"input is too large to process")
register_capability_pattern("context", r"prompt is too long")


def provider_message(exc: BaseException) -> str | None:
    """What the provider itself said about the failure (its error body's ``message``),
    shortened; ``None`` when it said nothing readable."""
    if not isinstance(exc, ModelAPIError):
        return None
    text = _message_of(exc.body) if exc.body is not None else None
    if text is None and not isinstance(exc, ModelHTTPError):
        text = exc.message  # a connection error's own words, not an HTTP error's repr
    if not text:
        return None
    text = redact(" ".join(text.split()))  # a server that echoes a key does not show it
    if len(text) > _MAX_MESSAGE_CHARS:
        text = text[: _MAX_MESSAGE_CHARS - 1] + "…"
    return text


def _message_of(body: object) -> str | None:
    """The message in an error body: ``{"error": {"message": ...}}``, ``{"message": ...}``,
    ``{"error": "..."}`` (Ollama), a JSON string of one of these, or plain text."""
    if isinstance(body, str):
        try:
            parsed = json.loads(body)
        except ValueError:
            return body.strip() or None
        return _message_of(parsed) if not isinstance(parsed, str) else parsed
    if isinstance(body, dict):
        for key in ("message", "error", "detail"):
            value = body.get(key)
            if isinstance(value, str) and value.strip():
                return value
            if isinstance(value, dict):
                found = _message_of(value)
                if found:
                    return found
    if isinstance(body, list) and body:
        return _message_of(body[0])  # Google sends a list of one error
    return None


def missing_capability(exc: BaseException) -> Capability | None:
    """The capability the server said it lacks, if ``exc`` says one."""
    if not isinstance(exc, ModelAPIError):
        return None
    if isinstance(exc, ModelContextWindowExceededError):
        return "context"
    if not isinstance(exc, ModelHTTPError):
        return None  # a connection error or a timeout is no statement about the server
    if exc.status_code in _NOT_ABOUT_CAPABILITIES:
        return None
    texts = [provider_message(exc) or "", exc.provider_error_code or ""]
    for entry in CAPABILITY_PATTERNS:
        if any(entry.pattern.search(text) for text in texts if text):
            return entry.capability
    return None
