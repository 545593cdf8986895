"""Tools for developing and trying ScholarStream without a real model.

The development provider (``python -m scholarstream.devtools.fake_openai``) is an
OpenAI-compatible chat-completions server on loopback: it answers like a capable model
(text, tool calls, JSON-schema output built from the request's schema) or fails the way
real local servers fail (``--mode no-tools``, ``endless`` ...). Tests run it in a thread
with ``fake_openai()`` and script each model's replies. It imports nothing of the product,
so any layer's tests may use it. See docs/development-provider.md."""

from scholarstream.devtools._cli import main
from scholarstream.devtools._modes import MODES, Modes, parse_modes
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
from scholarstream.devtools._server import (
    DEFAULT_MODELS,
    FakeOpenAI,
    Received,
    fake_openai,
)

__all__ = [
    "DEFAULT_MODELS",
    "MODES",
    "Auto",
    "Cut",
    "Endless",
    "FakeOpenAI",
    "Hang",
    "InvalidJSON",
    "Modes",
    "Received",
    "Reply",
    "Slow",
    "Status",
    "Text",
    "TextToolCall",
    "ToolCall",
    "context_too_long",
    "fake_openai",
    "instance_for",
    "invalid_instance_for",
    "main",
    "no_json_schema",
    "no_tools",
    "parse_modes",
]
