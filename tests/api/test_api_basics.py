from __future__ import annotations

from fastapi.testclient import TestClient

from scholarstream import __version__
from tests.api.conftest import ClientFactory


def test_health_reports_database_engine_and_mode(client: TestClient) -> None:
    response = client.get("/health")
    assert response.status_code == 200
    assert response.json() == {
        "status": "ok",
        "version": __version__,
        "database": "sqlite",
        "engine": "not running",
        "mode": "single-user",
        "offline": True,
    }


def test_every_response_carries_a_request_id(client: TestClient) -> None:
    generated = client.get("/health").headers["x-request-id"]
    assert len(generated) == 16
    assert (
        client.get("/health", headers={"X-Request-ID": "trace-42"}).headers["x-request-id"]
        == "trace-42"
    )
    assert (
        client.get("/health", headers={"X-Request-ID": "bad id\x7f"}).headers["x-request-id"]
        != "bad id"
    )


def test_unknown_route_uses_the_error_body(client: TestClient) -> None:
    response = client.get("/api/v1/does-not-exist", headers={"X-Request-ID": "abc"})
    assert response.status_code == 404
    assert response.json() == {
        "code": "not_found",
        "message": "Not Found",
        "hint": "Check the path against /docs.",
        "fields": [],
        "request_id": "abc",
    }


def test_wrong_method_uses_the_error_body(client: TestClient) -> None:
    response = client.delete("/health")
    assert response.status_code == 405
    assert response.json()["code"] == "method_not_allowed"


def test_validation_errors_name_the_field(client: TestClient) -> None:
    response = client.post("/api/v1/tokens", json={"name": "x", "expires_days": 0})
    assert response.status_code == 422
    body = response.json()
    assert body["code"] == "validation_error"
    assert body["fields"] == [
        {"field": "expires_days", "message": "expires_days must be at least 1"}
    ]
    assert "expires_days" in body["message"]
    missing = client.post("/api/v1/tokens", json={}).json()
    assert missing["fields"][0]["field"] == "name"
    bad_json = client.post(
        "/api/v1/tokens", content=b"{", headers={"content-type": "application/json"}
    )
    assert bad_json.status_code == 422


def test_product_errors_keep_their_status_and_hint(client: TestClient) -> None:
    response = client.put("/api/v1/me/provider-keys/mystery", json={"api_key": "abcdefghijk"})
    assert response.status_code == 400
    body = response.json()
    assert body["code"] == "unknown_provider"
    assert "BASE_URL" in body["hint"]


def test_openapi_lists_the_versioned_routes_and_error_model(client: TestClient) -> None:
    spec = client.get("/openapi.json").json()
    paths = set(spec["paths"])
    assert {
        "/health",
        "/api/v1/me",
        "/api/v1/tokens",
        "/api/v1/models",
        "/api/v1/auth/login",
    } <= paths
    assert all(p == "/health" or p.startswith("/api/v1/") for p in paths)
    assert "ErrorBody" in spec["components"]["schemas"]


def test_docs_are_served_from_the_package(client: TestClient) -> None:
    page = client.get("/docs")
    assert page.status_code == 200
    assert "/static/swagger/swagger-ui-bundle.js" in page.text
    assert "cdn" not in page.text.lower()
    asset = client.get("/static/swagger/swagger-ui-bundle.js")
    assert asset.status_code == 200
    assert len(asset.content) > 100_000


def test_models_endpoint_in_offline_mode(client: TestClient) -> None:
    body = client.get("/api/v1/models").json()
    assert body["offline"] is True
    default = next(r for r in body["roles"] if r["role"] == "default")
    assert default == {
        "role": "default",
        "purpose": default["purpose"],
        "model": None,
        "provider": None,
        "ready": False,
        "problem": "not configured (offline mode)",
        "source": None,
        "state": "offline",
        "status": "not configured (offline mode)",
        "checked_at": None,
    }
    providers = {p["name"]: p for p in body["providers"]}
    assert providers["openai"]["has_credentials"] is False
    assert providers["ollama"]["has_credentials"] is True


def test_models_endpoint_with_a_configured_role(make_client: ClientFactory) -> None:
    client = make_client(
        llm={
            "roles": {"default": "openai:gpt-4.1-mini"},
            "providers": {"openai": {"api_key": "sk-abcdef123456"}},
        }
    )
    body = client.get("/api/v1/models").json()
    assert body["offline"] is False
    roles = {r["role"]: r for r in body["roles"]}
    assert roles["fast"]["model"] == "openai:gpt-4.1-mini"
    assert roles["fast"]["ready"] is True
    assert "sk-abcdef123456" not in client.get("/api/v1/models").text
