"""The notification targets API, on each backend, in multi-user mode: add, list, test and
delete targets of the user and of a stream; a refused URL is a 422 that saves nothing; no
response ever contains a URL; another user's targets and streams are a 404. The test
endpoint sends through the real ``AppriseNotifier`` to a webhook on loopback."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from scholarstream.accounts import create_api_token
from scholarstream.bootstrap import create_app
from scholarstream.db import OwnerScope
from scholarstream.settings import Settings, load_settings
from tests.helpers import make_runtime, new_user
from tests.notify.hooks import HookServer, hook_server
from tests.notify.streams import new_stream

Response = Any  # starlette's TestClient returns its own httpx flavour's Response

MINE = "/api/v1/me/notifications"
SECRET = "hunter22-s3cret"
MAIL = f"mailto://me:{SECRET}@example.com"


@dataclass(frozen=True)
class World:
    client: TestClient
    hooks: HookServer
    alice: dict[str, str]
    bob: dict[str, str]
    stream: str  # alice's stream's notifications path
    bobs_stream: str


async def _accounts(settings: Settings) -> tuple[list[str], list[uuid.UUID]]:
    """Alice and Bob with an API token and a stream each."""
    runtime = make_runtime(settings)
    try:
        tokens, streams = [], []
        for name in ("alice", "bob"):
            user = await new_user(runtime, name)
            async with runtime.database.session() as session:
                _, token = await create_api_token(OwnerScope(session, user.id), "tests")
            tokens.append(token)
            streams.append(await new_stream(runtime, user.id))
        return tokens, streams
    finally:
        await runtime.close()


@pytest.fixture
def world(data_dir: Path, db_settings: Settings) -> Iterator[World]:
    # The webhook receiver is on loopback, which multi-user mode refuses unless allowed
    # (test_target_hosts checks the refusal).
    server = {"multi_user": True, "allow_private_notification_hosts": True}
    settings = load_settings(
        data_dir=data_dir, database_url=db_settings.app_database_url, server=server
    )
    (alice, bob), (alices, bobs) = asyncio.run(_accounts(settings))
    with (
        hook_server() as hooks,
        TestClient(create_app(make_runtime(settings)), base_url="http://127.0.0.1") as client,
    ):
        yield World(
            client=client,
            hooks=hooks,
            alice={"Authorization": f"Bearer {alice}"},
            bob={"Authorization": f"Bearer {bob}"},
            stream=f"/api/v1/streams/{alices}/notifications",
            bobs_stream=f"/api/v1/streams/{bobs}/notifications",
        )


def _ok(response: Response, status: int = 200) -> Any:
    assert response.status_code == status, response.text
    assert SECRET not in response.text and "abcdef0123456789abcdef" not in response.text
    return response.json() if response.content else None


def _refused(response: Response, status: int, code: str) -> dict[str, Any]:
    assert response.status_code == status, response.text
    body: dict[str, Any] = response.json()
    assert body["code"] == code and body["message"] and body["hint"], body
    return body


def test_add_list_test_and_delete_the_users_targets(world: World) -> None:
    client, alice = world.client, world.alice
    assert _ok(client.get(MINE, headers=alice)) == {"targets": []}
    mail = _ok(client.post(MINE, json={"url": MAIL, "label": "Inbox"}, headers=alice), 201)
    assert set(mail) == {"id", "label", "preview", "stream_id", "kinds", "created_at"}
    assert (mail["label"], mail["preview"], mail["stream_id"], mail["kinds"]) == (
        "Inbox",
        "mailto://***@example.com",
        None,
        None,
    )
    hook_url = world.hooks.url("/alice/abcdef0123456789abcdef")
    hook = _ok(client.post(MINE, json={"url": hook_url, "kinds": ["test"]}, headers=alice), 201)
    assert (hook["label"], hook["kinds"]) == ("JSON", ["test"])
    listed = _ok(client.get(MINE, headers=alice))["targets"]
    assert [t["id"] for t in listed] == [mail["id"], hook["id"]]

    delivery = _ok(client.post(f"{MINE}/{hook['id']}/test", headers=alice))
    assert delivery == {
        "target_id": hook["id"],
        "label": "JSON",
        "preview": hook["preview"],
        "ok": True,
        "error": None,
    }
    (posted,) = world.hooks.received()
    assert posted.path == "/alice/abcdef0123456789abcdef"
    assert posted.body["title"] == "ScholarStream test notification"
    assert "**JSON**" in posted.body["message"]

    _ok(client.delete(f"{MINE}/{hook['id']}", headers=alice), 204)
    assert [t["id"] for t in _ok(client.get(MINE, headers=alice))["targets"]] == [mail["id"]]
    _refused(client.delete(f"{MINE}/{hook['id']}", headers=alice), 404, "not_found")


def test_a_failing_target_is_a_delivery_that_says_why(world: World) -> None:
    client, alice = world.client, world.alice
    url = world.hooks.url("/broken/abcdef0123456789abcdef")
    target = _ok(client.post(world.stream, json={"url": url}, headers=alice), 201)
    delivery = _ok(client.post(f"{world.stream}/{target['id']}/test", headers=alice))
    assert delivery["ok"] is False and "500" in delivery["error"]


def test_a_streams_targets(world: World) -> None:
    client, alice = world.client, world.alice
    hook_url = world.hooks.url("/stream/abcdef0123456789abcdef")
    target = _ok(client.post(world.stream, json={"url": hook_url}, headers=alice), 201)
    assert target["stream_id"] == world.stream.split("/")[4]
    assert target["preview"] == world.hooks.url("/stream/***")
    assert [t["id"] for t in _ok(client.get(world.stream, headers=alice))["targets"]] == [
        target["id"]
    ]
    # Not one of the user's own targets.
    assert _ok(client.get(MINE, headers=alice)) == {"targets": []}
    _refused(client.post(f"{MINE}/{target['id']}/test", headers=alice), 404, "not_found")

    delivery = _ok(client.post(f"{world.stream}/{target['id']}/test", headers=alice))
    assert delivery["ok"] is True
    assert "one of your research streams" in world.hooks.received()[0].body["message"]
    _ok(client.delete(f"{world.stream}/{target['id']}", headers=alice), 204)
    assert _ok(client.get(world.stream, headers=alice)) == {"targets": []}


@pytest.mark.parametrize(
    "url", ["https://example.com/hook", "foo://bar", "", "mailto", f"nope://{SECRET}@x"]
)
def test_an_invalid_url_is_refused_and_nothing_saved(world: World, url: str) -> None:
    client, alice = world.client, world.alice
    for path in (MINE, world.stream):
        body = _refused(client.post(path, json={"url": url}, headers=alice), 422, "invalid_input")
        assert "ntfy://topic" in body["hint"] and SECRET not in str(body)
        assert _ok(client.get(path, headers=alice)) == {"targets": []}


def test_another_user_gets_404_for_targets_and_streams(world: World) -> None:
    client, alice, bob = world.client, world.alice, world.bob
    mine = _ok(client.post(MINE, json={"url": MAIL}, headers=alice), 201)
    streams = _ok(client.post(world.stream, json={"url": MAIL}, headers=alice), 201)

    assert _ok(client.get(MINE, headers=bob)) == {"targets": []}
    _refused(client.delete(f"{MINE}/{mine['id']}", headers=bob), 404, "not_found")
    _refused(client.post(f"{MINE}/{mine['id']}/test", headers=bob), 404, "not_found")
    _refused(client.get(world.stream, headers=bob), 404, "not_found")
    _refused(client.post(world.stream, json={"url": MAIL}, headers=bob), 404, "not_found")
    target = f"{world.stream}/{streams['id']}"
    _refused(client.delete(target, headers=bob), 404, "not_found")
    _refused(client.post(f"{target}/test", headers=bob), 404, "not_found")
    # Bob's own stream does not reach Alice's target either.
    bobs = f"{world.bobs_stream}/{streams['id']}"
    _refused(client.delete(bobs, headers=bob), 404, "not_found")

    assert len(_ok(client.get(world.stream, headers=alice))["targets"]) == 1
    assert len(_ok(client.get(MINE, headers=alice))["targets"]) == 1
    assert world.hooks.received() == []


def test_nobody_logged_in_is_refused(world: World) -> None:
    _refused(world.client.get(MINE), 401, "not_authenticated")
    _refused(world.client.post(MINE, json={"url": MAIL}), 401, "not_authenticated")
