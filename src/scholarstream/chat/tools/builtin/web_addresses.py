"""Which addresses ``read_web_page`` may read.

It runs on a shared server, so it only reads public pages: ``http``/``https`` addresses
whose host is, and resolves to, public addresses only (no loopback, private, link-local,
multicast, reserved or unspecified address, IPv4 or IPv6, ``localhost`` included), checked
again for every redirect. A plain ``http`` request goes to the address that was checked
(the name is not resolved a second time, so a name cannot change its answer in between);
``https`` is safe from that by its certificate check. ``chat.web_read_allow_private_hosts``
lifts the address rules (an intranet server).
"""

from __future__ import annotations

import asyncio
import ipaddress
import re
import socket
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass

import httpx

from scholarstream.errors import InvalidInputError, NotFoundError, SourceUnavailableError

ASK_TO_PASTE = "Ask the user to paste the text they need into the chat."
_PRIVATE_HINT = (
    "Only public web pages can be read. Ask the user for a public address, or to paste "
    "the text; an administrator can allow intranet hosts with "
    "chat.web_read_allow_private_hosts."
)

Resolver = Callable[[str, int], Awaitable[Sequence[str]]]
"""Resolves a host name (and port) to its IP addresses; raises ``OSError`` (``socket.gaierror``)
when it cannot."""

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address


async def system_resolver(host: str, port: int) -> list[str]:
    """The host's addresses from the operating system's resolver, without blocking the loop."""
    infos = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return list(dict.fromkeys(str(info[4][0]) for info in infos))


_NAT64 = ipaddress.IPv6Network("64:ff9b::/96")


def _embedded_ipv4(address: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv6 one carries: IPv4-mapped, NAT64 or 6to4."""
    if address.ipv4_mapped is not None:
        return address.ipv4_mapped
    if address in _NAT64:
        return ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    return address.sixtofour


def is_public(address: IPAddress) -> bool:
    """Whether a shared server may connect to ``address`` for a user: a globally routable
    unicast address, and so is any IPv4 address it embeds."""
    if (
        address.is_loopback
        or address.is_private
        or address.is_link_local
        or address.is_multicast
        or address.is_reserved
        or address.is_unspecified
        or not address.is_global
    ):
        return False
    if isinstance(address, ipaddress.IPv6Address):
        if address.is_site_local:
            return False
        embedded = _embedded_ipv4(address)
        if embedded is not None:
            return is_public(embedded)
    return True


_NUMERIC_IPV4 = re.compile(r"(?:0x[0-9a-f]*|[0-9]+)(?:\.(?:0x[0-9a-f]*|[0-9]+)){0,3}", re.I)


def _ip(host: str) -> IPAddress | None:
    """``host`` as an address, if it is one; numeric IPv4 shorthands (``127.1``,
    ``2130706433``, ``0x7f.1``) included, as the system's resolver reads them."""
    try:
        return ipaddress.ip_address(host.partition("%")[0])
    except ValueError:
        pass
    if _NUMERIC_IPV4.fullmatch(host):
        try:
            return ipaddress.IPv4Address(socket.inet_aton(host))
        except OSError:
            return None
    return None


def wire_host(url: httpx.URL) -> str:
    """The host as sent on the wire (IDNA for international names)."""
    return url.raw_host.decode("ascii")


_BARE_HOST = re.compile(r"^(?:[\w-]+\.)+[a-z]{2,}(?::\d+)?(?:[/?#]|$)", re.I)


def with_scheme(text: str) -> str:
    """``www.example.com/page`` as ``https://www.example.com/page`` (what people type)."""
    text = text.strip()
    return f"https://{text}" if _BARE_HOST.match(text) else text


def checked_url(text: str, *, redirected_from: httpx.URL | None = None) -> httpx.URL:
    """``text`` as an http(s) URL without its fragment; refuses anything else."""
    where = f"{redirected_from} redirects to {text}, which" if redirected_from else repr(text)
    try:
        url = httpx.URL(text.strip())
    except httpx.InvalidURL as exc:
        raise InvalidInputError(
            f"{where} is not a web address ({exc}).",
            hint="Give the page's full address, e.g. https://www.example.com/page.",
        ) from exc
    if url.scheme not in ("http", "https"):
        scheme = f"a {url.scheme}: address" if url.scheme else "not a full web address"
        raise InvalidInputError(
            f"{where} is {scheme}; read_web_page reads http:// and https:// pages only.",
            hint="Give the page's full address starting with https://. Files on the user's "
            "computer or server cannot be read: " + ASK_TO_PASTE,
        )
    if not url.raw_host:
        raise InvalidInputError(
            f"{where} has no host name.",
            hint="Give the page's full address, e.g. https://www.example.com/page.",
        )
    if url.userinfo:
        raise InvalidInputError(
            f"{where} carries a user name or password; read_web_page does not log in.",
            hint="Give the address without the user name and password. Pages behind a "
            f"login cannot be read: {ASK_TO_PASTE}",
        )
    return url.copy_with(fragment=None)


@dataclass(frozen=True)
class HostRules:
    """Where a request for a URL may go: the addresses to connect to, or ``[None]`` (connect
    by name) when no resolution is needed."""

    resolve: Resolver
    allow_private: bool

    async def addresses(
        self, url: httpx.URL, *, redirected_from: httpx.URL | None = None
    ) -> list[str | None]:
        host = wire_host(url)
        subject = f"{redirected_from} redirects to {url}, which" if redirected_from else str(url)
        literal = _ip(host)
        if literal is not None:
            if not self.allow_private and not is_public(literal):
                raise InvalidInputError(
                    f"{subject} is on a non-public address ({literal}).", hint=_PRIVATE_HINT
                )
            return [None]
        if self.allow_private:
            return [None]
        name = host.lower().rstrip(".")
        if name == "localhost" or name.endswith(".localhost"):
            raise InvalidInputError(f"{subject} is on this server itself.", hint=_PRIVATE_HINT)
        found = await self._resolved(url, name)
        refused = [str(a) for a in found if not is_public(a)]
        if refused:
            raise InvalidInputError(
                f"{subject} is on a non-public address: {host} resolves to {', '.join(refused)}.",
                hint=_PRIVATE_HINT,
            )
        # Plain http goes to the address checked; https is pinned by its certificate.
        return [str(a) for a in found] if url.scheme == "http" else [None]

    async def _resolved(self, url: httpx.URL, name: str) -> list[IPAddress]:
        port = url.port or (443 if url.scheme == "https" else 80)
        try:
            found = await self.resolve(name, port)
        except socket.gaierror as exc:
            if exc.errno in (socket.EAI_NONAME, getattr(socket, "EAI_NODATA", None)):
                raise _no_such_host(url) from exc
            raise SourceUnavailableError(
                name,
                f"Could not look up {name} ({exc.strerror or exc}).",
                hint="Try again in a few minutes.",
            ) from exc
        except OSError as exc:
            raise SourceUnavailableError(
                name, f"Could not look up {name} ({exc}).", hint="Try again in a few minutes."
            ) from exc
        addresses = [a for a in (_ip(text) for text in found) if a is not None]
        if not addresses:
            raise _no_such_host(url)
        return list(dict.fromkeys(addresses))


def _no_such_host(url: httpx.URL) -> NotFoundError:
    return NotFoundError(
        f"There is no web site at {wire_host(url)}: the name does not exist.",
        hint="Check the address for typos, or ask the user for the right link.",
    )
