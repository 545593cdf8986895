"""Which network addresses count as public: the rule every outbound request made for a user
follows (``read_web_page``, users' notification targets), so that no user can make the
server reach loopback, private, link-local or otherwise internal addresses (SSRF); and
which Host names count as loopback (single-user mode serves nothing else)."""

from __future__ import annotations

import asyncio
import ipaddress
import re
import socket
from collections.abc import Awaitable, Callable, Sequence

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


def ip_of(host: str) -> IPAddress | None:
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


def is_local_name(name: str) -> bool:
    """``localhost`` and its subdomains, which always mean this machine."""
    name = name.lower().rstrip(".")
    return name == "localhost" or name.endswith(".localhost")


def resolve_blocking(host: str, port: int = 0) -> list[str]:
    """The host's addresses, for code already off the event loop (a worker thread)."""
    infos = socket.getaddrinfo(host, port or None, type=socket.SOCK_STREAM)
    return list(dict.fromkeys(str(info[4][0]) for info in infos))


# A Host header: a DNS name or IPv4 address, or an IPv6 address in brackets, then an
# optional port; nothing else (no user info, path, spaces or second port).
_HOST_HEADER = re.compile(
    r"(?:\[(?P<ipv6>[0-9A-Fa-f:.]+)\]|(?P<name>[A-Za-z0-9.-]+))(?::(?P<port>[0-9]{1,5}))?"
)


def host_name(value: str) -> str | None:
    """The host of a Host header value ('[::1]:8000' -> '::1'), or None if it is not a
    well-formed ``host[:port]``."""
    match = _HOST_HEADER.fullmatch(value)
    if match is None:
        return None
    port = match.group("port")
    if port is not None and not 0 < int(port) <= 65535:
        return None
    return (match.group("ipv6") or match.group("name")).lower()


def is_loopback_host(host: str) -> bool:
    """'localhost' or a loopback address, optionally with a port ('[::1]:8000'), as a
    Host header carries it, or a bare bind address ('::1'). Anything more is refused."""
    name = host_name(host)
    if name is None:
        try:  # a bare IPv6 address, as `serve --host ::1` gives it
            return ipaddress.IPv6Address(host).is_loopback
        except ValueError:
            return False
    if name == "localhost":
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False
