"""Server-side handlers of suggested actions (``handler: "server"``), posted by the client
to ``/api/v1/chat/actions/{action}``."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, Field

from scholarstream.chat.core import CustomPayload
from scholarstream.chat.tools import ToolContext
from scholarstream.errors import NotFoundError


class ActionResult(BaseModel):
    message: str = Field(description="What the action did, or why it could not, for a person.")
    ok: bool = Field(default=True, description="False: it could not be done (message says why).")
    payload: CustomPayload | None = None


ActionHandler = Callable[[dict[str, Any], ToolContext], Awaitable[ActionResult]]


@dataclass(frozen=True)
class ServerAction:
    name: str
    description: str
    handler: ActionHandler


_ACTIONS: dict[str, ServerAction] = {}


def register_server_action(action: ServerAction) -> ServerAction:
    if action.name in _ACTIONS:
        raise ValueError(f"server action {action.name!r} is registered twice")
    _ACTIONS[action.name] = action
    return action


def get_server_action(name: str) -> ServerAction:
    action = _ACTIONS.get(name)
    if action is None:
        raise NotFoundError(
            f"There is no chat action {name!r}.",
            hint=f"Server actions: {', '.join(sorted(_ACTIONS)) or 'none'}.",
        )
    return action


def server_actions() -> list[ServerAction]:
    return sorted(_ACTIONS.values(), key=lambda a: a.name)
