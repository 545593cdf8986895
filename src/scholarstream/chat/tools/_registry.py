"""Tool definitions (seed 002, "Tool System"): the single source of truth for what the model
can call. A definition knows nothing of pages; ``is_global`` tools are offered everywhere,
the others only where a page, tab or subtab config names them."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import jsonschema
from pydantic import BaseModel, Field

from scholarstream.chat.continuity import QuerySent
from scholarstream.chat.core import ChatContext, CustomPayload
from scholarstream.grounding import PackBuilder

if TYPE_CHECKING:
    from scholarstream.db import Database
    from scholarstream.settings import ChatSettings, SearchSettings
    from scholarstream.sources import SourceHub
    from scholarstream.sources.library import Library


class ToolProgress(BaseModel):
    """A progress report a long tool streams while it works."""

    stage: str
    message: str = ""
    progress: float | None = Field(default=None, ge=0.0, le=1.0)


class ToolResult(BaseModel):
    """A tool's result has two texts, and they never mix. ``text`` goes to the model: it
    may name tools and ids, cite keys and tell the model what to do. ``for_user`` is what a
    person reads of the result (the tool's line in the tray, a command's answer, an answer
    made without a model): a plain summary, with no tool names, no ids as labels, no
    instructions to a model and no error classes. Every tool writes both.
    ``payload`` goes to the UI (its fields are for people too); ``queries`` are the exact
    queries the tool sent (one per source), shown to the user and kept in the thread."""

    text: str
    for_user: str = Field(min_length=1)
    payload: CustomPayload | None = None
    queries: list[QuerySent] = Field(default_factory=list)


@dataclass(frozen=True)
class ToolServices:
    """The shared objects the tools work with, built once by the interface that runs them:
    the database, the literature sources and the library, and the settings sections the
    tools read (``search``: the default sources; ``chat``: the web page reader's limits)."""

    database: Database
    sources: SourceHub
    library: Library
    search: SearchSettings
    chat: ChatSettings


@dataclass(frozen=True)
class ToolContext:
    """What an executor works with: the shared objects it uses, whose data it may touch,
    and what the user is looking at."""

    services: ToolServices
    owner_id: uuid.UUID
    chat: ChatContext
    conversation_id: uuid.UUID | None = None
    evidence: PackBuilder = field(default_factory=PackBuilder)
    """The citation keys of the records the conversation's tools showed the model: a
    record keeps its key for the whole conversation."""


ToolStream = AsyncIterator[ToolProgress | ToolResult]
ToolExecutor = Callable[[dict[str, Any], ToolContext], Awaitable[ToolResult] | ToolStream]
"""Either a coroutine returning a ``ToolResult``, or an async generator that yields
``ToolProgress`` reports and finally one ``ToolResult``."""


FailureText = Callable[[Exception, Mapping[str, Any], ToolContext], str]
"""What a tool's failure (the error it raised, for these arguments) tells the user when no
model answers: what could not be done and what to do, in plain words; never the error's
class, the tool's name or advice written for a model."""


@dataclass(frozen=True)
class ToolConfig:
    name: str
    description: str
    input_schema: dict[str, Any]
    executor: ToolExecutor
    category: str = "general"
    payload_type: str | None = None
    is_global: bool = True
    # ``/<command> TEXT`` calls this tool with TEXT in the input field ``command_argument``
    # (with or without a model); None: no command.
    command: str | None = None
    command_argument: str | None = None
    # A retrieval tool: this input field is its query, which follow-up continuity may
    # rewrite to carry the conversation's topic (seed 004). None: not a retrieval tool.
    query_argument: str | None = None
    # The command in the user's words, for /help and the command list (the description is
    # written for a model, and never shown). Required with a command.
    command_summary: str | None = None
    # What a failure tells the user (see FailureText). None: the product's error message
    # alone, or a plain "could not be done".
    failure_for_user: FailureText | None = None
    # The tool's name as people read it ("Search PubMed"); None: its name in words.
    label: str | None = None

    def __post_init__(self) -> None:
        jsonschema.Draft202012Validator.check_schema(self.input_schema)
        if self.command is not None and not self.command_summary:
            raise ValueError(
                f"tool {self.name!r} has the command /{self.command} but no command_summary: "
                "/help says what a command does in the user's words, never the model's"
            )


_TOOLS: dict[str, ToolConfig] = {}


def register_tool(tool: ToolConfig) -> ToolConfig:
    if tool.name in _TOOLS:
        raise ValueError(f"tool {tool.name!r} is registered twice")
    _TOOLS[tool.name] = tool
    return tool


def get_tool(name: str) -> ToolConfig:
    try:
        return _TOOLS[name]
    except KeyError:
        raise KeyError(f"no tool {name!r}; registered: {sorted(_TOOLS)}") from None


def tool_label(name: str) -> str:
    """A tool's name as people read it: its ``label``, else its name in words
    ("search_literature" as "Search literature"); never the identifier itself."""
    tool = _TOOLS.get(name)
    if tool is not None and tool.label:
        return tool.label
    words = " ".join(name.replace("_", " ").split())
    return words[:1].upper() + words[1:] if words else "A tool"


def tools() -> list[ToolConfig]:
    return sorted(_TOOLS.values(), key=lambda t: t.name)
