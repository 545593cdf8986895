"""What every request must be before any route reads it (issue 20):

- a body no larger than its route's limit: a declared size (Content-Length) over it is
  refused at once, unread; a body is counted as it arrives (a chunked body has no
  declared size), and refused as soon as it passes the limit. 413 ``too_large``, with
  ``Connection: close`` (the rest of the body is never read);
- no NUL character (U+0000) in any text: the path, the query string, a JSON or a form
  body (urlencoded, or the text fields and file names of a multipart form). PostgreSQL
  cannot store it; 422 ``validation_error`` naming the field.

A JSON or urlencoded body (small by the limit) is read here whole, checked, and handed to
the app as it came. Any other body (an upload) is only watched as the app reads it: it is
never held here, and if it breaks a rule the app's answer is replaced by the refusal.
"""

from __future__ import annotations

import email.message
import json
from collections.abc import Iterator, Mapping
from typing import Any
from urllib.parse import parse_qsl

from python_multipart.exceptions import MultipartParseError
from python_multipart.multipart import MultipartParser, parse_options_header
from starlette.datastructures import Headers
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from scholarstream.api._errors import ErrorBody, FieldError, error_response
from scholarstream.validation_messages import field_label

NUL = "\x00"
_MAX_NAMED_FIELDS = 20


class _BodyRefusedError(Exception):
    """Raised into the app by ``receive`` when the body it is reading breaks a rule."""


def too_large(limit: int, *, upload: bool) -> JSONResponse:
    hint = (
        "Split the file into smaller files and import each, or ask the server's "
        "administrator to raise the import limit."
        if upload
        else "Send a smaller request; no operation of this API needs a body this large."
    )
    body = ErrorBody(
        code="too_large",
        message=f"The request body is larger than the {limit:,} bytes accepted here.",
        hint=hint,
    )
    return error_response(413, body, {"Connection": "close"})


def _label(field: str) -> str:
    """A JSON path (``messages.18.text``) as ``validation_messages`` names it for a person."""
    return field_label([int(p) if p.isdigit() else p for p in field.split(".")], field)


def nul_refusal(fields: list[str], *, close: bool = False) -> JSONResponse:
    """422 naming the fields that contain a NUL character."""
    named = ", ".join(f"“{_label(field)}”" for field in fields)
    body = ErrorBody(
        code="validation_error",
        message=f"The text of {named} contains a NUL character (U+0000), which cannot be stored.",
        hint=f"Remove the NUL character from {named} and send the request again.",
        fields=[
            FieldError(field=field, message=f"{_label(field)} contains a NUL character (U+0000)")
            for field in fields
        ],
    )
    return error_response(422, body, {"Connection": "close"} if close else None)


def _nul_fields_of_pairs(encoded: bytes) -> list[str]:
    """The names of the fields of an urlencoded string whose name or value holds a NUL."""
    if b"\x00" not in encoded and b"%00" not in encoded:
        return []
    pairs = parse_qsl(encoded.decode("latin-1"), keep_blank_values=True, encoding="latin-1")
    return [
        name.encode("latin-1").decode("utf-8", "replace")
        for name, value in pairs
        if NUL in name or NUL in value
    ]


def _strings(document: Any) -> Iterator[tuple[str, str]]:
    """(field path, text) of every key and string of a JSON document, in document order."""
    stack: list[tuple[tuple[str, ...], Any]] = [((), document)]
    while stack:
        path, node = stack.pop()
        label = ".".join(path) or "body"
        if isinstance(node, str):
            yield label, node
        elif isinstance(node, dict):
            for key in node:
                yield ".".join((*path, key)), key
            stack.extend(((*path, key), value) for key, value in reversed(node.items()))
        elif isinstance(node, list):
            stack.extend(((*path, str(i)), item) for i, item in reversed(list(enumerate(node))))


def _nul_fields_of_json(body: bytes) -> list[str]:
    if b"\\u0000" not in body and b"\x00" not in body:
        return []
    try:
        document = json.loads(body)
    except (ValueError, RecursionError):
        return []  # not JSON: the app refuses it as such
    return list(dict.fromkeys(path for path, text in _strings(document) if NUL in text))


class _MultipartScan:
    """Follows a multipart body as it streams by: NUL in a text field's value or in a
    part's headers (a file name). File contents are the importer's business."""

    def __init__(self, boundary: bytes) -> None:
        self.found: list[str] = []
        self._header_name = b""
        self._header_value = b""
        self._disposition = b""
        self._nul_in_headers = False
        self._name = ""
        self._is_file = False
        self._parser: MultipartParser | None = MultipartParser(
            boundary,
            {
                "on_part_begin": self._begin,
                "on_header_field": self._header_field,
                "on_header_value": self._header_value_data,
                "on_header_end": self._header_end,
                "on_headers_finished": self._headers_finished,
                "on_part_data": self._data,
            },
        )

    def feed(self, chunk: bytes) -> None:
        if self._parser is None or not chunk:
            return
        try:
            self._parser.write(chunk)
        except MultipartParseError:
            self._parser = None  # malformed: the app's own parser refuses it

    def _begin(self) -> None:
        self._disposition, self._nul_in_headers = b"", False

    def _header_field(self, data: bytes, start: int, end: int) -> None:
        self._header_name += data[start:end]

    def _header_value_data(self, data: bytes, start: int, end: int) -> None:
        self._header_value += data[start:end]

    def _header_end(self) -> None:
        if self._header_name.lower() == b"content-disposition":
            self._disposition = self._header_value
        self._nul_in_headers |= b"\x00" in self._header_value
        self._header_name, self._header_value = b"", b""

    def _headers_finished(self) -> None:
        _, options = parse_options_header(self._disposition)
        self._name = options.get(b"name", b"").decode("utf-8", "replace") or "file"
        self._is_file = b"filename" in options
        if self._nul_in_headers:
            self._report()

    def _data(self, data: bytes, start: int, end: int) -> None:
        if not self._is_file and b"\x00" in data[start:end]:
            self._report()

    def _report(self) -> None:
        if self._name not in self.found:
            self.found.append(self._name)


