"""ASGI middleware around the whole app (outermost first):

- ``SecurityHeadersMiddleware``: no page or answer may be framed (``frame-ancestors
  'none'``, ``X-Frame-Options: DENY``) and none is sniffed; a response's own stricter
  Content-Security-Policy (the share page's) is kept, with ``frame-ancestors`` added if
  it lacks one.
- ``RequestIdMiddleware``: the request id on every answer and log line, and the 500 of an
  unhandled error (with that id), answered on a connection that stays usable.
- ``LoopbackHostMiddleware``: the strict Host check of single-user mode.
- ``RequestInputMiddleware`` (``api._input_guard``): body size limits and NUL characters.
"""

from __future__ import annotations

import logging
import re
import time
import uuid

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from scholarstream.api._errors import ErrorBody, error_response, internal_error_response
from scholarstream.api._input_guard import RequestInputMiddleware
from scholarstream.logs import request_id_var
from scholarstream.public_addresses import is_loopback_host

_VALID = re.compile(r"[A-Za-z0-9._-]{1,64}")
access_log = logging.getLogger("scholarstream.access")
log = logging.getLogger(__name__)

FRAME_ANCESTORS = "frame-ancestors 'none'"
SECURITY_HEADERS: tuple[tuple[bytes, bytes], ...] = (
    (b"x-frame-options", b"DENY"),
    (b"x-content-type-options", b"nosniff"),
)


class SecurityHeadersMiddleware:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_secured(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = with_security_headers(list(message.get("headers", [])))
            await send(message)

        await self.app(scope, receive, send_secured)


def with_security_headers(headers: list[tuple[bytes, bytes]]) -> list[tuple[bytes, bytes]]:
    names = {name.lower() for name, _ in headers}
    added = [(name, value) for name, value in SECURITY_HEADERS if name not in names]
    if b"content-security-policy" not in names:
        return [*headers, *added, (b"content-security-policy", FRAME_ANCESTORS.encode())]
    secured = []
    for name, value in headers:
        if name.lower() == b"content-security-policy" and b"frame-ancestors" not in value:
            value = value.rstrip(b"; ") + b"; " + FRAME_ANCESTORS.encode()
        secured.append((name, value))
    return [*secured, *added]


class RequestIdMiddleware:
    """Every answer carries ``X-Request-ID`` (the caller's, if well formed, else a new one),
    and so does every log line made while serving it. An error no handler turned into an
    answer is logged and answered here, 500 ``internal_error`` with the id, so the server
    (uvicorn) never sees it: it would drop the keep-alive connection without a word."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        incoming = dict(scope["headers"]).get(b"x-request-id", b"").decode("latin-1")
        request_id = incoming if _VALID.fullmatch(incoming) else uuid.uuid4().hex[:16]
        token = request_id_var.set(request_id)
        started = time.perf_counter()
        status = 500
        response_started = response_complete = False

        async def send_with_id(message: Message) -> None:
            nonlocal status, response_started, response_complete
            if message["type"] == "http.response.start":
                status = message["status"]
                response_started = True
                message["headers"] = [
                    *message.get("headers", []),
                    (b"x-request-id", request_id.encode()),
                ]
            elif message["type"] == "http.response.body" and not message.get("more_body"):
                response_complete = True
            await send(message)

        try:
            await self.app(scope, receive, send_with_id)
        except Exception as exc:
            if not response_started:
                log.exception("unhandled error", exc_info=exc)
                await internal_error_response()(scope, receive, send_with_id)
            elif response_complete:
                # A background task after the answer: the client has what it asked for.
                log.exception("unhandled error after the response was sent", exc_info=exc)
            else:
                # Half an answer: only closing the connection tells the client it is cut.
                raise
        finally:
            # The path only: query strings may carry what users typed.
            access_log.info(
                "%s %s %d %.1fms",
                scope["method"],
                scope["path"],
                status,
                (time.perf_counter() - started) * 1000,
            )
            request_id_var.reset(token)


class LoopbackHostMiddleware:
    """Single-user mode has no login and listens on loopback only; refusing other Host
    names stops DNS-rebinding pages from reaching it through the user's browser.
    ``public_paths`` are meant for anyone (shared reports behind the user's reverse proxy):
    they are served under any name."""

    def __init__(self, app: ASGIApp, *, public_paths: tuple[str, ...] = ()) -> None:
        self.app = app
        self.public_paths = public_paths

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and not scope["path"].startswith(self.public_paths):
            host = dict(scope["headers"]).get(b"host", b"").decode("latin-1")
            if not is_loopback_host(host):
                body = ErrorBody(
                    code="invalid_host",
                    message=f"Host {host!r} is not served in single-user mode.",
                    hint="Open ScholarStream at http://127.0.0.1:<port>, or enable multi-user "
                    "mode to serve it under another name.",
                )
                await error_response(400, body)(scope, receive, send)
                return
        await self.app(scope, receive, send)


__all__ = [
    "LoopbackHostMiddleware",
    "RequestIdMiddleware",
    "RequestInputMiddleware",
    "SecurityHeadersMiddleware",
]
