"""The product's own server actions: the model may offer them as buttons."""

from __future__ import annotations

from typing import Any

from scholarstream.chat._actions import ActionResult, ServerAction, register_server_action
from scholarstream.chat.tools import (
    ToolArgumentsError,
    ToolContext,
    ToolProgress,
    execute_tool,
    get_tool,
)
from scholarstream.errors import InvalidInputError


def _tool_action(name: str, tool_name: str, description: str) -> ServerAction:
    async def handler(params: dict[str, Any], context: ToolContext) -> ActionResult:
        def ignore(_: ToolProgress) -> None:
            return None

        try:
            result = await execute_tool(get_tool(tool_name), params, context, ignore)
        except ToolArgumentsError as exc:  # the user's words, not the tool's schema
            raise InvalidInputError(exc.for_user, hint=f"The action takes: {description}") from exc
        # The button's answer is the user's to read.
        return ActionResult(message=result.for_user or result.text, payload=result.payload)

    return ServerAction(name=name, description=description, handler=handler)


register_server_action(
    _tool_action(
        "run_search",
        "search_literature",
        'Searches every configured source and the library; params {"query": "what to search for"}.',
    )
)
