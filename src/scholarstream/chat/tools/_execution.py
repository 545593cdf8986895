"""Running one tool call: validate the arguments against the tool's input schema, drive the
executor (plain or streaming), validate the payload against its payload type."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

import jsonschema

from scholarstream.chat.core import get_payload_type
from scholarstream.chat.tools._registry import ToolConfig, ToolContext, ToolProgress, ToolResult
from scholarstream.errors import InvalidInputError, ScholarStreamError


class ToolArgumentsError(InvalidInputError):
    """The model (or a command) gave arguments the tool's schema refuses."""


def without_null_options(tool: ToolConfig, arguments: dict[str, Any]) -> dict[str, Any]:
    """The arguments less the optional ones given as ``null`` where the schema takes no
    null: a small model writes every parameter it was shown, ``null`` for those it has no
    value for, and means "not given"."""
    properties = tool.input_schema.get("properties", {})
    required = set(tool.input_schema.get("required", ()))
    return {
        name: value
        for name, value in arguments.items()
        if value is not None
        or name in required
        or (
            isinstance(properties.get(name), dict)
            and jsonschema.Draft202012Validator(properties[name]).is_valid(None)
        )
    }


def check_arguments(tool: ToolConfig, arguments: dict[str, Any]) -> None:
    validator = jsonschema.Draft202012Validator(tool.input_schema)
    error = jsonschema.exceptions.best_match(validator.iter_errors(arguments))
    if error is not None:
        where = "/".join(str(p) for p in error.absolute_path) or "arguments"
        raise ToolArgumentsError(
            f"Invalid arguments for {tool.name}: {where}: {error.message}",
            hint=f"The tool's input schema: {tool.input_schema}",
        )


async def execute_tool(
    tool: ToolConfig,
    arguments: dict[str, Any],
    context: ToolContext,
    on_progress: Callable[[ToolProgress], None],
) -> ToolResult:
    """The tool's result. Raises ``ToolArgumentsError`` for bad arguments and lets the
    executor's ``ScholarStreamError`` through: the agent loop decides what a failure means."""
    check_arguments(tool, arguments)
    outcome = tool.executor(arguments, context)
    result: ToolResult | None = None
    if inspect.isawaitable(outcome):
        result = await outcome
    else:
        async for item in outcome:
            if isinstance(item, ToolProgress):
                on_progress(item)
            else:
                result = item
    if result is None:
        raise ScholarStreamError(
            f"The tool {tool.name} finished without a result.",
            hint="This is a bug in the tool: it must yield or return a ToolResult.",
        )
    if result.payload is not None:
        # A tool's payload is ours, not the model's: a mismatch is a bug, not bad input.
        get_payload_type(result.payload.type).validate(result.payload.data)
    return result
