"""Model setup through the API (issue 22, point 1): a user's model per role, an admin's
server defaults, users' OpenAI-compatible endpoints, their models and the check."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pydantic_ai.models
import pytest
from fastapi.testclient import TestClient

from scholarstream.accounts import create_user
from scholarstream.db import upgrade
from scholarstream.settings import Settings, load_settings
from tests.api.conftest import ClientFactory, login
from tests.helpers import PASSWORD, create_users, make_runtime
from tests.llm.model_setup_endpoint import Endpoint, model_endpoint


@pytest.fixture
def endpoint(monkeypatch: pytest.MonkeyPatch) -> Iterator[Endpoint]:
    monkeypatch.setattr(pydantic_ai.models, "ALLOW_MODEL_REQUESTS", True)
    with model_endpoint(("tiny-instruct", "other")) as served:
        yield served


def _roles(client: TestClient) -> dict[str, dict[str, object]]:
    return {r["role"]: r for r in client.get("/api/v1/models").json()["roles"]}


def test_a_saved_key_and_a_choice_turn_a_model_on(client: TestClient) -> None:
    refused = client.put("/api/v1/models/roles/default", json={"model": "openai:gpt-4.1-mini"})
    assert refused.status_code == 400
    assert refused.json()["code"] == "missing_credentials"
    assert client.get("/api/v1/chat/config", params={"page": "home"}).json()["offline"] is True

    key = client.put("/api/v1/me/provider-keys/openai", json={"api_key": "sk-user-123456789"})
    assert key.status_code == 204
    chosen = client.put("/api/v1/models/roles/default", json={"model": "openai:gpt-4.1-mini"})
    assert chosen.status_code == 200, chosen.text
    assert chosen.json()["source"] == "user"
    # Nothing was asked of the model yet: configured, not "ready" for sure.
    assert chosen.json()["status"] == "configured (not checked)"

    body = client.get("/api/v1/models").json()
    assert body["offline"] is False
    roles = {r["role"]: r for r in body["roles"]}
    assert roles["fast"]["model"] == "openai:gpt-4.1-mini"  # default serves every role
    assert roles["fast"]["source"] == "user"
    assert client.get("/api/v1/chat/config", params={"page": "home"}).json()["offline"] is False
    assert "sk-user-123456789" not in client.get("/api/v1/models").text

    assert client.delete("/api/v1/models/roles/default").status_code == 204
    assert client.get("/api/v1/models").json()["offline"] is True


def test_a_choice_of_an_unknown_provider_or_role_is_refused(client: TestClient) -> None:
    unknown = client.put("/api/v1/models/roles/default", json={"model": "nowhere:model"})
    assert unknown.status_code == 400
    assert unknown.json()["code"] == "unknown_provider"
    bad_role = client.put("/api/v1/models/roles/Not%20A%20Role", json={"model": "ollama:x"})
    assert bad_role.status_code == 422
    no_provider = client.put("/api/v1/models/roles/default", json={"model": "gpt-4.1"})
    assert no_provider.status_code == 400
    spaced = client.put("/api/v1/models/roles/default", json={"model": "ollama:two words"})
    assert spaced.status_code == 422
    assert "without spaces" in spaced.json()["hint"]


def test_endpoints_are_validated_and_their_key_is_never_returned(client: TestClient) -> None:
    cases = {
        "openai": "http://127.0.0.1:8080/v1",  # shadows a built-in provider
        "Bad Name": "http://127.0.0.1:8080/v1",
        "mylocal": "ftp://127.0.0.1/v1",
    }
    for name, url in cases.items():
        response = client.put(f"/api/v1/models/endpoints/{name}", json={"base_url": url})
        assert response.status_code == 422, (name, response.text)
        assert response.json()["hint"]
    with_password = client.put(
        "/api/v1/models/endpoints/mylocal", json={"base_url": "http://me:secret@127.0.0.1/v1"}
    )
    assert with_password.status_code == 422

    saved = client.put(
        "/api/v1/models/endpoints/mylocal",
        json={"base_url": "http://127.0.0.1:8080/v1", "api_key": "local-key-123"},
    )
    assert saved.status_code == 200, saved.text
    out = saved.json()
    assert out["has_key"] is True
    # A local server's default until a check says otherwise.
    assert out["effective_structured_output"] == "native"
    assert "local-key-123" not in client.get("/api/v1/models").text
    providers = {p["name"]: p for p in client.get("/api/v1/models").json()["providers"]}
    assert providers["mylocal"]["kind"] == "endpoint"

    # Kept when left out, removed when empty.
    kept = client.put("/api/v1/models/endpoints/mylocal", json={"base_url": out["base_url"]})
    assert kept.json()["has_key"] is True
    dropped = client.put(
        "/api/v1/models/endpoints/mylocal", json={"base_url": out["base_url"], "api_key": ""}
    )
    assert dropped.json()["has_key"] is False
    assert client.delete("/api/v1/models/endpoints/mylocal").status_code == 204
    assert client.get("/api/v1/models/endpoints").json() == []
    assert client.delete("/api/v1/models/endpoints/mylocal").status_code == 404


def test_an_endpoint_lists_its_models_and_its_check_is_remembered(
    client: TestClient, endpoint: Endpoint
) -> None:
    saved = client.put("/api/v1/models/endpoints/mylocal", json={"base_url": endpoint.base_url})
    assert saved.status_code == 200
    listed = client.get("/api/v1/models/endpoints/mylocal/models")
    assert listed.json() == {"models": ["tiny-instruct", "other"]}

    chosen = client.put("/api/v1/models/roles/default", json={"model": "mylocal:tiny-instruct"})
    assert chosen.status_code == 200, chosen.text
    assert chosen.json()["status"] == "configured (not checked)"

    checked = client.post("/api/v1/models/check", json={"role": "default"})
    assert checked.status_code == 200, checked.text
    report = checked.json()
    assert report["usable"] is True
    assert [s["name"] for s in report["steps"]] == [
        "reachable",
        "completion",
        "tools",
        "json_schema",
    ]
    assert all(s["ok"] for s in report["steps"]), report
    assert report["structured_output"] == "native"

    roles = _roles(client)
    assert roles["default"]["state"] == "checked"
    assert str(roles["default"]["status"]).startswith("checked OK at ")
    stored = client.get("/api/v1/models/endpoints").json()[0]
    assert (stored["checked_model"], stored["check_ok"]) == ("mylocal:tiny-instruct", True)
    assert stored["effective_supports_tools"] is True


def test_a_server_without_tools_is_detected_and_stored(
    client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(pydantic_ai.models, "ALLOW_MODEL_REQUESTS", True)
    with model_endpoint(tools=False) as served:
        client.put("/api/v1/models/endpoints/nojinja", json={"base_url": served.base_url})
        report = client.post(
            "/api/v1/models/check", json={"endpoint": "nojinja", "model": "tiny-instruct"}
        ).json()
    steps = {s["name"]: s for s in report["steps"]}
    assert steps["tools"]["ok"] is False
    assert "--jinja" in steps["tools"]["detail"]  # the server's own words, and what to do
    assert steps["json_schema"]["ok"] is True
    stored = client.get("/api/v1/models/endpoints").json()[0]
    assert stored["effective_supports_tools"] is False
    assert stored["effective_structured_output"] == "native"


def test_a_check_of_an_unreachable_endpoint_says_so(client: TestClient) -> None:
    client.put("/api/v1/models/endpoints/gone", json={"base_url": "http://127.0.0.1:9/v1"})
    client.put("/api/v1/models/roles/default", json={"model": "gone:model"})
    report = client.post("/api/v1/models/check", json={"role": "default"}).json()
    assert report["usable"] is False
    assert report["steps"][0]["name"] == "reachable"
    assert report["steps"][0]["ok"] is False
    default = _roles(client)["default"]
    assert default["state"] == "check_failed"
    assert "reachable" in str(default["status"])


def _logged_in(make_client: ClientFactory, settings: Settings, name: str) -> TestClient:
    client = make_client(settings)
    login(client, name)
    client.headers["Origin"] = "http://127.0.0.1"  # what our own pages send with the cookie
    return client


@pytest.fixture
def shared(data_dir: object, make_client: ClientFactory) -> tuple[Settings, ClientFactory]:
    settings = load_settings(data_dir=data_dir, server={"multi_user": True})
    upgrade(settings.app_database_url)
    create_users(settings, "alice", "bob")

    async def admin() -> None:
        runtime = make_runtime(settings)
        try:
            async with runtime.database.session() as session:
                await create_user(session, "root", PASSWORD, is_admin=True)
        finally:
            await runtime.close()

    asyncio.run(admin())
    return settings, make_client


def test_only_admins_set_server_defaults_and_every_user_gets_them(
    shared: tuple[Settings, ClientFactory],
) -> None:
    settings, make_client = shared
    alice = _logged_in(make_client, settings, "alice")
    refused = alice.put("/api/v1/models/server-defaults/default", json={"model": "ollama:qwen"})
    assert refused.status_code == 403
    assert "administrator" in refused.json()["message"]
    assert alice.get("/api/v1/models").json()["is_admin"] is False

    root = _logged_in(make_client, settings, "root")
    set_default = root.put("/api/v1/models/server-defaults/default", json={"model": "ollama:qwen"})
    assert set_default.status_code == 200, set_default.text
    assert root.get("/api/v1/models").json()["server_defaults"] == {"default": "ollama:qwen"}

    default = _roles(alice)["default"]
    assert (default["model"], default["source"]) == ("ollama:qwen", "server default")
    # Her own choice wins over the server default.
    alice.put("/api/v1/models/roles/default", json={"model": "ollama:llama3.1"})
    assert _roles(alice)["default"]["source"] == "user"

    assert root.delete("/api/v1/models/server-defaults/default").status_code == 204
    assert root.get("/api/v1/models").json()["server_defaults"] == {}


def test_on_a_shared_server_only_admins_add_endpoints_on_its_network(
    shared: tuple[Settings, ClientFactory],
) -> None:
    settings, make_client = shared
    alice = _logged_in(make_client, settings, "alice")
    for url in ("http://127.0.0.1:11434/v1", "http://10.0.0.5/v1", "http://localhost:8080/v1"):
        refused = alice.put("/api/v1/models/endpoints/mine", json={"base_url": url})
        assert refused.status_code == 403, url
        assert "administrator" in refused.json()["message"]
    public = alice.put("/api/v1/models/endpoints/mine", json={"base_url": "https://8.8.8.8/v1"})
    assert public.status_code == 200, public.text

    root = _logged_in(make_client, settings, "root")
    local = root.put("/api/v1/models/endpoints/lab", json={"base_url": "http://10.0.0.5/v1"})
    assert local.status_code == 200


def test_endpoints_can_be_turned_off_for_users(
    data_dir: object, make_client: ClientFactory
) -> None:
    settings = load_settings(
        data_dir=data_dir, server={"multi_user": True}, llm={"user_endpoints": "off"}
    )
    upgrade(settings.app_database_url)
    create_users(settings, "carol")
    carol = _logged_in(make_client, settings, "carol")
    refused = carol.put("/api/v1/models/endpoints/mine", json={"base_url": "https://8.8.8.8/v1"})
    assert refused.status_code == 403
    assert "does not let users add" in refused.json()["message"]
