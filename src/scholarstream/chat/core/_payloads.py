"""Payload types: the single source of truth for every structured thing a chat answer can
carry (seed 002, "Rich Payloads"). A definition knows nothing of pages; page configs
reference it by name. Tool payloads come from tool results; LLM payloads are parsed from
``MARKER: {json}`` in the model's text."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

import jsonschema
from pydantic import BaseModel, JsonValue

PayloadSource = Literal["tool", "llm"]


class CustomPayload(BaseModel):
    """A payload as the client receives it: ``{type, data}``."""

    type: str
    data: JsonValue


class PayloadError(ValueError):
    """A payload that could not be parsed or does not match its schema; the message says why."""


PayloadParser = Callable[[str], JsonValue]
"""Turns the text after a marker into the payload's data, or raises ``PayloadError``."""


@dataclass(frozen=True)
class PayloadType:
    name: str
    description: str
    schema: dict[str, Any]
    source: PayloadSource = "tool"
    is_global: bool = False
    parse_marker: str | None = None
    parser: PayloadParser | None = None
    llm_instructions: str | None = None
    # What Accept does on the client, for the docs and the system prompt; the client's
    # renderer registry implements it.
    accept_behaviour: str | None = None
    _validator: Any = field(default=None, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.source == "llm" and (self.parse_marker is None or self.parser is None):
            raise ValueError(f"LLM payload {self.name!r} needs a parse_marker and a parser")
        jsonschema.Draft202012Validator.check_schema(self.schema)
        object.__setattr__(self, "_validator", jsonschema.Draft202012Validator(self.schema))

    def validate(self, data: JsonValue) -> JsonValue:
        """``data`` if it matches the schema, else ``PayloadError`` naming the first problem."""
        error = jsonschema.exceptions.best_match(self._validator.iter_errors(data))
        if error is not None:
            where = "/".join(str(p) for p in error.absolute_path) or "the payload"
            raise PayloadError(f"{self.name}: {where}: {error.message}")
        return data

    def payload(self, data: JsonValue) -> CustomPayload:
        return CustomPayload(type=self.name, data=self.validate(data))


def make_json_parser(name: str) -> PayloadParser:
    """A parser for ``MARKER: {json}``: reads the first JSON value after the marker and
    ignores any text after it."""

    def parse(text: str) -> JsonValue:
        stripped = text.lstrip()
        # Models like to fence JSON even when told not to.
        if stripped.startswith("```"):
            stripped = stripped.split("\n", 1)[1] if "\n" in stripped else ""
        try:
            value, _ = json.JSONDecoder().raw_decode(stripped)
        except json.JSONDecodeError as exc:
            raise PayloadError(
                f"{name}: the JSON after the marker is malformed ({exc.msg})"
            ) from exc
        result: JsonValue = value
        return result

    return parse


_PAYLOAD_TYPES: dict[str, PayloadType] = {}


def register_payload_type(payload_type: PayloadType) -> PayloadType:
    if payload_type.name in _PAYLOAD_TYPES:
        raise ValueError(f"payload type {payload_type.name!r} is registered twice")
    _PAYLOAD_TYPES[payload_type.name] = payload_type
    return payload_type


def get_payload_type(name: str) -> PayloadType:
    try:
        return _PAYLOAD_TYPES[name]
    except KeyError:
        raise KeyError(f"no payload type {name!r}; registered: {sorted(_PAYLOAD_TYPES)}") from None


def payload_types() -> list[PayloadType]:
    return sorted(_PAYLOAD_TYPES.values(), key=lambda p: p.name)
