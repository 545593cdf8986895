"""Context-aware chat (seed 002): page context, tool and payload registries, page/tab/subtab
configs, the agent loop, the SSE protocol, suggestions and conversation persistence."""

from scholarstream.chat import builtin_actions as _builtin_actions  # noqa: F401
from scholarstream.chat import catalog as _catalog  # noqa: F401  (registers the built-ins)
from scholarstream.chat.core import (
    ChatContext,
    ChatEvent,
    ChatResponsePayload,
    CustomPayload,
    ItemSummary,
    PayloadType,
    SuggestedAction,
    SuggestedValue,
    make_json_parser,
    register_payload_type,
)
from scholarstream.chat.pages import (
    ClientAction,
    PageConfig,
    SubTabConfig,
    TabConfig,
    register_page,
    resolve,
)
from scholarstream.chat.tools import (
    ToolConfig,
    ToolContext,
    ToolProgress,
    ToolResult,
    ToolServices,
    register_tool,
)

__all__ = [
    "ChatContext",
    "ChatEvent",
    "ChatResponsePayload",
    "ClientAction",
    "CustomPayload",
    "ItemSummary",
    "PageConfig",
    "PayloadType",
    "SubTabConfig",
    "SuggestedAction",
    "SuggestedValue",
    "TabConfig",
    "ToolConfig",
    "ToolContext",
    "ToolProgress",
    "ToolResult",
    "ToolServices",
    "make_json_parser",
    "register_page",
    "register_payload_type",
    "register_tool",
    "resolve",
]
