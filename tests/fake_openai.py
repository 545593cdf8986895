"""The development provider, as the tests have always imported it: an OpenAI-compatible
chat-completions server on loopback, scripted per model, for driving the real client stack
(pydantic-ai's OpenAI model, the openai SDK, httpx) through the faults providers really
produce. It lives in ``scholarstream.devtools`` (runnable by hand as
``python -m scholarstream.devtools.fake_openai``); see docs/development-provider.md.

    with fake_openai() as fake:
        fake.script("gpt-a", Status(429, retry_after=1), Text("the answer"))
        settings.llm.providers["fake"] = ProviderSettings(base_url=fake.base_url)
        ... "fake:gpt-a" ...
        assert fake.calls("gpt-a") == 2
"""

from __future__ import annotations

from scholarstream.devtools import (
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
    no_json_schema,
    no_tools,
)

__all__ = [
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
    "no_json_schema",
    "no_tools",
]
