from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi.testclient import TestClient

from scholarstream.bootstrap import create_app
from scholarstream.db import upgrade
from scholarstream.settings import Settings, load_settings
from tests.helpers import PASSWORD, create_users, make_runtime

ClientFactory = Callable[..., TestClient]


@pytest.fixture
def make_client(data_dir: Path) -> Iterator[ClientFactory]:
    """Build a TestClient for the app on settings with the given overrides (SQLite)."""
    clients: list[TestClient] = []

    def factory(
        settings: Settings | None = None,
        *,
        source_transport: httpx.AsyncBaseTransport | None = None,
        **overrides: Any,
    ) -> TestClient:
        settings = settings or load_settings(data_dir=data_dir, **overrides)
        upgrade(settings.app_database_url)
        runtime = make_runtime(settings, source_transport=source_transport)
        client = TestClient(create_app(runtime), base_url="http://127.0.0.1")
        client.__enter__()
        clients.append(client)
        return client

    yield factory
    for client in clients:
        client.__exit__(None, None, None)


@pytest.fixture
def client(make_client: ClientFactory) -> TestClient:
    return make_client()


@pytest.fixture
def multi(data_dir: Path, make_client: ClientFactory) -> tuple[Settings, ClientFactory]:
    settings = load_settings(data_dir=data_dir, server={"multi_user": True})
    upgrade(settings.app_database_url)
    create_users(settings, "alice", "bob")
    return settings, make_client


def login(client: TestClient, name: str) -> None:
    response = client.post("/api/v1/auth/login", json={"username": name, "password": PASSWORD})
    assert response.status_code == 200, response.text
    assert response.json()["username"] == name
