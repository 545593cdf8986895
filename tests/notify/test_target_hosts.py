"""Users' notification targets cannot reach the server's own network in multi-user mode
(SSRF): refused when saved, and refused again at delivery when a name's address changed."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from scholarstream.accounts import create_api_token
from scholarstream.bootstrap import create_app
from scholarstream.db import OwnerScope, upgrade
from scholarstream.errors import InvalidInputError
from scholarstream.notify import AppriseNotifier, Notification, Target, TargetHosts, named_hosts
from scholarstream.settings import Settings, load_settings
from tests.helpers import make_runtime, new_user
from tests.notify.hooks import hook_server
from tests.notify.listeners import fake_dns

MINE = "/api/v1/me/notifications"
PUBLIC = "93.184.215.14"


def resolver(answers: dict[str, list[str]]) -> Callable[[str], Sequence[str]]:
    def resolve(host: str) -> Sequence[str]:
        if host not in answers:
            raise OSError(f"no such host {host}")
        return answers[host]

    return resolve


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        ("json://127.0.0.1:8080/hook", "127.0.0.1 is a non-public address"),
        ("json://2130706433/hook", "2130706433 is a non-public address"),  # 127.0.0.1
        ("form://[::1]/hook", "::1 is a non-public address"),
        ("xml://10.1.2.3/hook", "10.1.2.3 is a non-public address"),
        ("json://169.254.169.254/latest/meta-data", "169.254.169.254 is a non-public address"),
        ("json://[::ffff:192.168.0.1]/hook", "::ffff:192.168.0.1 is a non-public address"),
        ("xml://localhost/hook", "localhost is this server itself"),
        ("gotify://intranet.example/tok3nAbCdEf", "resolves to the non-public address 10.0.0.7"),
        ("mailto://me:pw@corp.example?smtp=mail.corp.example", "10.0.0.25"),
    ],
)
def test_multi_user_refuses_targets_on_internal_hosts(url: str, reason: str) -> None:
    hosts = TargetHosts(
        allow_private=False,
        resolve=resolver({"intranet.example": ["10.0.0.7"], "mail.corp.example": ["10.0.0.25"]}),
    )
    refusal = hosts.refusal(url)
    assert refusal is not None and reason in refusal
    with pytest.raises(InvalidInputError) as refused:
        hosts.check(url)
    assert "private network" in refused.value.message
    assert "ALLOW_PRIVATE_NOTIFICATION_HOSTS" in (refused.value.hint or "")


@pytest.mark.parametrize(
    "url",
    [
        f"json://{PUBLIC}/hook",
        "json://hooks.example/hook",  # resolves to a public address
        "json://does-not-resolve.example/hook",  # reaches nothing
        "slack://T1JJ3T3L2/A1BRTD4JD/TIiajkdnlazkcOXrIdevi7FQ",  # a fixed service host
        "ntfy://my-topic",  # ntfy.sh
    ],
)
def test_public_hosts_and_fixed_services_are_allowed(url: str) -> None:
    hosts = TargetHosts(
        allow_private=False,
        resolve=resolver({"hooks.example": [PUBLIC]}),
    )
    assert hosts.refusal(url) is None


def test_single_user_mode_or_the_setting_allows_the_own_network(data_dir: Path) -> None:
    single = load_settings(data_dir=data_dir)
    multi = load_settings(data_dir=data_dir, server={"multi_user": True})
    allowed = load_settings(
        data_dir=data_dir,
        server={"multi_user": True, "allow_private_notification_hosts": True},
    )
    url = "json://127.0.0.1:8080/hook"
    assert TargetHosts.for_server(single).refusal(url) is None
    assert TargetHosts.for_server(multi).refusal(url) is not None
    assert TargetHosts.for_server(allowed).refusal(url) is None


def test_the_server_named_by_a_url_is_what_is_checked() -> None:
    assert named_hosts("json://hooks.example:8443/path") == ["hooks.example"]
    assert named_hosts("form://[::1]/x") == ["::1"]
    assert named_hosts("discord://1234/abcd") == []


async def test_delivery_is_refused_when_a_saved_name_now_points_inside(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Saved while public, the name later resolves to loopback: nothing is posted (the
    address apprise's connection is about to reach is what is checked)."""
    with hook_server() as hooks:
        hosts = TargetHosts(allow_private=False, resolve=resolver({"hooks.example": [PUBLIC]}))
        url = f"json://hooks.example:{hooks.port}/hook"
        hosts.check(url)  # what saving checks
        fake_dns(monkeypatch, {"hooks.example": "127.0.0.1"})
        notification = Notification(kind="test", title="Hello", body="A test.")
        (delivery,) = await AppriseNotifier(hosts=hosts).send(notification, [Target.from_url(url)])
        assert not delivery.ok
        assert delivery.error is not None and "127.0.0.1" in delivery.error
        assert hooks.received() == []


async def _alice(settings: Settings) -> str:
    runtime = make_runtime(settings)
    try:
        user = await new_user(runtime, "alice")
        async with runtime.database.session() as session:
            _, token = await create_api_token(OwnerScope(session, user.id), "tests")
        return token
    finally:
        await runtime.close()


@pytest.fixture
def multi_user_client(data_dir: Path) -> Iterator[tuple[TestClient, dict[str, str]]]:
    settings = load_settings(data_dir=data_dir, server={"multi_user": True})
    upgrade(settings.app_database_url)
    token = asyncio.run(_alice(settings))
    with TestClient(create_app(make_runtime(settings)), base_url="http://127.0.0.1") as client:
        yield client, {"Authorization": f"Bearer {token}"}


def test_the_api_refuses_to_save_an_internal_target_and_saves_nothing(
    multi_user_client: tuple[TestClient, dict[str, str]],
) -> None:
    client, alice = multi_user_client
    refused = client.post(MINE, json={"url": "json://127.0.0.1:9/hook"}, headers=alice)
    assert refused.status_code == 422, refused.text
    body = refused.json()
    assert body["code"] == "invalid_input" and "private network" in body["message"]
    assert "ALLOW_PRIVATE_NOTIFICATION_HOSTS" in body["hint"]
    assert client.get(MINE, headers=alice).json() == {"targets": []}
    saved = client.post(MINE, json={"url": f"json://{PUBLIC}/hook"}, headers=alice)
    assert saved.status_code == 201, saved.text
    assert uuid.UUID(saved.json()["id"])
