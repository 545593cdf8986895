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

log = logging.getLogger(__name__)


class FieldError(BaseModel):
    field: str
    message: str


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


def _field_name(loc: tuple[int | str, ...]) -> str:
    parts = [str(p) for p in loc]
    if parts and parts[0] in {"body", "query", "path", "header", "cookie"} and len(parts) > 1:
        parts = parts[1:] if parts[0] == "body" else parts
    return ".".join(parts)


async def _product_error(_: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, ScholarStreamError)
    if exc.http_status >= 500:
        log.error("%s: %s", exc.code, exc.message)
    return error_response(
        exc.http_status,
        ErrorBody(code=exc.code, message=exc.message, hint=exc.hint),
        exc.response_headers or None,
    )


async def _validation_error(_: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, RequestValidationError)
    fields = [
        FieldError(field=_field_name(tuple(e["loc"])), message=e["msg"]) for e in exc.errors()
    ]
    summary = "; ".join(f"{f.field}: {f.message}" for f in fields)
    return error_response(
        422,
        ErrorBody(
            code="validation_error",
            message=f"The request is not valid: {summary}",
            hint="Correct the named fields and send the request again.",
            fields=fields,
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
            hint="Try again; if it persists, report it with the request id "
            "(request_id, also in the X-Request-ID header).",
        ),
    )


def install_error_handlers(app: FastAPI) -> None:
    app.add_exception_handler(ScholarStreamError, _product_error)
    app.add_exception_handler(RequestValidationError, _validation_error)
    app.add_exception_handler(StarletteHTTPException, _http_error)
