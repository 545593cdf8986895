"""Reading a source's answer (JSON into typed models, or XML) and saying plainly what is
wrong with one that cannot be read: cut short, an HTML error page, empty, another format,
or JSON without the parts every answer of that API has.

A damaged answer is never half-used: the page it belongs to fails as a whole with a
``SourceUnavailableError``, so a record cut off in the middle is never returned and the
records after the cut are never silently missing from a page that looks complete.
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable, Iterable, Sequence
from typing import TypeVar

import httpx
import pydantic_core
from lxml import etree
from pydantic import BaseModel, ConfigDict, ValidationError

from scholarstream.errors import SourceUnavailableError
from scholarstream.validation_messages import plain_text


class ResponseModel(BaseModel):
    """A piece of a source's answer. APIs add fields over time; only those read are declared."""

    model_config = ConfigDict(extra="ignore")


M = TypeVar("M", bound=BaseModel)
T = TypeVar("T")
R = TypeVar("R")

_HTML = re.compile(
    rb"^\s*(?:<\?xml[^>]*>\s*)?(?:<!doctype\s+html|<html[\s>]|<head[\s>]|<body[\s>])", re.I
)
_HTML_TITLE = re.compile(r"<(title|h1)\b[^>]*>(.*?)</\1\s*>", re.I | re.S)
_TAG = re.compile(r"<[^>]+>")


def unreadable(source: str, label: str, what: str) -> SourceUnavailableError:
    """The error for an answer that cannot be used; ``what`` says what came instead."""
    return SourceUnavailableError(
        source,
        f"{label} sent an answer we could not read: {what}.",
        hint=f"Try again in a few minutes. If {label} keeps answering like this, its service "
        "is failing or its API has changed: search the other sources meanwhile.",
    )


def _content_type(response: httpx.Response) -> str:
    return response.headers.get("content-type", "").split(";")[0].strip() or "none given"


def describe_body(response: httpx.Response, *, html_note: str = "") -> str | None:
    """``"an empty body"`` or ``'an HTML page ("502 Bad Gateway")'`` when the body is one
    of those, whatever the source expected; ``None`` otherwise. ``html_note`` is said of
    an HTML page after its title."""
    content = response.content
    if not content.strip():
        return f"an empty body (HTTP {response.status_code})"
    looks_like_html = _HTML.match(content[:2048]) is not None or (
        _content_type(response) == "text/html" and content.lstrip().startswith(b"<")
    )
    if looks_like_html:
        match = _HTML_TITLE.search(response.text[:20_000])
        title = " ".join(html.unescape(_TAG.sub("", match.group(2))).split()) if match else ""
        shown = f' ("{title[:80]}")' if title else ""
        return f"an HTML page{shown}{html_note} instead of data (HTTP {response.status_code})"
    return None


def _ends_inside_a_character(content: bytes) -> bool:
    """Whether the body stops in the middle of a UTF-8 character (cut at a byte)."""
    try:
        content.decode("utf-8")
    except UnicodeDecodeError as exc:
        return exc.reason == "unexpected end of data"
    return False


def _cut_short(response: httpx.Response, expected: str) -> str:
    return f"it was cut short, its {expected} stops after {len(response.content):,} bytes"


_JSON_KINDS = {list: "list", str: "string", int: "number", float: "number", bool: "boolean"}


def _json_kind(value: object) -> str:
    return "null" if value is None else _JSON_KINDS.get(type(value), "value")


def _validation_problem(exc: ValidationError) -> str:
    first = exc.errors()[0]
    where = ".".join(str(part) for part in first["loc"])
    if first["type"] == "missing":
        return f"JSON without the '{where}' every answer has"
    if not where:
        return f"a JSON {_json_kind(first['input'])} where an object was expected"
    return f"JSON in an unexpected shape (at '{where}': {plain_text(first)})"


