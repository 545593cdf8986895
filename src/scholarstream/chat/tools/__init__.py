"""Tools the chat model can call: definitions, registry, execution."""

from scholarstream.chat.tools._execution import (
    ToolArgumentsError,
    ToolFailedError,
    ToolNotFoundError,
    check_arguments,
    execute_tool,
    without_null_options,
)
from scholarstream.chat.tools._registry import (
    ToolConfig,
    ToolContext,
    ToolExecutor,
    ToolProgress,
    ToolResult,
    ToolServices,
    get_tool,
    register_tool,
    tool_label,
    tools,
)

__all__ = [
    "ToolArgumentsError",
    "ToolConfig",
    "ToolContext",
    "ToolExecutor",
    "ToolFailedError",
    "ToolNotFoundError",
    "ToolProgress",
    "ToolResult",
    "ToolServices",
    "check_arguments",
    "execute_tool",
    "get_tool",
    "register_tool",
    "tool_label",
    "tools",
    "without_null_options",
]
