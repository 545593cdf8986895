"""CSRF: every write a browser can make with the session cookie (API routes and the web
pages' forms) is refused when it comes from another site or says nowhere where it comes
from. The routes are enumerated, so a new write route without the check fails here."""

from __future__ import annotations

import re

import pytest
from fastapi.routing import APIRoute, iter_route_contexts
from fastapi.testclient import TestClient

from scholarstream.settings import Settings
from tests.api.conftest import ClientFactory, login

WRITES = {"POST", "PUT", "PATCH", "DELETE"}
# Writes that need no session, so a forged one gains an attacker nothing: logging in
# (the attacker would log the victim into the attacker's own account, which SameSite=Lax
# cookies and the password already prevent) and logging out.
NO_SESSION_NEEDED = {
    ("POST", "/api/v1/auth/login"),
    ("POST", "/api/v1/auth/logout"),
    ("POST", "/login"),
    ("POST", "/logout"),
}
ID = "00000000-0000-4000-8000-000000000000"


def _writes(client: TestClient) -> list[tuple[str, str]]:
    found = []
    # Included routers are resolved lazily: iter_route_contexts gives their routes' paths.
    for route in iter_route_contexts(client.app.routes):  # type: ignore[attr-defined]
        if not isinstance(route.original_route, APIRoute) or route.path is None:
            continue
        for method in sorted((route.methods or set()) & WRITES):
            if (method, route.path) not in NO_SESSION_NEEDED:
                found.append((method, re.sub(r"\{[^}]+\}", ID, route.path)))
    return found


@pytest.fixture
def browser(multi: tuple[Settings, ClientFactory]) -> TestClient:
    settings, make_client = multi
    client = make_client(settings)
    login(client, "alice")
    return client


@pytest.mark.parametrize(
    "headers",
    [{"Origin": "https://evil.example"}, {"Referer": "https://evil.example/page"}, {}],
    ids=["foreign-origin", "foreign-referer", "no-origin"],
)
def test_cookie_writes_from_elsewhere_are_refused_on_every_route(
    browser: TestClient, headers: dict[str, str]
) -> None:
    writes = _writes(browser)
    assert len(writes) >= 30, writes  # the enumeration found the product's routes
    let_through = []
    for method, path in writes:
        response = browser.request(method, path, headers=headers, json={})
        body = response.json() if "json" in response.headers.get("content-type", "") else {}
        if response.status_code != 403 or body.get("code") != "permission_denied":
            let_through.append(f"{method} {path} -> {response.status_code} {response.text[:80]}")
    assert let_through == []
    # The session still works from our own pages.
    assert browser.get("/api/v1/me").json()["username"] == "alice"


def test_the_same_writes_from_our_pages_pass_the_check(browser: TestClient) -> None:
    """Not refused as cross-site (they may still be 404/422: the ids are made up)."""
    for method, path in _writes(browser):
        response = browser.request(method, path, headers={"Origin": "http://127.0.0.1"}, json={})
        assert response.status_code != 403 or "Cross-site" not in response.text, (method, path)
