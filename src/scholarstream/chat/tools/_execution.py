"""Running one tool call: validate the arguments against the tool's input schema, drive the
executor (plain or streaming), validate the payload against its payload type."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

import jsonschema

from scholarstream.chat.core import get_payload_type
from scholarstream.chat.tools._registry import ToolConfig, ToolContext, ToolProgress, ToolResult
from scholarstream.errors import InvalidInputError, NotFoundError, ScholarStreamError

NOT_AS_ASKED = "That could not be run as asked: try rephrasing your request."


class ToolFailedError(InvalidInputError):
    """A tool could not do what it was asked, said twice: the message and hint for the
    model (which may name tools, arguments and ids), ``for_user`` for a person."""

    def __init__(
        self, message: str, *, hint: str | None = None, for_user: str | None = None
    ) -> None:
        super().__init__(message, hint=hint)
        self.for_user = for_user or NOT_AS_ASKED


class ToolNotFoundError(NotFoundError):
    """What a tool was asked for does not exist (or is not the user's), said twice like
    ``ToolFailedError``."""

    def __init__(self, message: str, *, for_user: str, hint: str | None = None) -> None:
        super().__init__(message, hint=hint)
        self.for_user = for_user


class ToolArgumentsError(ToolFailedError):
    """The model (or a command) gave arguments the tool's schema refuses. The message and
    hint are for the model, which corrects its call; ``for_user`` says it to a user, who
    never wrote the arguments (``refused_for_user``)."""


# A refused value's problem, by JSON-schema keyword.
_PROBLEMS: dict[str, str] = {
    "required": "The {field} is missing.",
    "maxLength": "The {field} is too long: at most {limit:,} characters.",
    "minLength": "The {field} is too short.",
    "maxItems": "The {field} has too many entries: at most {limit:,}.",
    "minItems": "The {field} has too few entries.",
    "minimum": "The {field} must be at least {limit}.",
    "maximum": "The {field} must be at most {limit}.",
}
# Arguments whose names are not words a user would use.
_FIELD_WORDS = {"url": "address", "year_from": "first year", "year_to": "last year"}
# pydantic's error types as (the JSON-schema keyword, the limit's key in the error's ctx).
PYDANTIC_KEYWORDS = {
    "string_too_long": ("maxLength", "max_length"),
    "string_too_short": ("minLength", "min_length"),
    "too_long": ("maxItems", "max_length"),
    "too_short": ("minItems", "min_length"),
    "greater_than_equal": ("minimum", "ge"),
    "less_than_equal": ("maximum", "le"),
}


# JSON-schema types in a user's words.
_TYPE_WORDS = {
    "string": "text",
    "integer": "a whole number",
    "number": "a number",
    "boolean": "yes or no",
    "array": "a list",
    "object": "a set of named values",
}


def refused_for_user(field: str | None, keyword: str, limit: object) -> str:
    """A refused argument in the user's words: which value (``query`` as "the query") and
    what is wrong with it; a problem with no plain wording gives ``NOT_AS_ASKED``."""
    if keyword == "type" and field is not None and isinstance(limit, str) and limit in _TYPE_WORDS:
        words = _FIELD_WORDS.get(field, field.replace("_", " "))
        return f"The {words} must be {_TYPE_WORDS[limit]}."
    problem = _PROBLEMS.get(keyword)
    if field is None or problem is None or ("{limit" in problem and not isinstance(limit, int)):
        return NOT_AS_ASKED
    words = _FIELD_WORDS.get(field, field.replace("_", " "))
    return problem.format(field=words, limit=limit)


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


def _spelling_key(value: str) -> str:
    return "".join(ch for ch in value.lower() if ch.isalnum())


def _as_listed(value: object, listed: list[Any]) -> object:
    """``value`` as the schema lists it when it is one of the listed strings written
    another way ("PubMed", "Semantic Scholar", "ClinicalTrials.gov"); else unchanged."""
    if not isinstance(value, str) or value in listed:
        return value
    key = _spelling_key(value)
    names = [n for n in listed if isinstance(n, str) and _spelling_key(n)]
    same = [n for n in names if _spelling_key(n) == key]
    near = same or [n for n in names if key.startswith(_spelling_key(n))]
    return near[0] if len(near) == 1 else value


def with_listed_spellings(tool: ToolConfig, arguments: dict[str, Any]) -> dict[str, Any]:
    """The arguments with each value of a listed set (an ``enum``, or the items of a list
    of them) spelt as the schema lists it: a model writes names as people do."""
    properties = tool.input_schema.get("properties", {})
    spelt = dict(arguments)
    for name, value in arguments.items():
        schema = properties.get(name)
        if not isinstance(schema, dict):
            continue
        items = schema.get("items")
        if isinstance(schema.get("enum"), list):
            spelt[name] = _as_listed(value, schema["enum"])
        elif (
            isinstance(items, dict)
            and isinstance(items.get("enum"), list)
            and isinstance(value, list)
            and all(isinstance(v, str) for v in value)
        ):
            spelt[name] = list(dict.fromkeys(_as_listed(v, items["enum"]) for v in value))
    return spelt


def check_arguments(tool: ToolConfig, arguments: dict[str, Any]) -> None:
    validator = jsonschema.Draft202012Validator(tool.input_schema)
    error = jsonschema.exceptions.best_match(validator.iter_errors(arguments))
    if error is not None:
        where = "/".join(str(p) for p in error.absolute_path) or "arguments"
        field = str(error.absolute_path[0]) if error.absolute_path else None
        if error.validator == "required":  # the missing one names the field
            field = next((str(n) for n in error.validator_value if n not in arguments), None)
        raise ToolArgumentsError(
            f"Invalid arguments for {tool.name}: {where}: {error.message}",
            hint=f"The tool's input schema: {tool.input_schema}",
            for_user=refused_for_user(field, str(error.validator), error.validator_value),
        )


async def execute_tool(
    tool: ToolConfig,
    arguments: dict[str, Any],
    context: ToolContext,
    on_progress: Callable[[ToolProgress], None],
) -> ToolResult:
    """The tool's result. Raises ``ToolArgumentsError`` for bad arguments and lets the
    executor's ``ScholarStreamError`` through: the agent loop decides what a failure means."""
    arguments = with_listed_spellings(tool, arguments)
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
