"""Which servers users' notification targets may send to. In multi-user mode a target
must reach only public servers: not loopback, private, link-local or otherwise internal
ones, so that no user can make this server post into its own network (SSRF).

Two checks. When a target is saved, the servers its URL names (``json://``, ``form://``,
``xml://``, a self-hosted ntfy or gotify, a mail server ...) are looked up here, for an
early ``422``. At each delivery, ``AppriseNotifier`` runs apprise inside
``only_public_connections()``: every connection the plugin opens is checked on the address
it is about to reach. That covers what a URL does not name (Zulip's
``org.<hostname>``, an Azure endpoint in the path, a redirect) and names that point
elsewhere by then (DNS rebinding). Services on fixed hosts (Slack, Discord, Telegram ...)
reach their public servers as before.

In single-user mode the one user owns the server and may notify their own network;
``server.allow_private_notification_hosts`` lifts the rule in multi-user mode too (an
intranet)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from apprise import Apprise

from scholarstream.errors import InvalidInputError
from scholarstream.public_addresses import ip_of, is_local_name, is_public, resolve_blocking
from scholarstream.settings import Settings

PRIVATE_HINT = (
    "Use a service on a public host. An administrator can allow private hosts with "
    "SCHOLARSTREAM_SERVER__ALLOW_PRIVATE_NOTIFICATION_HOSTS=true."
)


@dataclass(frozen=True)
class TargetHosts:
    allow_private: bool
    resolve: Callable[[str], Sequence[str]] = resolve_blocking

    @classmethod
    def for_server(cls, settings: Settings) -> TargetHosts:
        server = settings.server
        return cls(allow_private=not server.multi_user or server.allow_private_notification_hosts)

    def refusal(self, url: str) -> str | None:
        """Why ``url`` may not be sent to, or None. Looks names up: blocks."""
        if self.allow_private:
            return None
        for host in named_hosts(url):
            literal = ip_of(host)
            if literal is not None:
                if not is_public(literal):
                    return f"{host} is a non-public address"
                continue
            if is_local_name(host):
                return f"{host} is this server itself"
            try:
                found = self.resolve(host)
            except OSError:
                continue  # a name that does not resolve reaches nothing
            refused = [a for a in found if (ip := ip_of(a)) is None or not is_public(ip)]
            if refused:
                return f"{host} resolves to the non-public address {', '.join(refused)}"
        return None

    def check(self, url: str) -> None:
        """``InvalidInputError`` when ``url``'s server is not allowed. Blocks."""
        reason = self.refusal(url)
        if reason is not None:
            raise InvalidInputError(
                f"That notification URL points into a private network: {reason}.",
                hint=PRIVATE_HINT,
            )


def named_hosts(url: str) -> list[str]:
    """The servers ``url`` names (none for a service on fixed hosts)."""
    plugin = Apprise.instantiate(url)
    if plugin is None:
        return []
    hosts: list[str] = []
    templates: Sequence[str] = getattr(plugin, "templates", ())
    host = getattr(plugin, "host", None)
    if host and any("{host}" in template for template in templates):
        hosts.append(str(host))
    smtp_host = getattr(plugin, "smtp_host", None)
    if smtp_host:
        hosts.append(str(smtp_host))
    return list(dict.fromkeys(h.strip("[]") for h in hosts))