class RequestInputMiddleware:
    """``body_bytes``: the limit of every route but those in ``route_body_bytes``
    ((method, path) -> limit)."""

    def __init__(
        self,
        app: ASGIApp,
        *,
        body_bytes: int,
        route_body_bytes: Mapping[tuple[str, str], int] | None = None,
    ) -> None:
        self.app = app
        self.body_bytes = body_bytes
        self.route_body_bytes = dict(route_body_bytes or {})

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        fields = _nul_fields_of_target(scope)
        if fields:
            await nul_refusal(fields)(scope, receive, send)
            return
        route = (scope["method"], scope["path"].rstrip("/"))
        limit = self.route_body_bytes.get(route, self.body_bytes)
        upload = route in self.route_body_bytes
        headers = Headers(scope=scope)
        declared = headers.get("content-length", "")
        if declared.isdigit() and int(declared) > limit:
            await too_large(limit, upload=upload)(scope, receive, send)
            return
        kind, boundary = _body_kind(headers.get("content-type"))
        if kind == "other":
            scan = _MultipartScan(boundary) if boundary else None
            await _watched(self.app, scope, receive, send, limit, upload, scan)
            return
        # JSON or urlencoded: small by the limit; read it whole and check it first.
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] != "http.request":
                await self.app(scope, _replay([message], receive), send)
                return
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > limit:
                await too_large(limit, upload=upload)(scope, receive, send)
                return
            chunks.append(chunk)
            if not message.get("more_body", False):
                break
        body = b"".join(chunks)
        fields = _nul_fields_of_json(body) if kind == "json" else _nul_fields_of_pairs(body)
        if fields:
            await nul_refusal(fields[:_MAX_NAMED_FIELDS])(scope, receive, send)
            return
        whole: Message = {"type": "http.request", "body": body, "more_body": False}
        await self.app(scope, _replay([whole], receive), send)


def _nul_fields_of_target(scope: Scope) -> list[str]:
    if NUL in scope["path"]:
        return ["path"]
    return _nul_fields_of_pairs(scope.get("query_string", b""))[:_MAX_NAMED_FIELDS]


def _body_kind(content_type: str | None) -> tuple[str, bytes | None]:
    """'json' (FastAPI reads a body without a content type as JSON too), 'form'
    (urlencoded), or 'other' with the boundary of a multipart form."""
    if not content_type:
        return "json", None
    message = email.message.Message()
    message["content-type"] = content_type
    main, sub = message.get_content_maintype(), message.get_content_subtype()
    if main == "application" and (sub == "json" or sub.endswith("+json")):
        return "json", None
    if main == "application" and sub == "x-www-form-urlencoded":
        return "form", None
    boundary = message.get_param("boundary") if main == "multipart" else None
    return "other", boundary.encode("latin-1") if isinstance(boundary, str) else None


def _replay(messages: list[Message], receive: Receive) -> Receive:
    """``messages`` first, then the server's own (a disconnect, while a stream is sent)."""
    pending = list(messages)

    async def replay() -> Message:
        return pending.pop(0) if pending else await receive()

    return replay


async def _watched(
    app: ASGIApp,
    scope: Scope,
    receive: Receive,
    send: Send,
    limit: int,
    upload: bool,
    scan: _MultipartScan | None,
) -> None:
    """Runs the app on a body it streams itself, counted and scanned as it is read."""
    received = 0
    refusal: JSONResponse | None = None
    started = False

    async def watched_receive() -> Message:
        nonlocal received, refusal
        if refusal is not None:
            raise _BodyRefusedError
        message = await receive()
        if message["type"] == "http.request":
            chunk = message.get("body", b"")
            received += len(chunk)
            if received > limit:
                refusal = too_large(limit, upload=upload)
            elif scan is not None:
                scan.feed(chunk)
                if scan.found:
                    refusal = nul_refusal(scan.found[:_MAX_NAMED_FIELDS], close=True)
            if refusal is not None:
                raise _BodyRefusedError
        return message

    async def watched_send(message: Message) -> None:
        nonlocal started
        if refusal is not None and not started:
            return  # the app's answer to a body it could not read: the refusal replaces it
        started = started or message["type"] == "http.response.start"
        await send(message)

    try:
        await app(scope, watched_receive, watched_send)
    except Exception:
        if refusal is None or started:
            raise
    if refusal is not None and not started:
        await refusal(scope, receive, send)
