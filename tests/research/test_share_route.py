"""``GET /shared/research/{token}``: a stored report is served to anyone with the link (no
login, in multi-user mode too) with the headers that keep it inert; any other token is a
404, and nothing outside the store can be reached through it."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from scholarstream.bootstrap import create_app
from scholarstream.db import upgrade
from scholarstream.research import (
    CONTENT_SECURITY_POLICY,
    ResearchStatus,
    ShareStorage,
    new_token,
    render_share_page,
)
from scholarstream.settings import Settings, load_settings
from tests.helpers import make_runtime
from tests.research.builders import LATER, research, results


@pytest.fixture(params=[False, True], ids=["single-user", "multi-user"])
def settings(request: pytest.FixtureRequest, data_dir: Path) -> Settings:
    settings = load_settings(
        data_dir=data_dir,
        server={"multi_user": request.param, "public_url": "https://scholar.example.org"},
        research={"share_url": f"memory://route-shares-{uuid.uuid4().hex}"},
    )
    upgrade(settings.app_database_url)
    return settings


@pytest.fixture
def client(settings: Settings) -> Iterator[TestClient]:
    with TestClient(create_app(make_runtime(settings)), base_url="http://127.0.0.1") as client:
        yield client


def store_page(settings: Settings) -> tuple[str, str]:
    page = render_share_page(
        research(ResearchStatus.COMPLETED, llm_results=results("completed")), now=LATER
    )
    token = new_token()
    asyncio.run(ShareStorage.for_settings(settings).write(token, page))
    return token, page


def test_a_shared_report_is_public_and_served_with_safe_headers(
    client: TestClient, settings: Settings
) -> None:
    token, page = store_page(settings)
    response = client.get(f"/shared/research/{token}")
    assert response.status_code == 200, response.text
    assert response.text == page
    assert response.headers["content-type"] == "text/html; charset=utf-8"
    assert response.headers["content-security-policy"] == CONTENT_SECURITY_POLICY
    assert "default-src 'none'" in response.headers["content-security-policy"]
    assert response.headers["x-content-type-options"] == "nosniff"
    assert response.headers["referrer-policy"] == "no-referrer"
    assert response.headers["x-robots-tag"] == "noindex, nofollow"
    assert response.headers["x-frame-options"] == "DENY"
    assert "set-cookie" not in response.headers


OTHER_TOKENS = [
    "unknown",
    "A" * 43,  # well formed, nothing stored under it
    "..%2F..%2Fscholarstream.sqlite",
    "%2e%2e%2f%2e%2e%2f" + "a" * 30,
]


def test_any_other_token_is_not_found(client: TestClient, settings: Settings) -> None:
    store_page(settings)
    for token in OTHER_TOKENS:
        response = client.get(f"/shared/research/{token}", headers={"accept": "application/json"})
        assert response.status_code == 404, (token, response.text)
        assert response.json()["code"] == "not_found"
        # A browser gets a page that says so, as inert as a report, never an error body.
        page = client.get(f"/shared/research/{token}", headers={"accept": "text/html"})
        assert page.status_code == 404
        assert page.headers["content-type"] == "text/html; charset=utf-8"
        assert '"code"' not in page.text
        assert "not found" in page.text.lower()


def test_a_shared_report_is_served_under_any_host_name_and_nothing_else_is(
    client: TestClient, settings: Settings
) -> None:
    # Single-user mode refuses other host names (DNS rebinding), but a shared report is
    # for anyone: behind the user's reverse proxy it is asked for under a public name.
    token, page = store_page(settings)
    public = {"Host": "scholar.example.org"}
    assert client.get(f"/shared/research/{token}", headers=public).text == page
    api = client.get("/api/v1/research", headers=public)
    if settings.server.multi_user:
        assert api.status_code == 401  # the API still asks who you are
    else:
        assert (api.status_code, api.json()["code"]) == (400, "invalid_host")
