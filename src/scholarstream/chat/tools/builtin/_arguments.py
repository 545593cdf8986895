"""A tool's arguments as a pydantic model: the model is the single source of both the JSON
``input_schema`` the model sees and the typed arguments the executor reads."""

from __future__ import annotations

from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, ValidationError

from scholarstream.chat.tools._execution import (
    PYDANTIC_KEYWORDS,
    ToolArgumentsError,
    refused_for_user,
)

Args = TypeVar("Args", bound="ToolArguments")


class ToolArguments(BaseModel):
    """Base of every built-in tool's arguments: unknown keys are refused."""

    model_config = ConfigDict(extra="forbid")


def input_schema(model: type[ToolArguments]) -> dict[str, Any]:
    """The model's JSON schema without pydantic's generated titles (noise for a model)."""
    schema: dict[str, Any] = _without_titles(model.model_json_schema())
    return schema


def _without_titles(node: Any) -> Any:
    if isinstance(node, dict):
        # A property may be called "title": its value is a schema (a dict), not a string.
        return {
            key: _without_titles(value)
            for key, value in node.items()
            if not (key == "title" and isinstance(value, str))
        }
    if isinstance(node, list):
        return [_without_titles(value) for value in node]
    return node


def parse_arguments(tool: str, model: type[Args], params: dict[str, Any]) -> Args:
    """``params`` as the typed model; a rule the schema cannot say (one field needing
    another) is refused like a schema error, naming the field."""
    try:
        return model.model_validate(params)
    except ValidationError as exc:
        error = exc.errors()[0]
        where = "/".join(str(part) for part in error["loc"]) or "arguments"
        message = str(error["msg"]).removeprefix("Value error, ")
        keyword, limit = PYDANTIC_KEYWORDS.get(error["type"], ("", ""))
        field = str(error["loc"][0]) if error["loc"] else None
        raise ToolArgumentsError(
            f"Invalid arguments for {tool}: {where}: {message}",
            hint=f"The tool's input schema: {input_schema(model)}",
            for_user=refused_for_user(field, keyword, (error.get("ctx") or {}).get(limit)),
        ) from exc
