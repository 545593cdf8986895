from __future__ import annotations

from fastapi.testclient import TestClient

from scholarstream.settings import Settings
from tests.api.conftest import ClientFactory, login
from tests.helpers import PASSWORD


def test_single_user_mode_needs_nologin(client: TestClient) -> None:
    me = client.get("/api/v1/me").json()
    assert (me["username"], me["mode"], me["is_admin"]) == ("local", "single-user", True)
    refused = client.post("/api/v1/auth/login", json={"username": "x", "password": "y"})
    assert refused.status_code == 409
    assert "MULTI_USER" in refused.json()["hint"]


def test_multi_user_mode_requires_credentials(multi: tuple[Settings, ClientFactory]) -> None:
    settings, make_client = multi
    client = make_client(settings)
    response = client.get("/api/v1/me")
    assert response.status_code == 401
    assert response.json()["code"] == "not_authenticated"
    assert "scholarstream tokens create" in response.json()["hint"]
    wrong = client.post("/api/v1/auth/login", json={"username": "alice", "password": "nope"})
    assert wrong.status_code == 401
    assert wrong.json()["message"] == "Wrong username or password."
    assert client.get("/health").status_code == 200


def test_cookie_login_and_logout(multi: tuple[Settings, ClientFactory]) -> None:
    settings, make_client = multi
    client = make_client(settings)
    login(client, "alice")
    cookie = client.cookies.get("scholarstream_session")
    assert cookie
    assert client.get("/api/v1/me").json()["username"] == "alice"
    origin = {"Origin": "http://127.0.0.1"}
    assert client.post("/api/v1/auth/logout", headers=origin).status_code == 204
    client.cookies.set("scholarstream_session", cookie)
    assert client.get("/api/v1/me").status_code == 401


def test_cookie_writes_from_another_site_are_refused(multi: tuple[Settings, ClientFactory]) -> None:
    settings, make_client = multi
    client = make_client(settings)
    login(client, "alice")
    body = {"name": "x"}
    evil = client.post("/api/v1/tokens", json=body, headers={"Origin": "http://evil.example"})
    assert evil.status_code == 403
    assert evil.json()["code"] == "permission_denied"
    assert client.post("/api/v1/tokens", json=body).status_code == 403  # no origin at all
    same = client.post("/api/v1/tokens", json=body, headers={"Origin": "http://127.0.0.1"})
    assert same.status_code == 201


def test_bearer_tokens_work_and_can_be_revoked(multi: tuple[Settings, ClientFactory]) -> None:
    settings, make_client = multi
    browser = make_client(settings)
    login(browser, "alice")
    created = browser.post(
        "/api/v1/tokens", json={"name": "script"}, headers={"Origin": "http://127.0.0.1"}
    ).json()
    token = created["token"]
    assert token.startswith(created["prefix"])
    api = make_client(settings)
    auth = {"Authorization": f"Bearer {token}"}
    assert api.get("/api/v1/me", headers=auth).json()["username"] == "alice"
    listed = api.get("/api/v1/tokens", headers=auth).json()
    assert [t["name"] for t in listed] == ["script"]
    assert "token" not in listed[0]
    assert api.delete(f"/api/v1/tokens/{created['id']}", headers=auth).status_code == 204
    assert api.get("/api/v1/me", headers=auth).status_code == 401
    assert api.get("/api/v1/me", headers={"Authorization": "Bearer ss_nonsense"}).status_code == 401


def test_users_cannot_reach_each_others_data(multi: tuple[Settings, ClientFactory]) -> None:
    settings, make_client = multi
    alice, bob = make_client(settings), make_client(settings)
    login(alice, "alice")
    login(bob, "bob")
    origin = {"Origin": "http://127.0.0.1"}
    token_id = alice.post("/api/v1/tokens", json={"name": "a"}, headers=origin).json()["id"]
    assert (
        alice.put(
            "/api/v1/me/provider-keys/openai", json={"api_key": "sk-alice-key-1234"}, headers=origin
        ).status_code
        == 204
    )
    assert bob.get("/api/v1/tokens").json() == []
    assert bob.get("/api/v1/me/provider-keys").json() == []
    revoke = bob.delete(f"/api/v1/tokens/{token_id}", headers=origin)
    assert revoke.status_code == 404
    assert revoke.json()["code"] == "not_found"
    assert [t["id"] for t in alice.get("/api/v1/tokens").json()] == [token_id]


