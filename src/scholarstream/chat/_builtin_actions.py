"""The product's own server actions: the model may offer them as buttons."""

from __future__ import annotations

from typing import Any

from scholarstream.chat._actions import ActionResult, ServerAction, register_server_action
from scholarstream.chat._tool_outcome import ToolOutcome
from scholarstream.chat.tools import (
    ToolArgumentsError,
    ToolContext,
    ToolProgress,
    execute_tool,
    get_tool,
)
from scholarstream.errors import InvalidInputError, ScholarStreamError


def _tool_action(name: str, tool_name: str, description: str) -> ServerAction:
    async def handler(params: dict[str, Any], context: ToolContext) -> ActionResult:
        def ignore(_: ToolProgress) -> None:
            return None

        tool = get_tool(tool_name)
        try:
            result = await execute_tool(tool, params, context, ignore)
        except ToolArgumentsError as exc:  # the user's words, not the tool's schema
            raise InvalidInputError(
                exc.for_user, hint="Ask the assistant to offer the action again."
            ) from exc
        except ScholarStreamError as exc:
            # Done, and failed (every source down ...): said as the tool says it to people;
            # the error's hint may be written for a model.
            said = ToolOutcome(error=exc).for_user(tool, params, context)
            return ActionResult(message=said, ok=False)
        # The button's answer is the user's to read.
        return ActionResult(message=result.for_user, payload=result.payload)

    return ServerAction(name=name, description=description, handler=handler)


register_server_action(
    _tool_action(
        "run_search",
        "search_literature",
        'Searches every configured source and the library; params {"query": "what to search for"}.',
    )
)
