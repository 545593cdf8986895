"""Query parameters an API route does not declare are refused, never silently ignored: a
typo (``?limt=5``) would otherwise answer as if the parameter had not been given.

What a route accepts is read from the route itself: the query parameters of its endpoint
and of every dependency it uses (``Depends``, the route's ``dependencies=``), each by the
name a caller writes (its alias), a query-parameter model counting as its fields. So
/docs, validation and this check always agree. ``api_router`` (``api._app``) puts
``refuse_undeclared_query`` on every route under /api/v1.

No route of the API reads free-form query parameters (``request.query_params``) today. One
that must would be exempted here, by name and with its reason, not by widening the check.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable

from fastapi import Request
from fastapi.dependencies.models import Dependant
from fastapi.responses import JSONResponse
from fastapi.routing import APIRoute
from pydantic import BaseModel

from scholarstream.api._errors import ErrorBody, FieldError, error_response

__all__ = [
    "UndeclaredQueryError",
    "declared_query_parameters",
    "refuse_undeclared_query",
    "undeclared_query_response",
]

_NAMED = 10
"""Unknown names listed in one message; the rest are counted."""
_NAME_CHARS = 60
"""A longer unknown name is shown cut (the whole name stays in ``fields``)."""


def declared_query_parameters(dependant: Dependant) -> tuple[str, ...]:
    """The query parameters a route (its ``dependant``) accepts, by the names a caller
    writes, in the order /docs lists them: the endpoint's, then its dependencies'."""
    names: dict[str, None] = {}
    _collect(dependant, names, set())
    return tuple(names)


def _collect(dependant: Dependant, names: dict[str, None], seen: set[int]) -> None:
    if id(dependant) in seen:
        return
    seen.add(id(dependant))
    for field in dependant.query_params:
        annotation = field.field_info.annotation
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            for name, info in annotation.model_fields.items():
                names.setdefault(info.alias or name, None)
        else:
            names.setdefault(field.alias, None)
    for sub in dependant.dependencies:
        _collect(sub, names, seen)


class UndeclaredQueryError(Exception):
    """A request named query parameters its route does not declare."""

    def __init__(self, unknown: Iterable[str], accepted: Iterable[str]) -> None:
        self.unknown = tuple(unknown)
        self.accepted = tuple(accepted)
        super().__init__(_message(self.unknown, self.accepted))


async def refuse_undeclared_query(request: Request) -> None:
    """The API router's dependency: raises ``UndeclaredQueryError`` when the query string
    names a parameter the matched route does not declare."""
    if not request.query_params:
        return
    route = request.scope.get("route")
    if not isinstance(route, APIRoute):
        return
    accepted = declared_query_parameters(route.dependant)
    unknown = [name for name in dict.fromkeys(request.query_params) if name not in accepted]
    if unknown:
        raise UndeclaredQueryError(unknown, accepted)


def _shown(name: str) -> str:
    return f"'{name}'" if len(name) <= _NAME_CHARS else f"'{name[:_NAME_CHARS]}…'"


def _message(unknown: tuple[str, ...], accepted: tuple[str, ...]) -> str:
    named = [_shown(name) for name in unknown[:_NAMED]]
    if len(unknown) > _NAMED:
        named.append(f"{len(unknown) - _NAMED} more")
    listed = named[0] if len(named) == 1 else f"{', '.join(named[:-1])} and {named[-1]}"
    noun = "parameter" if len(unknown) == 1 else "parameters"
    takes = (
        f"This endpoint accepts: {', '.join(accepted)}."
        if accepted
        else "This endpoint takes no query parameters."
    )
    return f"Unknown query {noun} {listed}. {takes}"


def _hint(unknown: tuple[str, ...], accepted: tuple[str, ...]) -> str:
    guesses = {
        name: guess[0]
        for name in unknown[:_NAMED]
        if (guess := difflib.get_close_matches(name, accepted, n=1, cutoff=0.6))
    }
    if len(unknown) == 1 and guesses:
        guessed = [f"'{guess}'" for guess in guesses.values()]
    else:
        guessed = [f"'{guess}' for {_shown(name)}" for name, guess in guesses.items()]
    fix = "Correct or remove the unknown names and send the request again; /docs lists "
    fix += "each endpoint's parameters."
    return f"Did you mean {', '.join(guessed)}? {fix}" if guessed else fix


async def undeclared_query_response(_: Request, exc: Exception) -> JSONResponse:
    """422 ``validation_error``, as for any other query parameter that is not valid: each
    unknown name in ``fields`` (``query.<name>``)."""
    assert isinstance(exc, UndeclaredQueryError)
    return error_response(
        422,
        ErrorBody(
            code="validation_error",
            message=_message(exc.unknown, exc.accepted),
            hint=_hint(exc.unknown, exc.accepted),
            fields=[
                FieldError(
                    field=f"query.{name}", message=f"{name} is not a parameter of this endpoint"
                )
                for name in exc.unknown
            ],
        ),
    )
