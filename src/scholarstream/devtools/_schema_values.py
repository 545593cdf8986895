"""A JSON document that validates against a JSON schema, made up from the schema alone.

The development provider answers a request for structured output (``response_format``
json_schema, a forced output tool, a prompted schema) with such a document, as a model that
follows the schema would. It covers what pydantic and OpenAI's strict mode emit: types and
type lists, ``enum``/``const``, string lengths and formats, number bounds and
``multipleOf``, arrays (one item, or ``minItems``; distinct items when ``uniqueItems``),
``prefixItems``, objects (every property, ``minProperties``), ``$ref`` into ``$defs`` or
``definitions`` (recursive models stop at a depth), ``allOf``, ``anyOf`` and ``oneOf``
(the first branch whose value validates). ``pattern`` is met only by a few stock strings.

Given the request's ``prompt``, the document answers it as a capable model would
(``_prompt_hints``): a choice takes the furthest of the values the prompt offers for it (a
model moves the work on as far as it may), and a nested object whose properties are all
optional holds only the values the prompt gives for them (a model extracts what it was
told and makes nothing up).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any

from jsonschema import Draft202012Validator

from scholarstream.devtools._prompt_hints import PromptHints

_DEEP = 6
"""Past this depth of nesting, a recursive schema gets its smallest value (null where
allowed, no optional properties, empty arrays where allowed), so the document ends."""

_GIVE_UP = 40
"""A schema that still nests here cannot end (a required recursive field): stop anyway."""

_FORMATS: dict[str, str] = {
    "date": "2024-01-15",
    "date-time": "2024-01-15T10:00:00Z",
    "time": "10:00:00Z",
    "duration": "P1D",
    "email": "dev@example.org",
    "idn-email": "dev@example.org",
    "uri": "https://example.org/dev",
    "iri": "https://example.org/dev",
    "url": "https://example.org/dev",
    "uri-reference": "https://example.org/dev",
    "uuid": "00000000-0000-4000-8000-000000000000",
    "hostname": "example.org",
    "idn-hostname": "example.org",
    "ipv4": "127.0.0.1",
    "ipv6": "::1",
    "regex": ".*",
}

_PATTERN_TRIES = ("example", "a", "A", "abc", "ABC", "0", "1", "123", "2024", "2024-01-15")

_MERGED_LISTS = ("required",)
_MERGED_MAPS = ("properties", "$defs", "definitions")


def instance_for(schema: Mapping[str, Any] | bool, *, prompt: str | None = None) -> Any:
    """A value valid against ``schema`` (draft 2020-12, local ``$ref`` only); with
    ``prompt`` (the request's instructions and last user message), one that answers it."""
    if isinstance(schema, bool):
        return "example"
    hints = PromptHints(prompt) if prompt else None
    return _Builder(schema, hints).value(schema, "value", 0, 0)


def invalid_instance_for(schema: Mapping[str, Any] | bool) -> Any:
    """A JSON value that does *not* validate against ``schema`` (a model that ignored it),
    or, for a schema every value meets, a document with an unexpected shape anyway."""
    tries: list[Any] = [
        {"answer": "I could not follow the requested format."},
        "I could not follow the requested format.",
        ["not", "the", "expected", "shape"],
        12345,
        None,
    ]
    if isinstance(schema, bool):
        return tries[0]
    validator = _Builder(schema).validator_for(schema)
    for candidate in tries:
        if not validator.is_valid(candidate):
            return candidate
    return tries[0]


class _Builder:
    def __init__(self, root: Mapping[str, Any], hints: PromptHints | None = None) -> None:
        self._root = root
        self._hints = hints

    def validator_for(self, schema: Mapping[str, Any]) -> Draft202012Validator:
        """A validator of a part of the root schema that still resolves the root's refs."""
        whole = dict(schema)
        for key in ("$defs", "definitions"):
            if key in self._root and key not in whole:
                whole[key] = self._root[key]
        return Draft202012Validator(whole)

    def value(self, schema: Mapping[str, Any] | bool, hint: str, depth: int, variant: int) -> Any:
        if isinstance(schema, bool) or depth > _GIVE_UP:
            return f"example {_words(hint)}" if schema is not False else None
        schema = self._flatten(schema, depth)
        if "const" in schema:
            return schema["const"]
        if schema.get("enum"):
            enum = list(schema["enum"])
            offered = self._hints.offered(enum) if self._hints else []
            if offered:  # the furthest first; distinct values for an array's items
                return offered[-1 - variant % len(offered)]
            return enum[variant % len(enum)]
        for key in ("anyOf", "oneOf"):
            if key in schema:
                return self._choice(schema, key, hint, depth, variant)
        kind = self._type(schema, depth)
        maker = _MAKERS.get(kind, _Builder.string)
        return maker(self, schema, hint, depth, variant)

    def _flatten(self, schema: Mapping[str, Any], depth: int) -> Mapping[str, Any]:
        """Resolves ``$ref`` and merges ``allOf`` into one schema."""
        seen = 0
        while "$ref" in schema and seen < 32:
            target = self._resolve(str(schema["$ref"]))
            rest = {k: v for k, v in schema.items() if k != "$ref"}
            schema = {**target, **rest}
            seen += 1
        if "allOf" in schema:
            merged: dict[str, Any] = {k: v for k, v in schema.items() if k != "allOf"}
            for part in schema["allOf"]:
                if isinstance(part, bool):
                    continue
                flat = self._flatten(part, depth)
                for key, value in flat.items():
                    if key in _MERGED_LISTS:
                        merged[key] = [*merged.get(key, []), *value]
                    elif key in _MERGED_MAPS:
                        merged[key] = {**merged.get(key, {}), **value}
                    else:
                        merged.setdefault(key, value)
            schema = merged
        return schema

    def _resolve(self, ref: str) -> Mapping[str, Any]:
        if not ref.startswith("#"):
            return {}  # a remote schema: nothing to follow on a development server
        node: Any = self._root
        for raw in ref[1:].split("/"):
            if not raw:
                continue
            part = raw.replace("~1", "/").replace("~0", "~")
            node = node[int(part)] if isinstance(node, list) else node.get(part, {})
        return node if isinstance(node, Mapping) else {}

    def _choice(
        self, schema: Mapping[str, Any], key: str, hint: str, depth: int, variant: int
    ) -> Any:
        options = [o for o in schema[key] if o is not False]
        nulls = [o for o in options if self._is_null(o)]
        others = [o for o in options if not self._is_null(o)]
        # Past the depth limit a nullable branch ends a recursive model; before it, a
        # real value is the more useful answer.
        ordered = [*nulls, *others] if depth > _DEEP else [*others, *nulls]
        rest = {k: v for k, v in schema.items() if k not in (key,)}
        validator = self.validator_for(schema)
        first: Any = None
        for index, option in enumerate(ordered):
            branch = {**rest, **option} if isinstance(option, Mapping) else rest
            candidate = self.value(branch, hint, depth + 1, variant)
            if index == 0:
                first = candidate
            if validator.is_valid(candidate):
                return candidate
        return first

    def _is_null(self, schema: Any) -> bool:
        if not isinstance(schema, Mapping):
            return False
        flat = self._flatten(schema, 0)
        return flat.get("type") == "null" or flat.get("const", ...) is None

    def _type(self, schema: Mapping[str, Any], depth: int) -> str:
        declared = schema.get("type")
        if isinstance(declared, list):
            kinds = [str(k) for k in declared]
            if depth > _DEEP and "null" in kinds:
                return "null"
            real = [k for k in kinds if k != "null"]
            return real[0] if real else "null"
        if isinstance(declared, str):
            return declared
        for keys, kind in _INFERRED:
            if any(k in schema for k in keys):
                return kind
        return "string"

    def object(self, schema: Mapping[str, Any], hint: str, depth: int, variant: int) -> Any:
        properties: Mapping[str, Any] = schema.get("properties", {})
        required = [str(name) for name in schema.get("required", [])]
        optional_only = bool(properties) and not required and not schema.get("minProperties")
        if self._hints and depth and optional_only:
            return self._given(properties)
        names = required if depth > _DEEP else [*properties, *required]
        result: dict[str, Any] = {}
        extra = schema.get("additionalProperties", True)
        for name in dict.fromkeys(names):  # properties first, in order, then the rest
            sub = properties.get(name, True if extra is False else extra)
            result[name] = self.value(sub, name, depth + 1, variant)
        wanted = int(schema.get("minProperties", 0))
        index = 0
        while len(result) < wanted and extra is not False:
            index += 1
            result[f"extra_{index}"] = self.value(extra, f"extra {index}", depth + 1, variant)
        return result

    def _given(self, properties: Mapping[str, Any]) -> dict[str, Any]:
        """An object of optional values, as a model that makes none up answers it: each
        property the prompt gives a value for (one its schema accepts), and no other."""
        assert self._hints is not None
        result: dict[str, Any] = {}
        for name, sub in properties.items():
            if isinstance(sub, bool):
                continue
            validator = self.validator_for(sub)
            value = next((v for v in self._hints.given(name) if validator.is_valid(v)), None)
            if value is not None:
                result[name] = value
        return result

    def array(self, schema: Mapping[str, Any], hint: str, depth: int, variant: int) -> Any:
        prefix = list(schema.get("prefixItems", []))
        items = schema.get("items", True)
        low = int(schema.get("minItems", 0))
        high = schema.get("maxItems")
        count = max(low, len(prefix), 0 if depth > _DEEP else 1)
        if high is not None:
            count = min(count, int(high))
        result: list[Any] = []
        for index in range(count):
            sub = prefix[index] if index < len(prefix) else items
            if sub is False:
                break
            # Distinct items by default: a uniqueItems array needs them, and they read better.
            result.append(self.value(sub, hint, depth + 1, variant + index))
        return result

    def string(self, schema: Mapping[str, Any], hint: str, depth: int, variant: int) -> Any:
        low = int(schema.get("minLength", 0))
        high = schema.get("maxLength")
        text = _FORMATS.get(str(schema.get("format", "")), f"example {_words(hint)}")
        if variant and str(schema.get("format", "")) not in _FORMATS:
            text = f"{text} {variant + 1}"
        pattern = schema.get("pattern")
        if isinstance(pattern, str) and not re.search(pattern, text):
            text = next((t for t in _PATTERN_TRIES if re.search(pattern, t)), text)
        while len(text) < low:
            text = f"{text} example"
        if high is not None and len(text) > int(high):
            text = text[: max(int(high), low)].rstrip() or "x" * max(int(high), low)
            text = text.ljust(low, "x")
        return text

    def integer(self, schema: Mapping[str, Any], hint: str, depth: int, variant: int) -> Any:
        low, high = _bounds(schema)
        low_int: int | None = None
        if low is not None:
            low_int = math.floor(low) + 1 if _exclusive_low(schema, low) else math.ceil(low)
        high_int: int | None = None
        if high is not None:
            high_int = math.ceil(high) - 1 if _exclusive_high(schema, high) else math.floor(high)
        step = schema.get("multipleOf")
        value = (low_int if low_int is not None else 1) + variant
        if step:
            value = int(math.ceil(value / step) * step)
        if high_int is not None and value > high_int:
            value = high_int
            if step:
                value = int(math.floor(value / step) * step)
        return value

    def number(self, schema: Mapping[str, Any], hint: str, depth: int, variant: int) -> Any:
        low, high = _bounds(schema)
        if low is not None and high is not None:
            value = low + (high - low) / (2 + variant)
        elif low is not None:
            value = low + 1 + variant
        elif high is not None:
            value = high - 1 - variant
        else:
            value = 0.5 + variant
        step = schema.get("multipleOf")
        if step:
            value = math.ceil(value / step) * step
            if high is not None and value > high:
                value = math.floor(high / step) * step
        return value

    def boolean(self, schema: Mapping[str, Any], hint: str, depth: int, variant: int) -> Any:
        return variant % 2 == 0

    def null(self, schema: Mapping[str, Any], hint: str, depth: int, variant: int) -> Any:
        return None


def _bounds(schema: Mapping[str, Any]) -> tuple[float | None, float | None]:
    lows = [_number(schema.get(k)) for k in ("minimum", "exclusiveMinimum")]
    highs = [_number(schema.get(k)) for k in ("maximum", "exclusiveMaximum")]
    low = [v for v in lows if v is not None]
    high = [v for v in highs if v is not None]
    return (max(low) if low else None, min(high) if high else None)


def _number(value: Any) -> float | None:
    # draft 4's boolean exclusiveMinimum is not a bound (and bool is an int in Python)
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


def _exclusive_low(schema: Mapping[str, Any], low: float) -> bool:
    return schema.get("exclusiveMinimum") == low and schema.get("minimum") != low


def _exclusive_high(schema: Mapping[str, Any], high: float) -> bool:
    return schema.get("exclusiveMaximum") == high and schema.get("maximum") != high


def _words(hint: str) -> str:
    """``paper_title`` / ``paperTitle`` → ``paper title``: readable example text."""
    spaced = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", " ", hint).replace("_", " ")
    return spaced.strip().lower() or "value"


_INFERRED: tuple[tuple[tuple[str, ...], str], ...] = (
    (("properties", "required", "additionalProperties", "minProperties"), "object"),
    (("items", "prefixItems", "minItems", "maxItems", "uniqueItems"), "array"),
    (("minLength", "maxLength", "pattern", "format"), "string"),
    (("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"), "number"),
)

_MAKERS = {
    "object": _Builder.object,
    "array": _Builder.array,
    "string": _Builder.string,
    "integer": _Builder.integer,
    "number": _Builder.number,
    "boolean": _Builder.boolean,
    "null": _Builder.null,
}
