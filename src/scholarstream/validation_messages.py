"""Validation errors in the product's words, for every interface (API, CLI, settings).

pydantic's own text ("Input should be a valid dictionary or object to extract fields
from", "Value error, ...", links to errors.pydantic.dev) and its field paths
(``body.messages.18``) never reach a user. Each error becomes a ``Problem``:

- ``field``: the path, machine-readable as before (``messages.18.text``, ``query.limit``);
- ``label``: the same path for a person (``messages, item 19`` then ``text``, the names
  joined by U+203A, the single right-pointing angle quotation mark);
- ``text``: what is wrong, built from the error's ``type`` and ``ctx`` by ``MESSAGES``,
  a table from pydantic's error type to a message builder ("must be a whole number").

Our own validators' messages (a ``ValueError``, an ``AssertionError``, a
``PydanticCustomError`` of a type pydantic does not define) are shown as they were
written, without pydantic's "Value error, " prefix: write them to be read after the
field's label ("message: it is empty: type a question or a /command"). A type of
pydantic's that ``MESSAGES`` does not know reads "is not valid", never pydantic's text.

This module imports nothing of the product, so that any layer may use it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final, get_args

from pydantic_core.core_schema import ErrorType

if TYPE_CHECKING:
    from pydantic import ValidationError

__all__ = [
    "MESSAGES",
    "REQUEST_LOCATIONS",
    "MessageBuilder",
    "Problem",
    "describe_errors",
    "explain",
    "field_label",
    "plain_text",
    "sentence",
    "summarize",
]

Error = Mapping[str, Any]
"""One of ``ValidationError.errors()`` (pydantic's ``ErrorDetails``): type, loc, msg, ctx."""

MessageBuilder = Callable[[Error], str]
"""What is wrong, after the field's label: "must be a whole number", "is required"."""

REQUEST_LOCATIONS: Final = ("body", "query", "path", "header", "cookie")
"""The first part of the path of an error in a request (FastAPI's ``loc``)."""

_PYDANTIC_TYPES: Final = frozenset(get_args(ErrorType))
_OWN_TEXT: Final = frozenset({"value_error", "assertion_error"})
_BODY = "the request body"
_THEN = " \N{SINGLE RIGHT-POINTING ANGLE QUOTATION MARK} "
"""Between the names of a nested field (``context``, then ``current_page``)."""
_PREDICATE = re.compile(r"(?:must|is|are|has|have|needs?|cannot|can only) ")
_SCHEMA_TAG = re.compile(r"[\[\](),'\" ]|^(?:function|json-or-python|lax-or-strict|tagged-union)")


# --- the messages --------------------------------------------------------------------------


def _ctx(error: Error) -> Mapping[str, Any]:
    ctx = error.get("ctx")
    return ctx if isinstance(ctx, Mapping) else {}


def _fixed(text: str) -> MessageBuilder:
    return lambda _error: text


def _count(n: object, one: str, many: str) -> str:
    return f"{n} {one if str(n) == '1' else many}"


def _choices(expected: object) -> str:
    """pydantic's ``expected`` ("'a', 'b' or 'c'", or "1, 2 or 3") as "a, b, c"."""
    text = str(expected)
    quoted = re.findall(r"'((?:[^'\\]|\\.)*)'", text)
    values = quoted or [v for v in re.split(r", | or ", text) if v]
    return ", ".join(values)


def _own_text(error: Error) -> str:
    """The message of our own validator: the exception's text, without pydantic's prefix."""
    cause = _ctx(error).get("error")
    text = str(cause) if cause is not None else str(error.get("msg", ""))
    for prefix in ("Value error, ", "Assertion failed, "):
        text = text.removeprefix(prefix)
    return text.strip() or "is not valid"


def _text_length(bound: str, word: str) -> MessageBuilder:
    def build(error: Error) -> str:
        n = _ctx(error).get(f"{bound}_length")
        if bound == "min" and str(n) == "1":
            return "must not be empty"
        return (
            f"must be {'at least' if bound == 'min' else 'at most'} {_count(n, word, word + 's')}"
        )

    return build


def _size(bound: str) -> MessageBuilder:
    def build(error: Error) -> str:
        ctx = _ctx(error)
        n = ctx.get(f"{bound}_length")
        one, many = (
            ("entry", "entries") if ctx.get("field_type") == "Dictionary" else ("item", "items")
        )
        return f"must have {'at least' if bound == 'min' else 'at most'} {_count(n, one, many)}"

    return build


def _bound(words: str, key: str) -> MessageBuilder:
    return lambda error: f"must be {words} {_ctx(error).get(key)}"


def _json_invalid(error: Error) -> str:
    problem = str(_ctx(error).get("error", "")).strip()
    if not problem:
        return "is not valid JSON"
    loc = error.get("loc", ())
    where = f" (at character {loc[-1]})" if loc and isinstance(loc[-1], int) else ""
    return f"is not valid JSON: {problem[:1].lower()}{problem[1:]}{where}"


def _url_scheme(error: Error) -> str:
    schemes = _choices(_ctx(error).get("expected_schemes", ""))
    return f"must be a web address starting with {schemes}" if schemes else _WEB_ADDRESS


def _tags(error: Error) -> str:
    return f"must be one of: {_choices(_ctx(error).get('expected_tags', ''))}"


def _each(types: Iterable[str], builder: MessageBuilder) -> dict[str, MessageBuilder]:
    return dict.fromkeys(types, builder)


_WEB_ADDRESS = "must be a web address (https://...)"
_DATE = "must be a date like 2024-05-31"
_DATETIME = "must be a date like 2024-05-31, or a date and time like 2024-05-31T14:30:00Z"

MESSAGES: Final[Mapping[str, MessageBuilder]] = {
    **_each(
        ("missing", "missing_argument", "missing_keyword_only_argument"),
        _fixed("is required"),
    ),
    "missing_positional_only_argument": _fixed("is required"),
    **_each(
        ("extra_forbidden", "unexpected_keyword_argument", "no_such_attribute"),
        _fixed("is not a field of this request; remove it"),
    ),
    "string_type": _fixed("must be text"),
    "string_unicode": _fixed("must be text in UTF-8"),
    "string_too_short": _text_length("min", "character"),
    "string_too_long": _text_length("max", "character"),
    "string_pattern_mismatch": _fixed("is not in the expected form"),
    "string_not_ascii": _fixed("must use ASCII characters only"),
    **_each(("int_type", "int_parsing", "int_from_float"), _fixed("must be a whole number")),
    "int_parsing_size": _fixed("is too large a number"),
    **_each(
        ("float_type", "float_parsing", "decimal_type", "decimal_parsing"),
        _fixed("must be a number"),
    ),
    "finite_number": _fixed("must be a finite number"),
    **_each(
        ("decimal_max_digits", "decimal_max_places", "decimal_whole_digits"),
        _fixed("has too many digits"),
    ),
    "greater_than": _bound("greater than", "gt"),
    "greater_than_equal": _bound("at least", "ge"),
    "less_than": _bound("less than", "lt"),
    "less_than_equal": _bound("at most", "le"),
    "multiple_of": _bound("a multiple of", "multiple_of"),
    **_each(("bool_type", "bool_parsing"), _fixed("must be true or false")),
    **_each(
        ("uuid_type", "uuid_parsing", "uuid_version"),
        _fixed("must be an id as returned by the API"),
    ),
    **_each(
        (
            "dict_type",
            "model_type",
            "model_attributes_type",
            "mapping_type",
            "dataclass_type",
            "dataclass_exact_type",
            "arguments_type",
        ),
        _fixed("must be a JSON object"),
    ),
    **_each(
        ("list_type", "tuple_type", "set_type", "frozen_set_type", "iterable_type", "deque_type"),
        _fixed("must be a list"),
    ),
    "too_short": _size("min"),
    "too_long": _size("max"),
    **_each(
        ("literal_error", "enum"), lambda e: f"must be one of: {_choices(_ctx(e).get('expected'))}"
    ),
    "union_tag_invalid": _tags,
    "union_tag_not_found": _fixed("is required"),
    "json_invalid": _json_invalid,
    "json_type": _fixed("must be JSON text"),
    **_each(
        ("date_type", "date_parsing", "date_from_datetime_parsing", "date_from_datetime_inexact"),
        _fixed(_DATE),
    ),
    **_each(
        (
            "datetime_type",
            "datetime_parsing",
            "datetime_from_date_parsing",
            "datetime_object_invalid",
        ),
        _fixed(_DATETIME),
    ),
    **_each(("date_past", "datetime_past"), _fixed("must be in the past")),
    **_each(("date_future", "datetime_future"), _fixed("must be in the future")),
    **_each(("time_type", "time_parsing"), _fixed("must be a time like 14:30")),
    "timezone_naive": _fixed("must be a time without a time zone"),
    "timezone_aware": _fixed("must include a time zone, like 2024-05-31T14:30:00Z"),
    "timezone_offset": _fixed("has a time zone that is not allowed here"),
    **_each(("time_delta_type", "time_delta_parsing"), _fixed("must be a duration in seconds")),
    **_each(("url_type", "url_parsing", "url_syntax_violation"), _fixed(_WEB_ADDRESS)),
    "url_scheme": _url_scheme,
    "url_too_long": _bound("a web address of at most", "max_length"),
    "none_required": _fixed("must be null"),
    **_each(("recursion_loop", "recursion_depth_exceeded"), _fixed("is nested too deeply")),
    **_each(("frozen_field", "frozen_instance"), _fixed("cannot be changed")),
    **_each(_OWN_TEXT, _own_text),
}


def plain_text(error: Error, overrides: Mapping[str, MessageBuilder] | None = None) -> str:
    """What is wrong with one error's value, in our words: ``overrides`` (a caller's own
    wording of a type), ``MESSAGES``, our own validator's message, or "is not valid"."""
    kind = str(error.get("type", ""))
    builder = (overrides or {}).get(kind) or MESSAGES.get(kind)
    if builder is not None:
        return builder(error)
    if kind not in _PYDANTIC_TYPES:
        # A PydanticCustomError of ours ("unknown_table"): our text, as written.
        return _own_text(error)
    return "is not valid"


# --- the field's label ---------------------------------------------------------------------


def _is_tag(part: str | int, node: object, last: bool, missing: bool) -> bool:
    """Is this part of the path pydantic's name of a union member (``str``,
    ``function-after[...]``, a model's class name, the tag of a tagged union) rather than
    a field or an item? ``node``: the input at this point of the path, when known."""
    if isinstance(part, int):
        return False
    if isinstance(node, Mapping):
        if part in node or (last and missing):
            return False
        tags = {value for value in node.values() if isinstance(value, str)}
        return part in tags or _looks_like_a_member(part)
    if node is not _UNKNOWN:
        return True  # a name after a text, a number or a list: not the input's
    return _looks_like_a_member(part)


def _looks_like_a_member(part: str) -> bool:
    return bool(_SCHEMA_TAG.search(part)) or part in _SCALAR_TAGS or part[:1].isupper()


_UNKNOWN = object()
_SCALAR_TAGS: Final = frozenset(
    {"str", "int", "float", "bool", "bytes", "list", "dict", "set", "tuple", "none", "nullable"}
)


def _real_path(error: Error, root: object) -> tuple[tuple[str | int, ...], list[str]]:
    """The path of the error without pydantic's union members, and the members dropped."""
    loc: tuple[str | int, ...] = tuple(error.get("loc", ()))
    missing = error.get("type") in {"missing", "union_tag_not_found"}
    node: object = root
    kept: list[str | int] = []
    dropped: list[str] = []
    for i, part in enumerate(loc):
        if _is_tag(part, node, i == len(loc) - 1, missing):
            dropped.append(str(part))
            continue
        kept.append(part)
        node = _child(node, part)
    return tuple(kept), dropped


def _child(node: object, part: str | int) -> object:
    """The input at ``part`` of ``node``, or ``_UNKNOWN``."""
    if isinstance(node, Mapping) and part in node:
        return node[part]
    if isinstance(node, list) and isinstance(part, int) and 0 <= part < len(node):
        return node[part]
    return _UNKNOWN


def field_label(path: Sequence[str | int], whole: str = _BODY, then: str = _THEN) -> str:
    """A field's path as a person reads it: ``("messages", 18, "text")`` as ``messages,
    item 19`` and ``text`` joined by ``then``; ``whole`` for no path at all."""
    parts: list[str] = []
    for part in path:
        if isinstance(part, int):
            item = f"item {part + 1}"
            parts[-1:] = [f"{parts[-1]}, {item}"] if parts else [item]
        else:
            parts.append(part)
    return then.join(parts) if parts else whole


# --- problems ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Problem:
    field: str
    """Machine-readable: the dotted path (``messages.18.text``; ``body`` for the whole body)."""
    label: str
    """For a person: ``field_label`` of the path (``messages, item 19``, then ``text``)."""
    text: str
    """What is wrong: "must be a whole number", or our own validator's message."""
    own: bool = False
    """``text`` is a sentence of ours, shown after the label and a colon."""
    whole: bool = False
    """The problem is the whole input's (the request body, the settings), not a field's."""

    @property
    def message(self) -> str:
        """The label and what is wrong: "expires_days must be at least 1", "the request
        body must be a JSON object", or our own sentence about the whole input."""
        if self.whole and self.own:
            return self.text
        if self.own and not _PREDICATE.match(self.text):
            return f"{self.label}: {self.text}"
        return f"{self.label} {self.text}"


def sentence(text: str) -> str:
    """``text`` as a sentence of its own: a capital, unless it begins with a field's name
    ("year_from is after year_to"), and a full stop."""
    first = text.split(" ", 1)[0]
    if "_" not in first and "." not in first:
        text = text[:1].upper() + text[1:]
    return text if text.endswith((".", "?", "!")) else f"{text}."


def describe_errors(
    errors: Iterable[Error],
    *,
    request: bool = False,
    body: object = _UNKNOWN,
    whole: str | None = None,
    then: str = _THEN,
    overrides: Mapping[str, MessageBuilder] | None = None,
) -> list[Problem]:
    """Each error as a ``Problem``, in order; the errors of one field that are the union's
    members ("must be text", "must be a list") become one ("must be text or a list").

    ``request``: the paths begin with FastAPI's location (``body``, ``query``...), which
    the label drops. ``body``: the request's JSON body (or the validated input) when known,
    to tell a field from pydantic's name of a union member. ``whole``: the label of the
    input itself ("the settings"; by default "the request body" for a request, else "the
    input"). ``then``: between nested names (``"."`` where the dotted name is what the user
    writes, as for a setting)."""
    whole = whole or (_BODY if request else "the input")
    found: dict[str, list[tuple[Problem, bool]]] = {}
    for error in errors:
        kind = str(error.get("type", ""))
        loc: tuple[str | int, ...] = tuple(error.get("loc", ()))
        where: tuple[str | int, ...] = ()
        if request and loc and loc[0] in REQUEST_LOCATIONS:
            where, loc = loc[:1], loc[1:]
        if kind == "json_invalid":
            loc = ()
        root: object = body if where in {(), ("body",)} else _UNKNOWN
        path, dropped = _real_path({**error, "loc": loc}, root)
        if where and where != ("body",):
            location = str(where[0])
            field = ".".join((location, *map(str, path)))
            label = field_label(path, then=then) if path else location
            if location == "header":
                label = f"header {label}"
        else:
            field = ".".join(map(str, path)) or "body"
            label = field_label(path, whole, then)
        if kind in {"union_tag_invalid", "union_tag_not_found"}:
            discriminator = str(_ctx(error).get("discriminator", "")).strip("'")
            if discriminator.isidentifier():
                label = f"{label}{then}{discriminator}" if path else discriminator
                field = f"{field}.{discriminator}" if path else discriminator
        own = kind in _OWN_TEXT or (kind not in _PYDANTIC_TYPES and kind not in (overrides or {}))
        at_root = not path and where in {(), ("body",)}
        problem = Problem(field, label, plain_text(error, overrides), own, at_root)
        found.setdefault(field, []).append((problem, bool(dropped)))
    return [_one(problems) for problems in found.values()]


def _one(problems: list[tuple[Problem, bool]]) -> Problem:
    """The problems of one field as one: a union's members as alternatives ("must be text,
    a number or a list"), anything else one after the other."""
    first = problems[0][0]
    texts = list(dict.fromkeys(problem.text for problem, _ in problems))
    if len(texts) == 1:
        return first
    own = all(problem.own for problem, _ in problems)
    head = "must be "
    if any(member for _, member in problems) and all(t.startswith(head) for t in texts):
        kinds = [t.removeprefix(head) for t in texts]
        if "a number" in kinds and "a whole number" in kinds:
            kinds.remove("a whole number")
        text = head + (kinds[0] if len(kinds) == 1 else f"{', '.join(kinds[:-1])} or {kinds[-1]}")
        return Problem(first.field, first.label, text, own, first.whole)
    return Problem(first.field, first.label, "; ".join(texts), own, first.whole)


def summarize(problems: Sequence[Problem]) -> str:
    """All the problems in one line, separated by semicolons."""
    return "; ".join(problem.message for problem in problems)


def explain(
    exc: ValidationError,
    *,
    whole: str = "the input",
    then: str = _THEN,
    overrides: Mapping[str, MessageBuilder] | None = None,
) -> str:
    """A ``ValidationError`` raised outside a request (a model built from options, the
    settings, a stored record) in our words: "limit must be at most 500; query is required"."""
    problems = describe_errors(exc.errors(), whole=whole, then=then, overrides=overrides)
    return summarize(problems)
