"""How a command's failure is shown: two plain lines on stderr, or, when the command line
asks for ``--json``, one JSON object on stdout::

    {"error": {"code": "invalid_input", "message": "The question is empty.", "hint": "..."}}

Either way the exit code is non-zero. ``describe`` turns what a command raised into code,
message and hint: a product error as it is, a ``ValidationError`` in our words
(``scholarstream.validation_messages``), a usage error with Click's text; anything else is
a fault of ours (``None``: the caller decides). Nothing here imports pydantic or a feature
before a command fails (the start-up stays light)."""

from __future__ import annotations

import json
import sys
import traceback
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import typer
from rich.markup import escape

from scholarstream.cli.context import err_console
from scholarstream.errors import ConfigurationError, InvalidInputError, ScholarStreamError

WORDS = "scholarstream.words"
"""The key of the command line's words in the root context's ``meta`` (set by the root)."""

_OPTIONS_HINT = "Correct the options and run the command again."


@runtime_checkable
class _UsageProblem(Protocol):
    """Click's ``ClickException`` (a bad option, a missing argument): Typer vendors Click
    and does not export the class."""

    exit_code: int

    def format_message(self) -> str: ...


@dataclass(frozen=True)
class Failure:
    code: str
    message: str
    hint: str | None
    exit_code: int

    def as_json(self) -> str:
        return json.dumps(
            {"error": {"code": self.code, "message": self.message, "hint": self.hint}},
            ensure_ascii=False,
        )


INTERNAL = Failure(
    code="internal_error",
    message="Something went wrong in ScholarStream; the details are on stderr.",
    hint="Run the command again; if it fails again, report it with the details.",
    exit_code=1,
)


def describe(exc: BaseException) -> Failure | None:
    """Code, message, hint and exit code of a failure; ``None`` for a fault of ours."""
    if isinstance(exc, ScholarStreamError):
        usage = isinstance(exc, ConfigurationError | InvalidInputError)
        return Failure(exc.code, exc.message, exc.hint, 2 if usage else 1)
    if "pydantic" in sys.modules:  # else no ValidationError can have been raised
        from pydantic import ValidationError

        from scholarstream.validation_messages import explain, sentence

        if isinstance(exc, ValidationError):
            # Options that passed Typer's checks but not a model's (--year-from after
            # --year-to), in the words of the API's 422.
            message = sentence(explain(exc, whole="the options"))
            return Failure("invalid_input", message, _OPTIONS_HINT, 2)
    if isinstance(exc, _UsageProblem):  # typer.Exit has no message: not one
        return Failure(
            "usage_error",
            exc.format_message(),
            "Run the command with --help for its arguments and options.",
            exc.exit_code,
        )
    return None


_JSON_OUTPUT: ContextVar[bool] = ContextVar("scholarstream_cli_json", default=False)


def json_output() -> bool:
    """Does the command running now print JSON (``--json``)?"""
    return _JSON_OUTPUT.get()


def _asks_for_json(words: list[str]) -> bool:
    if "--" in words:
        words = words[: words.index("--")]
    return "--json" in words


@contextmanager
def failures_shown(words: list[str]) -> Iterator[None]:
    """Around a command (the root group's ``invoke``): with ``--json`` among ``words``,
    any failure becomes the JSON error object and its exit code, whatever the command;
    without, failures go on to ``main`` (two plain lines), as the tests' runner sees them."""
    as_json = _asks_for_json(words)
    token = _JSON_OUTPUT.set(as_json)
    try:
        yield
    except (typer.Exit, typer.Abort):
        raise
    except Exception as exc:
        if not as_json:
            raise
        failure = describe(exc)
        if failure is None:
            traceback.print_exception(exc, file=sys.stderr)
            failure = INTERNAL
        show(failure, as_json=True)
        raise typer.Exit(failure.exit_code) from None
    finally:
        _JSON_OUTPUT.reset(token)


def show(failure: Failure, *, as_json: bool, also: str | None = None) -> None:
    """The failure as one JSON object on stdout, or as plain lines on stderr. ``also``: a
    last sentence (where an interrupted research is stored)."""
    if as_json:
        hint = " ".join(part for part in (failure.hint, also) if part) or None
        typer.echo(Failure(failure.code, failure.message, hint, failure.exit_code).as_json())
        return
    err_console.print(f"[bold red]Error:[/] {escape(failure.message)}", highlight=False)
    if failure.hint:
        err_console.print(f"[yellow]What to do:[/] {escape(failure.hint)}", highlight=False)
    if also:
        err_console.print(escape(also), highlight=False)