def _json_problem(response: httpx.Response, message: str) -> str:
    """What a body that is not valid JSON is, from the parser's ``message``."""
    body = describe_body(response)
    if body is not None:
        return body
    if "EOF while parsing" in message or _ends_inside_a_character(response.content):
        return _cut_short(response, "JSON")
    if response.content.lstrip().startswith(b"<"):
        return f"XML where JSON was expected (Content-Type {_content_type(response)})"
    return f"not JSON (Content-Type {_content_type(response)}; {message})"


def read_json(source: str, label: str, model: type[M], response: httpx.Response) -> M:
    """The body as ``model``; a body in another shape means the source is not answering as
    documented, which is reported as the source being unavailable."""
    try:
        return model.model_validate_json(response.content)
    except ValidationError as exc:
        first = exc.errors()[0]
        if first["type"] == "json_invalid":
            raise unreadable(source, label, _json_problem(response, first["msg"])) from exc
        raise unreadable(source, label, _validation_problem(exc)) from exc


def json_value(source: str, label: str, response: httpx.Response) -> object:
    """The body as plain JSON values (for sources that look at it before choosing a model)."""
    try:
        value: object = pydantic_core.from_json(response.content)
    except ValueError as exc:
        raise unreadable(source, label, _json_problem(response, str(exc))) from exc
    return value


def json_object(source: str, label: str, response: httpx.Response) -> dict[str, object]:
    """The body as a JSON object."""
    value = json_value(source, label, response)
    if not isinstance(value, dict):
        raise unreadable(source, label, f"a JSON {_json_kind(value)} where an object was expected")
    return value


def validate(source: str, label: str, model: type[M], value: object) -> M:
    """``value`` (from ``json_value``) as ``model``, or the source's unreadable error."""
    try:
        return model.model_validate(value)
    except ValidationError as exc:
        raise unreadable(source, label, _validation_problem(exc)) from exc


def _xml_cut_short(content: bytes, exc: etree.XMLSyntaxError) -> bool:
    """Whether the parser failed at the very end of the body (it ran out of text)."""
    line, column = exc.position
    lines = content.split(b"\n")
    return line == len(lines) and column >= len(lines[-1].decode("utf-8", "replace"))


def _xml_problem(response: httpx.Response, exc: etree.XMLSyntaxError) -> str:
    """What a body that is not well-formed XML is."""
    body = describe_body(response, html_note=" that is not valid XML")
    if body is not None:
        return body
    if _xml_cut_short(response.content, exc) or _ends_inside_a_character(response.content):
        return _cut_short(response, "XML")
    content_type = _content_type(response)
    if response.content.lstrip()[:1] in (b"{", b"["):
        return f"JSON where XML was expected (Content-Type {content_type})"
    return f"it is not valid XML ({exc.msg}; Content-Type {content_type})"


def read_xml(
    source: str,
    label: str,
    response: httpx.Response,
    parser: etree.XMLParser,
    roots: Sequence[str],
) -> etree._Element:
    """The body's root element, which must be one of ``roots`` (Clark notation for a
    namespaced element, ``{uri}name``)."""
    expected = " or ".join(f"<{etree.QName(root).localname}>" for root in roots)
    try:
        root = etree.fromstring(response.content, parser)
    except etree.XMLSyntaxError as exc:
        raise unreadable(source, label, _xml_problem(response, exc)) from exc
    if root.tag not in roots:
        what = describe_body(response) or (
            f"XML whose root element is <{etree.QName(root).localname}>, not {expected}"
        )
        raise unreadable(source, label, what)
    return root


def map_records(
    source: str, label: str, items: Iterable[T], convert: Callable[[T], R | None]
) -> list[R]:
    """``convert`` over the items of a page, leaving out those it turns into ``None``. An
    item holding an impossible value (a negative citation count, say) makes the page
    unreadable, as a field of the wrong type does in ``read_json``."""
    records: list[R] = []
    for number, item in enumerate(items, 1):
        try:
            record = convert(item)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(part) for part in first["loc"])
            raise unreadable(
                source, label, f"record {number} holds an impossible {where} ({plain_text(first)})"
            ) from exc
        if record is not None:
            records.append(record)
    return records
