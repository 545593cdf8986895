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
from tests.helpers import PASSWORD

WRITES = {"POST", "PUT", "PATCH", "DELETE"}
# Logging in needs no session, and tools without a browser (the CLI, curl) log in with
# neither Origin nor Referer; a browser always names the page that sent its POST, so a
# login from another site's page is refused (login CSRF) like every other write.
LOGINS = {("POST", "/api/v1/auth/login"), ("POST", "/login")}
ID = "00000000-0000-4000-8000-000000000000"
ID = "00000000-0000-4000-8000-000000000000"


def _writes(client: TestClient) -> list[tuple[str, str]]:
    found = []
    # Included routers are resolved lazily: iter_route_contexts gives their routes' paths.
    for route in iter_route_contexts(client.app.routes):  # type: ignore[attr-defined]
        if not isinstance(route.original_route, APIRoute) or route.path is None:
            continue
        for method in sorted((route.methods or set()) & WRITES):
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
    assert LOGINS | {("POST", "/api/v1/auth/logout")} <= set(writes)
    let_through = []
    for method, path in writes:
        if not headers and (method, path) in LOGINS:
            continue
        response = browser.request(method, path, headers=headers, json={})
        is_json = "json" in response.headers.get("content-type", "") and response.content
        body = response.json() if is_json else {}
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


EVIL = {"Origin": "https://evil.example"}


def _credentials(name: str) -> dict[str, str]:
    return {"username": name, "password": PASSWORD}


def test_a_foreign_page_cannot_log_the_browser_into_another_account(
    multi: tuple[Settings, ClientFactory],
) -> None:
    settings, make_client = multi
    client = make_client(settings)
    forged_api = client.post("/api/v1/auth/login", json=_credentials("bob"), headers=EVIL)
    forged_form = client.post(
        "/login",
        data=_credentials("bob"),
        headers={"Referer": "https://evil.example/page"},
        follow_redirects=False,
    )
    for forged in (forged_api, forged_form):
        assert forged.status_code == 403, forged.text
        assert forged.json()["code"] == "permission_denied"
        assert "another site" in forged.json()["message"]
        assert "set-cookie" not in forged.headers
    assert client.get("/api/v1/me").status_code == 401  # nobody is logged in
    # Our own login page, and tools without a browser, still log in.
    own = client.post(
        "/login",
        data=_credentials("bob"),
        headers={"Origin": "http://127.0.0.1"},
        follow_redirects=False,
    )
    assert own.status_code == 303
    assert client.get("/api/v1/me").json()["username"] == "bob"
    cli = make_client(settings)
    login(cli, "alice")
    assert cli.get("/api/v1/me").json()["username"] == "alice"


def test_a_foreign_page_cannot_log_the_user_out(browser: TestClient) -> None:
    for headers in (EVIL, {"Referer": "https://evil.example/page"}, {}):
        forged = browser.post("/api/v1/auth/logout", headers=headers)
        assert forged.status_code == 403, (headers, forged.text)
        assert "set-cookie" not in forged.headers
        assert browser.get("/api/v1/me").json()["username"] == "alice"
    own = browser.post("/api/v1/auth/logout", headers={"Origin": "http://127.0.0.1"})
    assert own.status_code == 204
    assert browser.get("/api/v1/me").status_code == 401
