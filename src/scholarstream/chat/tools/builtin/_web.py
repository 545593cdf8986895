"""``read_web_page``: read a web page the user points to (a company's site, a regulator's
page, a link they paste) as text for the model.

Every address, the first and each redirect's, must pass the rules of ``web_addresses``
(public hosts only, unless ``chat.web_read_allow_private_hosts``). The body is streamed up
to ``chat.web_read_max_bytes``; ``web_text`` turns it into what the model reads.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import httpx
from pydantic import Field

from scholarstream.chat.continuity import QuerySent
from scholarstream.chat.tools._registry import ToolConfig, ToolContext, ToolResult, register_tool
from scholarstream.chat.tools.builtin._arguments import ToolArguments, input_schema, parse_arguments
from scholarstream.chat.tools.builtin._web_addresses import (
    ASK_TO_PASTE,
    HostRules,
    PrivateAddressError,
    checked_url,
    wire_host,
    with_scheme,
)
from scholarstream.chat.tools.builtin._web_text import PASTE, Fetched, is_readable, page_text
from scholarstream.errors import (
    InvalidInputError,
    NotFoundError,
    SourceError,
    SourceUnavailableError,
)
from scholarstream.public_addresses import Resolver, system_resolver
from scholarstream.settings import ChatSettings

TOOL = "read_web_page"
MAX_REDIRECTS = 5
_ACCEPT = "text/html,application/xhtml+xml,text/plain;q=0.9,application/json;q=0.9,*/*;q=0.1"
_REDIRECTS = frozenset({301, 302, 303, 307, 308})


class WebPageArgs(ToolArguments):
    url: str = Field(
        min_length=1,
        max_length=2048,
        description="The page's full address, starting with http:// or https://",
    )


# --- fetching ----------------------------------------------------------------------------


def _request(
    client: httpx.AsyncClient, url: httpx.URL, address: str | None, timeout: float
) -> httpx.Request:
    """A GET of ``url``, sent to ``address`` when one is given (with the name in the Host
    header). The client's headers, not its cookies: one user's reads never carry what a
    site set during another's."""
    headers = httpx.Headers(client.headers)
    headers["Accept"] = _ACCEPT
    extensions: dict[str, Any] = {"timeout": httpx.Timeout(timeout).as_dict()}
    if address is None:
        return httpx.Request("GET", url, headers=headers, extensions=extensions)
    headers["Host"] = url.netloc.decode("ascii")
    return httpx.Request("GET", url.copy_with(host=address), headers=headers, extensions=extensions)


async def _send(
    client: httpx.AsyncClient, url: httpx.URL, addresses: list[str | None], seconds: float
) -> httpx.Response:
    """The response's headers (the body still streams); the next address when one refuses."""
    refused: httpx.ConnectError | None = None
    for address in addresses:
        request = _request(client, url, address, seconds)
        try:
            return await client.send(request, stream=True, follow_redirects=False)
        except httpx.ConnectError as exc:
            refused = exc
    raise SourceUnavailableError(
        wire_host(url),
        f"Could not connect to {wire_host(url)} ({refused}).",
        hint=f"The site may be down: try again later. {ASK_TO_PASTE}",
    )


def _status_error(response: httpx.Response, url: httpx.URL) -> SourceError | NotFoundError:
    status = response.status_code
    host = wire_host(url)
    if status in (404, 410):
        return NotFoundError(
            f"{url} does not exist (HTTP {status}).",
            hint="Check the address, or ask the user for the right link.",
        )
    if status in (401, 403, 407, 451):
        return SourceError(
            host,
            f"{host} refused to show {url} (HTTP {status}): it needs a login or blocks "
            "automated readers.",
            hint=ASK_TO_PASTE,
        )
    if status == 429 or status >= 500:
        return SourceUnavailableError(
            host,
            f"{host} could not serve {url} (HTTP {status}).",
            hint=f"The site is down or busy: try again in a few minutes. {ASK_TO_PASTE}",
        )
    return SourceError(host, f"{host} answered HTTP {status} for {url}.", hint=ASK_TO_PASTE)


async def _body(response: httpx.Response, limit: int) -> tuple[bytes, bool]:
    """At most ``limit`` bytes of the (decoded) body, and whether there was more."""
    chunks: list[bytes] = []
    size = 0
    async for chunk in response.aiter_bytes():
        chunks.append(chunk)
        size += len(chunk)
        if size > limit:
            return b"".join(chunks)[:limit], True
    return b"".join(chunks), False


def _joined(base: httpx.URL, location: str) -> str:
    try:
        return str(base.join(location))
    except httpx.InvalidURL as exc:
        raise SourceError(
            wire_host(base), f"{base} redirects to an invalid address ({location!r})."
        ) from exc


