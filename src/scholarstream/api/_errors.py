"""The one error body of the API, and the handlers that produce it for every 4xx/5xx."""

from __future__ import annotations

import logging
from collections.abc import Mapping

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import BaseModel
from starlette.exceptions import HTTPException as StarletteHTTPException

from scholarstream.errors import ScholarStreamError
from scholarstream.logs import request_id_var
from scholarstream.validation_messages import describe_errors, sentence, summarize

log = logging.getLogger(__name__)


class FieldError(BaseModel):
    field: str
    """The field's path, for a program: ``messages.18.text``, ``query.limit``, ``body``."""
    message: str
    """What is wrong with it, for a person, the field named as a person reads it ("messages,
    item 19", then "text", joined by U+203A: ``scholarstream.validation_messages``)."""


class ErrorBody(BaseModel):
    code: str
    message: str
    hint: str | None = None
    fields: list[FieldError] = []
    request_id: str | None = None


ERROR_RESPONSES: dict[int | str, dict[str, object]] = {
    "4XX": {
        "model": ErrorBody,
        "description": "The request cannot be served; see message and hint.",
    },
    "5XX": {"model": ErrorBody, "description": "Server-side failure; see message and hint."},
}

_STATUS_CODES = {
    400: "bad_request",
    401: "not_authenticated",
    403: "permission_denied",
    404: "not_found",
    405: "method_not_allowed",
    409: "conflict",
    413: "too_large",
    415: "unsupported_media_type",
    429: "rate_limited",
}


_HTTP_HINTS = {
    # Raised by FastAPI for a body it cannot read at all (not UTF-8, a broken multipart).
    400: "Send the body as the operation's media type in /docs (JSON in UTF-8, or a "
    "multipart form for uploads).",
    404: "Check the path against /docs.",
    405: "Check the path against /docs.",
}


def error_response(
    status: int, body: ErrorBody, headers: Mapping[str, str] | None = None
) -> JSONResponse:
    body.request_id = request_id_var.get()
    return JSONResponse(body.model_dump(mode="json"), status_code=status, headers=headers)


async def _product_error(_: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, ScholarStreamError)
    if exc.http_status >= 500:
        log.error("%s: %s", exc.code, exc.message)
    return error_response(
        exc.http_status,
        ErrorBody(code=exc.code, message=exc.message, hint=exc.hint),
        exc.response_headers or None,
    )


_FIELDS_HINT = "Correct the named fields and send the request again."
_BODY_HINT = "Send the request body as a JSON object, as /docs shows for this operation."


async def _validation_error(_: Request, exc: Exception) -> JSONResponse:
    """422 in our words (``scholarstream.validation_messages``): never pydantic's text, its
    links or its paths; each field named for a person in ``message``, for a program in
    ``field``."""
    assert isinstance(exc, RequestValidationError)
    problems = describe_errors(exc.errors(), request=True, body=exc.body)
    whole = [problem for problem in problems if problem.whole]
    if whole and len(problems) == 1:
        message = sentence(problems[0].message)
    else:
        message = f"The request is not valid: {summarize(problems)}."
    return error_response(
        422,
        ErrorBody(
            code="validation_error",
            message=message,
            hint=_BODY_HINT if whole and not whole[0].own else _FIELDS_HINT,
            fields=[FieldError(field=p.field, message=p.message) for p in problems],
        ),
    )


async def _http_error(_: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, StarletteHTTPException)
    code = _STATUS_CODES.get(exc.status_code, "error")
    message = str(exc.detail) if exc.detail else code.replace("_", " ")
    hint = _HTTP_HINTS.get(exc.status_code)
    return error_response(
        exc.status_code, ErrorBody(code=code, message=message, hint=hint), exc.headers
    )


def internal_error_response() -> JSONResponse:
    """The answer to an error nothing else handled (see ``middleware.RequestIdMiddleware``,
    which logs it): no detail of the failure, only the request id to report."""
    return error_response(
        500,
        ErrorBody(
            code="internal_error",
            message="Something went wrong on the server.",
            hint="Try again; if it persists, report it with its request id, "
            f"{request_id_var.get()}.",
        ),
    )


def install_error_handlers(app: FastAPI) -> None:
    app.add_exception_handler(ScholarStreamError, _product_error)
    app.add_exception_handler(RequestValidationError, _validation_error)
    app.add_exception_handler(StarletteHTTPException, _http_error)
