"""The development provider: ``python -m scholarstream.devtools.fake_openai --help``.

An OpenAI-compatible server (``/v1/models``, ``/v1/chat/completions``, streaming or not)
that answers like a capable model, or fails as a chosen failure mode says. In tests::

    from scholarstream.devtools.fake_openai import Text, ToolCall, fake_openai

    with fake_openai() as fake:
        fake.script("gpt-a", ToolCall("search_library"), Text("the answer"))
        ... base URL fake.base_url, model "gpt-a" ...
"""

from __future__ import annotations

import sys

from scholarstream.devtools import (
    DEFAULT_MODELS,
    MODES,
    Auto,
    Cut,
    Endless,
    FakeOpenAI,
    Hang,
    InvalidJSON,
    Modes,
    Received,
    Reply,
    Slow,
    Status,
    Text,
    TextToolCall,
    ToolCall,
    context_too_long,
    fake_openai,
    instance_for,
    invalid_instance_for,
    main,
    no_json_schema,
    no_tools,
    parse_modes,
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

if __name__ == "__main__":
    sys.exit(main())