@dataclass(frozen=True)
class WebFetcher:
    client: httpx.AsyncClient
    rules: HostRules
    timeout: float
    max_bytes: int

    async def fetch(self, url: httpx.URL) -> Fetched:
        current, previous = url, None
        for _ in range(MAX_REDIRECTS + 1):
            addresses = await self.rules.addresses(current, redirected_from=previous)
            response = await _send(self.client, current, addresses, self.timeout)
            try:
                location = response.headers.get("location")
                if response.status_code in _REDIRECTS and location:
                    previous = current
                    current = checked_url(_joined(current, location), redirected_from=current)
                    continue
                if not response.is_success:
                    raise _status_error(response, current)
                media_type = response.headers.get("content-type", "").partition(";")[0]
                media_type = media_type.strip().lower()
                if not is_readable(media_type):
                    return Fetched(current, media_type, None, b"", False)
                body, truncated = await _body(response, self.max_bytes)
                return Fetched(current, media_type, response.charset_encoding, body, truncated)
            finally:
                await response.aclose()
        raise SourceError(
            wire_host(url),
            f"{url} redirects more than {MAX_REDIRECTS} times.",
            hint="Ask the user for the page's final address.",
        )


# --- the tool ----------------------------------------------------------------------------


class WebPageReader:
    """The tool's executor; ``resolve`` looks host names up (tests pass their own)."""

    def __init__(self, resolve: Resolver = system_resolver) -> None:
        self.resolve = resolve

    async def __call__(self, params: dict[str, Any], ctx: ToolContext) -> ToolResult:
        args = parse_arguments(TOOL, WebPageArgs, params)
        url = checked_url(with_scheme(args.url))
        settings: ChatSettings = ctx.services.chat
        fetcher = WebFetcher(
            client=ctx.services.sources.http.client,
            rules=HostRules(self.resolve, settings.web_read_allow_private_hosts),
            timeout=settings.web_read_timeout_seconds,
            max_bytes=settings.web_read_max_bytes,
        )
        host = wire_host(url)
        seconds = settings.web_read_timeout_seconds
        try:
            async with asyncio.timeout(seconds):
                fetched = await fetcher.fetch(url)
        except (TimeoutError, httpx.TimeoutException) as exc:
            raise SourceUnavailableError(
                host,
                f"{host} did not send {url} within {seconds:g} s.",
                hint=f"The site is slow or down: try again later. {ASK_TO_PASTE}",
            ) from exc
        except httpx.HTTPError as exc:
            raise SourceUnavailableError(
                host,
                f"Reading {url} failed ({type(exc).__name__}: {exc}).",
                hint=f"Try again later. {ASK_TO_PASTE}",
            ) from exc
        # Parsing a large page takes a while: not on the event loop.
        page = await asyncio.to_thread(page_text, fetched, url, settings.web_read_max_chars)
        return ToolResult(
            text=page.text,
            for_user=page.for_user,
            queries=[QuerySent(tool=TOOL, query=str(url), source=host, results=int(page.read))],
        )


def _failed(error: Exception, arguments: Mapping[str, Any], ctx: ToolContext) -> str:
    """Why the page was not read, and what the user can do instead."""
    address = str(arguments.get("url", "")).strip() or "The address"
    if isinstance(error, NotFoundError):
        return f"There is no page at {address}: check the address."
    if isinstance(error, PrivateAddressError):
        return (
            f"{address} cannot be read: it is on a private network or on this server, and "
            f"only public web pages can be read. Instead, {PASTE}."
        )
    if isinstance(error, InvalidInputError):
        return (
            f"{address} cannot be read: only public web pages, at addresses starting with "
            f"http:// or https://, can be read. Instead, {PASTE}."
        )
    if isinstance(error, SourceUnavailableError):
        return f"{error.source} could not be reached. Try again later, or {PASTE}."
    if isinstance(error, SourceError):
        return (
            f"{error.source} did not show the page (it may need a login, or refuse automated "
            f"readers): {PASTE}."
        )
    return f"{address} could not be read just now. Try again later."


READ_WEB_PAGE = register_tool(
    ToolConfig(
        name=TOOL,
        description="Read a public web page (a company's or regulator's site, a link the "
        "user gives) as text: its title, final address, main text and links. Reads HTML, "
        "plain text and JSON; not PDFs or images. Addresses on private networks are refused.",
        input_schema=input_schema(WebPageArgs),
        executor=WebPageReader(),
        category="research",
        command="read",
        command_argument="url",
        query_argument="url",
        command_summary="Read a public web page",
        failure_for_user=_failed,
    )
)
