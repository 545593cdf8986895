"""ASGI middleware: request ids, and the loopback Host check of single-user mode."""

from __future__ import annotations

import ipaddress
import logging
import re
import time
import uuid

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from scholarstream.api.errors import ErrorBody, error_response
from scholarstream.logs import request_id_var

_VALID = re.compile(r"^[A-Za-z0-9._-]{1,64}$")
access_log = logging.getLogger("scholarstream.access")


class RequestIdMiddleware:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        incoming = dict(scope["headers"]).get(b"x-request-id", b"").decode("latin-1")
        request_id = incoming if _VALID.match(incoming) else uuid.uuid4().hex[:16]
        token = request_id_var.set(request_id)
        started = time.perf_counter()
        status = 500

        async def send_with_id(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
                message.setdefault("headers", [])
                message["headers"] = [*message["headers"], (b"x-request-id", request_id.encode())]
            await send(message)

        try:
            await self.app(scope, receive, send_with_id)
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


def is_loopback_host(host: str) -> bool:
    """'localhost', a loopback address, or either with a port ('[::1]:8000')."""
    if host.startswith("["):
        host = host[1:].split("]", 1)[0]
    elif host.count(":") == 1:
        host = host.rsplit(":", 1)[0]
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


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
