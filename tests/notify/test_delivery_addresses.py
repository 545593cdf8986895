"""In multi-user mode a notification can only reach public addresses, whatever the plugin:
the address each connection is about to reach is checked when apprise's plugin opens it
(HTTP, SMTP, UDP), not only the host the URL names. Plugins that build the server's name
from other parts (Zulip's organization, Azure Communication Services' endpoint) and names
that point inside by the time apprise looks them up are refused before anything is sent.

The system's resolver is replaced (``fake_dns``), so these names point where each test says
without any DNS server being asked; private addresses are refused before a packet leaves."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence

import pytest

from scholarstream.notify import PRIVATE_HINT, AppriseNotifier, Notification, Target, TargetHosts
from tests.notify.hooks import hook_server
from tests.notify.listeners import (
    allow_guard_to_see_private_addresses,
    fake_dns,
    listener,
    smtp_server,
)

PUBLIC = "93.184.215.14"
ZULIP_TOKEN = "abcdefghijklmnopqrstuvwxyz012345"
ACS_KEY = "c2VjcmV0a2V5MTIzNA=="
HELLO = Notification(kind="test", title="Hello", body="A test notification.")


def multi_user(looked_up: dict[str, list[str]] | None = None) -> TargetHosts:
    """The rule of a multi-user server; ``looked_up``: what the check before delivery
    finds for a name (the system's resolver may answer differently a moment later)."""
    answers = looked_up or {}

    def resolve(host: str) -> Sequence[str]:
        if host not in answers:
            raise OSError(f"no such host {host}")
        return answers[host]

    return TargetHosts(allow_private=False, resolve=resolve)


def refused(address: str) -> str:
    return f"Not sent: {address} is a non-public address. {PRIVATE_HINT}"


@pytest.mark.parametrize(
    ("url", "name", "address"),
    [
        # https://org.localhost, https://org.10.9.9.9 (a wildcard DNS name works the same)
        (f"zulip://bot@org.localhost/{ZULIP_TOKEN}", "org.localhost", "127.0.0.1"),
        (f"zulip://bot@org.10.9.9.9/{ZULIP_TOKEN}", "org.10.9.9.9", "10.9.9.9"),
        # https://internal.example, the endpoint being the third part of the path
        (
            f"acs://me@mail.example/{ACS_KEY}/internal.example/you@mail.example",
            "internal.example",
            "192.168.7.7",
        ),
        (
            f"acs://me@mail.example/{ACS_KEY}/metadata.example/you@mail.example",
            "metadata.example",
            "169.254.169.254",
        ),
    ],
)
async def test_a_plugin_that_builds_its_server_name_is_refused_when_it_connects(
    monkeypatch: pytest.MonkeyPatch, url: str, name: str, address: str
) -> None:
    fake_dns(monkeypatch, {name: address})
    allow_guard_to_see_private_addresses(monkeypatch)
    target = Target.from_url(url)
    assert multi_user().refusal(url) is None  # nothing in the URL names that server
    (delivery,) = await AppriseNotifier(hosts=multi_user()).send(HELLO, [target])
    assert not delivery.ok
    assert delivery.error == refused(address)


URLS: dict[str, Callable[[int], str]] = {
    "json": lambda port: f"json://hooks.example:{port}/hook",
    "form": lambda port: f"form://hooks.example:{port}/hook",
    "ntfy": lambda port: f"ntfy://hooks.example:{port}/alerts",
    "gotify": lambda port: f"gotify://hooks.example:{port}/tok3nAbCdEf",
    "mailto": lambda port: (
        f"mailto://hooks.example:{port}?from=me@hooks.example&to=you@hooks.example"
    ),
}


@pytest.mark.parametrize("plugin", URLS)
async def test_a_name_that_points_inside_when_apprise_connects_reaches_nothing(
    monkeypatch: pytest.MonkeyPatch, plugin: str
) -> None:
    """The check before delivery sees a public address; the lookup apprise's connection
    makes a moment later gets loopback (DNS rebinding): the connection is refused."""
    fake_dns(monkeypatch, {"hooks.example": "127.0.0.1"})
    hosts = multi_user({"hooks.example": [PUBLIC]})
    with listener() as inside:
        url = URLS[plugin](inside.tcp_port)
        hosts.check(url)  # what saving the target checks
        (delivery,) = await AppriseNotifier(hosts=hosts).send(HELLO, [Target.from_url(url)])
        assert not delivery.ok
        assert delivery.error == refused("127.0.0.1")
        assert not inside.reached()


async def test_a_datagram_to_a_loopback_syslog_server_is_not_sent() -> None:
    with listener() as inside:
        target = Target.from_url(f"rsyslog://127.0.0.1:{inside.udp_port}")
        (delivery,) = await AppriseNotifier(hosts=multi_user()).send(HELLO, [target])
        assert delivery.error == refused("127.0.0.1")
        assert not inside.reached()


async def test_the_servers_own_system_log_is_not_a_target_for_users() -> None:
    (delivery,) = await AppriseNotifier(hosts=multi_user()).send(
        HELLO, [Target.from_url("syslog://")]
    )
    assert not delivery.ok
    assert delivery.error == (
        f"Not sent: the service writes to this server's own system log. {PRIVATE_HINT}"
    )


async def test_with_private_hosts_allowed_every_plugin_reaches_the_own_network(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``server.allow_private_notification_hosts`` (or single-user mode): HTTP, SMTP and
    UDP plugins deliver to loopback servers, by name and by address."""
    fake_dns(monkeypatch, {"hooks.example": "127.0.0.1"})
    allowed = TargetHosts(allow_private=True)
    with hook_server() as hooks, smtp_server() as smtp, listener() as syslog:
        targets = [
            Target.from_url(f"json://hooks.example:{hooks.port}/json", label="json"),
            Target.from_url(f"ntfy://hooks.example:{hooks.port}/alerts", label="ntfy"),
            Target.from_url(URLS["mailto"](smtp.port), label="mail"),
            Target.from_url(f"rsyslog://127.0.0.1:{syslog.udp_port}", label="syslog"),
        ]
        deliveries = await AppriseNotifier(hosts=allowed).send(HELLO, targets)
        assert [(d.label, d.ok, d.error) for d in deliveries] == [
            (target.label, True, None) for target in targets
        ]
        assert sorted(p.path for p in hooks.received()) == ["/", "/json"]
        (message,) = smtp.messages
        assert "A test notification." in message
        (datagram,) = syslog.datagrams
        assert b"A test notification." in datagram


async def test_the_rule_holds_only_for_the_delivery_it_guards(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A refused delivery and an allowed one at the same time, in the same process: each
    keeps its own rule, and nothing stays refused afterwards."""
    fake_dns(monkeypatch, {"hooks.example": "127.0.0.1"})
    with hook_server() as hooks:
        url = f"json://hooks.example:{hooks.port}/hook"
        guarded, allowed = await asyncio.gather(
            AppriseNotifier(hosts=multi_user()).send(HELLO, [Target.from_url(url)]),
            AppriseNotifier(hosts=TargetHosts(allow_private=True)).send(
                HELLO, [Target.from_url(url)]
            ),
        )
        assert guarded[0].error == refused("127.0.0.1")
        assert allowed[0].ok
        (again,) = await AppriseNotifier().send(HELLO, [Target.from_url(url)])
        assert again.ok
        assert len(hooks.received()) == 2
