"""The development provider's failure switches (``--mode NAME[=VALUE]``): a server without
tool support, one that refuses JSON schemas, a model that writes tool calls as text or
breaks its JSON, one that never stops or starts late, a small context window.

Each mode is registered with its parser, so the CLI's help, the error for a mistyped name
and ``parse_modes`` read one table."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from typing import Any, get_args

from scholarstream.devtools._replies import InvalidKind, ToolTextStyle


@dataclass(frozen=True)
class Modes:
    """The switches in force (for the whole server, or for one model)."""

    no_tools: bool = False
    """A request with ``tools`` gets llama-server's HTTP 500 "tools param requires --jinja flag"."""
    no_json_schema: bool = False
    """A request with ``response_format`` json_schema gets an OpenAI-style HTTP 400."""
    context_limit: int | None = None
    """A prompt of more (rough) tokens than this gets llama-server's context-size HTTP 400;
    0: every request."""
    tool_as_text: ToolTextStyle | None = None
    """Tool calls are written as text in this style instead of being made."""
    invalid_json: InvalidKind | None = None
    """Structured answers the server makes up are broken this way."""
    endless: float | None = None
    """Answers never end: a token every this many seconds until the client leaves."""
    slow: float | None = None
    """Every answer starts after this many seconds."""


@dataclass(frozen=True)
class ModeSpec:
    name: str
    help: str
    value_help: str | None
    apply: Callable[[Modes, str | None], Modes]


MODES: dict[str, ModeSpec] = {}


def _register(spec: ModeSpec) -> None:
    MODES[spec.name] = spec


def _flag(field: str) -> Callable[[Modes, str | None], Modes]:
    def apply(modes: Modes, value: str | None) -> Modes:
        if value is not None:
            raise ValueError("takes no value")
        changes: dict[str, Any] = {field: True}
        return replace(modes, **changes)

    return apply


def _seconds(field: str, default: float) -> Callable[[Modes, str | None], Modes]:
    def apply(modes: Modes, value: str | None) -> Modes:
        seconds = default if value is None else float(value)
        if not seconds >= 0:
            raise ValueError("must be a number of seconds, 0 or more")
        changes: dict[str, Any] = {field: seconds}
        return replace(modes, **changes)

    return apply


def _context(modes: Modes, value: str | None) -> Modes:
    limit = 0 if value is None else int(value)
    if limit < 0:
        raise ValueError("must be a number of tokens, 0 or more")
    return replace(modes, context_limit=limit)


def _tool_text(modes: Modes, value: str | None) -> Modes:
    styles: tuple[ToolTextStyle, ...] = get_args(ToolTextStyle)
    style = value or "bare"
    for known in styles:
        if known == style:
            return replace(modes, tool_as_text=known)
    raise ValueError(f"must be one of {', '.join(styles)}")


def _invalid(modes: Modes, value: str | None) -> Modes:
    kinds: tuple[InvalidKind, ...] = get_args(InvalidKind)
    kind = value or "syntax"
    for known in kinds:
        if known == kind:
            return replace(modes, invalid_json=known)
    raise ValueError(f"must be one of {', '.join(kinds)}")


def _down(modes: Modes, value: str | None) -> Modes:
    raise ValueError(
        "is a switch of the command line only: there it starts nothing, so the product's "
        "requests are refused"
    )


_register(
    ModeSpec(
        "no-tools",
        'a request with tools gets HTTP 500 "tools param requires --jinja flag" '
        "(llama-server started without --jinja)",
        None,
        _flag("no_tools"),
    )
)
_register(
    ModeSpec(
        "no-json-schema",
        "a request with response_format json_schema gets an OpenAI-style HTTP 400",
        None,
        _flag("no_json_schema"),
    )
)
_register(
    ModeSpec(
        "tool-as-text",
        "the model writes tool calls as text instead of calling "
        "(bare JSON, ```json fence, or <tool_call> tags)",
        "bare|fenced|tagged",
        _tool_text,
    )
)
_register(
    ModeSpec(
        "invalid-json",
        "structured answers are not JSON (syntax) or do not match the schema (schema)",
        "syntax|schema",
        _invalid,
    )
)
_register(
    ModeSpec(
        "endless",
        "answers never end: a token every SECONDS (default 0.5) until the client leaves",
        "SECONDS",
        _seconds("endless", 0.5),
    )
)
_register(
    ModeSpec(
        "slow",
        "every answer starts after SECONDS (default 5)",
        "SECONDS",
        _seconds("slow", 5.0),
    )
)
_register(
    ModeSpec(
        "context-too-long",
        "a prompt over TOKENS (default 0: every prompt) gets llama-server's context-size HTTP 400",
        "TOKENS",
        _context,
    )
)
_register(
    ModeSpec(
        "down",
        "start nothing: print the settings and exit, so the product meets a refused connection",
        None,
        _down,
    )
)


def parse_modes(texts: Iterable[str], modes: Modes | None = None) -> Modes:
    """``["no-tools", "slow=2"]`` (or ``"no-tools,slow=2"``) → ``Modes``; a ValueError
    whose message names the mode at fault and the modes there are."""
    result = modes or Modes()
    for text in texts:
        for part in (p.strip() for p in text.split(",")):
            if not part:
                continue
            name, _, raw = part.partition("=")
            spec = MODES.get(name.strip().lower())
            if spec is None:
                known = ", ".join(MODES)
                raise ValueError(f"unknown mode {name!r}: the modes are {known}")
            value = raw.strip() if "=" in part else None
            try:
                result = spec.apply(result, value)
            except ValueError as error:
                raise ValueError(f"mode {spec.name!r} {_reason(error)}") from None
    return result


def _reason(error: ValueError) -> str:
    text = str(error)
    # float("x") / int("x") say "could not convert ..."; say what is expected instead
    if text.startswith(("could not convert", "invalid literal")):
        return "needs a number"
    return text