def test_provider_keys_are_never_returned(client: TestClient) -> None:
    secret = "sk-very-secret-user-key-42"
    assert (
        client.put("/api/v1/me/provider-keys/openai", json={"api_key": secret}).status_code == 204
    )
    listed = client.get("/api/v1/me/provider-keys")
    assert [k["provider"] for k in listed.json()] == ["openai"]
    assert secret not in listed.text
    models = client.get("/api/v1/models").json()
    assert {p["name"]: p["has_credentials"] for p in models["providers"]}["openai"] is True
    assert secret not in client.get("/settings").text
    assert client.delete("/api/v1/me/provider-keys/openai").status_code == 204
    assert client.get("/api/v1/me/provider-keys").json() == []
    assert client.get("/api/v1/me/usage").json() == []


def test_pages_send_visitors_to_login_and_back(multi: tuple[Settings, ClientFactory]) -> None:
    settings, make_client = multi
    client = make_client(settings)
    response = client.get("/settings?tab=keys", follow_redirects=False)
    assert response.status_code == 303
    assert response.headers["location"] == "/login?next=/settings%3Ftab%3Dkeys"
    login = client.post(
        "/login",
        data={"username": "alice", "password": PASSWORD, "next": "/settings?tab=keys"},
        follow_redirects=False,
    )
    assert login.status_code == 303 and login.headers["location"] == "/settings?tab=keys"
    offsite = client.post(
        "/login",
        data={"username": "alice", "password": PASSWORD, "next": "//evil.example/"},
        follow_redirects=False,
    )
    assert offsite.headers["location"] == "/"
    wrong = client.post("/login", data={"username": "alice", "password": "nope"})
    assert wrong.status_code == 401 and "Wrong username or password." in wrong.text


def test_single_user_mode_refuses_other_sites_and_host_names(client: TestClient) -> None:
    body = {"api_key": "sk-abcdefghijkl"}
    evil = client.put(
        "/api/v1/me/provider-keys/openai", json=body, headers={"Origin": "http://evil.example"}
    )
    assert evil.status_code == 403
    assert client.get("/api/v1/me/provider-keys").json() == []
    own = client.put(
        "/api/v1/me/provider-keys/openai", json=body, headers={"Origin": "http://127.0.0.1"}
    )
    assert own.status_code == 204
    assert client.put("/api/v1/me/provider-keys/openai", json=body).status_code == 204  # CLI, curl
    rebound = client.get("/api/v1/me", headers={"Host": "attacker.example"})
    assert rebound.status_code == 400
    assert rebound.json()["code"] == "invalid_host"
    assert client.get("/health", headers={"Host": "[::1]:8000"}).status_code == 200
    assert client.get("/health", headers={"Host": "localhost:8000"}).status_code == 200


def test_routes_of_the_released_user_keep_the_same_checks(
    client: TestClient, multi: tuple[Settings, ClientFactory]
) -> None:
    # Single-user mode: the local user, with the same cross-site refusal as other routes.
    assert client.get("/api/v1/chat/conversations").json() == []
    rename = {"title": "x"}
    missing = "/api/v1/chat/conversations/00000000-0000-0000-0000-000000000000"
    evil = client.patch(missing, json=rename, headers={"Origin": "http://evil.example"})
    assert evil.status_code == 403
    own = client.patch(missing, json=rename, headers={"Origin": "http://127.0.0.1"})
    assert own.status_code == 404  # through the check, to the route
    assert client.patch(missing, json=rename).status_code == 404  # CLI, curl
    # Multi-user mode: nobody logged in is refused; a logged-in user sees only their own.
    settings, make_client = multi
    alice = make_client(settings)
    assert alice.get("/api/v1/chat/conversations").status_code == 401
    login(alice, "alice")
    assert alice.get("/api/v1/chat/conversations").json() == []
