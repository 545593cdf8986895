from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from scholarstream.api import create_app
from scholarstream.db import upgrade
from scholarstream.settings import Settings, load_settings
from tests.helpers import make_runtime

ClientFactory = Callable[..., TestClient]


@pytest.fixture
def make_client(data_dir: Path) -> Iterator[ClientFactory]:
    """Build a TestClient for the app on settings with the given overrides (SQLite)."""
    clients: list[TestClient] = []

    def factory(settings: Settings | None = None, **overrides: Any) -> TestClient:
        settings = settings or load_settings(data_dir=data_dir, **overrides)
        upgrade(settings.app_database_url)
        client = TestClient(create_app(make_runtime(settings)), base_url="http://127.0.0.1")
        client.__enter__()
        clients.append(client)
        return client

    yield factory
    for client in clients:
        client.__exit__(None, None, None)


@pytest.fixture
def client(make_client: ClientFactory) -> TestClient:
    return make_client()
