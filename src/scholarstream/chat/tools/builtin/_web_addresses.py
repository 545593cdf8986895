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

import re
import socket
from dataclasses import dataclass

import httpx

from scholarstream.errors import InvalidInputError, NotFoundError, SourceUnavailableError
from scholarstream.public_addresses import IPAddress, Resolver, ip_of, is_local_name, is_public

ASK_TO_PASTE = "Ask the user to paste the text they need into the chat."
_PRIVATE_HINT = (
    "Only public web pages can be read. Ask the user for a public address, or to paste "
    "the text; an administrator can allow intranet hosts with "
    "chat.web_read_allow_private_hosts."
)


class PrivateAddressError(InvalidInputError):
    """The page is on a private network, or on this server itself."""


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
        literal = ip_of(host)
        if literal is not None:
            if not self.allow_private and not is_public(literal):
                raise PrivateAddressError(
                    f"{subject} is on a non-public address ({literal}).", hint=_PRIVATE_HINT
                )
            return [None]
        if self.allow_private:
            return [None]
        name = host.lower().rstrip(".")
        if is_local_name(name):
            raise PrivateAddressError(f"{subject} is on this server itself.", hint=_PRIVATE_HINT)
        found = await self._resolved(url, name)
        refused = [str(a) for a in found if not is_public(a)]
        if refused:
            raise PrivateAddressError(
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
        addresses = [a for a in (ip_of(text) for text in found) if a is not None]
        if not addresses:
            raise _no_such_host(url)
        return list(dict.fromkeys(addresses))


def _no_such_host(url: httpx.URL) -> NotFoundError:
    return NotFoundError(
        f"There is no web site at {wire_host(url)}: the name does not exist.",
        hint="Check the address for typos, or ask the user for the right link.",
    )
