"""Context-aware chat (seed 002): page context, tool and payload registries, page/tab/subtab
configs, the agent loop, the SSE protocol, suggestions and conversation persistence."""

from scholarstream.chat import (
    _builtin_actions,  # noqa: F401
    _catalog,  # noqa: F401  (registers the built-ins)
)
from scholarstream.chat._actions import ActionResult, get_server_action
from scholarstream.chat._agent_loop import TurnTranscript
from scholarstream.chat._assistant import Assistant, ChatMessageIn
from scholarstream.chat._builtin_payloads import BUILTIN_PAYLOAD_TYPES
from scholarstream.chat._commands import available_commands
from scholarstream.chat._compact_prompt import tool_definitions
from scholarstream.chat._conversations import (
    ConversationRename,
    ConversationStore,
    ConversationSummary,
    ConversationView,
    MessageError,
    MessageView,
    StartedTurn,
)
from scholarstream.chat._prompt import TurnPrompt, build_system_prompt, build_turn_prompt
from scholarstream.chat._stream_instructions import (
    set_stream_instructions_loader,
    stream_instructions,
)
from scholarstream.chat._turns import Batch, Turn, TurnHub, stored_outcome
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
    "BUILTIN_PAYLOAD_TYPES",
    "ActionResult",
    "Assistant",
    "Batch",
    "ChatContext",
    "ChatEvent",
    "ChatMessageIn",
    "ChatResponsePayload",
    "ClientAction",
    "ConversationRename",
    "ConversationStore",
    "ConversationSummary",
    "ConversationView",
    "CustomPayload",
    "ItemSummary",
    "MessageError",
    "MessageView",
    "PageConfig",
    "PayloadType",
    "StartedTurn",
    "SubTabConfig",
    "SuggestedAction",
    "SuggestedValue",
    "TabConfig",
    "ToolConfig",
    "ToolContext",
    "ToolProgress",
    "ToolResult",
    "ToolServices",
    "Turn",
    "TurnHub",
    "TurnPrompt",
    "TurnTranscript",
    "available_commands",
    "build_system_prompt",
    "build_turn_prompt",
    "get_server_action",
    "make_json_parser",
    "register_page",
    "register_payload_type",
    "register_tool",
    "resolve",
    "set_stream_instructions_loader",
    "stored_outcome",
    "stream_instructions",
    "tool_definitions",
]
