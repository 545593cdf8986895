"""Edges of every request, whatever the route (issue 20): a NUL character in any text
input is refused with 422 naming the field (PostgreSQL cannot store it); every response
forbids framing; the single-user Host check parses the header strictly; an unhandled
error answers 500 with the request id."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from scholarstream.public_addresses import is_loopback_host
from scholarstream.settings import load_settings
from tests.api.conftest import ClientFactory
from tests.helpers import PASSWORD, create_users

NUL = "\u0000"

# (method, path, JSON body, the field the answer names): the routes where a NUL gave 500
# on PostgreSQL, as the audit found them.
JSON_INPUTS = [
    ("POST", "/api/v1/tokens", {"name": f"ci{NUL}"}, "name"),
    ("POST", "/api/v1/research/draft", {"prompt": f"GLP-1{NUL} agonists?"}, "prompt"),
    (
        "POST",
        "/api/v1/ai-columns",
        {"table": "library", "name": f"R{NUL}", "criteria": "RCT?", "output_type": "yes_no"},
        "name",
    ),
    (
        "POST",
        "/api/v1/me/notifications",
        {"url": "ntfy://topic", "label": f"phone{NUL}"},
        "label",
    ),
    ("POST", "/api/v1/search/runs", {"question": f"melanocortin{NUL}"}, "question"),
    (
        "POST",
        "/api/v1/chat/messages",
        {"message": "hello", "context": {"current_page": f"library{NUL}"}},
        "context.current_page",
    ),
    ("POST", "/api/v1/tokens", {f"na{NUL}me": "ci"}, f"na{NUL}me"),
    ("POST", "/api/v1/sources/search", {"sources": ["pubmed", f"x{NUL}"]}, "sources.1"),
]
QUERY_INPUTS = [
    ("/api/v1/library/records?publication_type=%00", "publication_type"),
    ("/api/v1/library/export?format=ris&publication_type=a%00b", "publication_type"),
    ("/api/v1/chat/config?page=library%00", "page"),
]


def assert_names_the_field(response: Any, field: str) -> None:
    assert response.status_code == 422, response.text
    body = response.json()
    assert body["code"] == "validation_error"
    assert [f["field"] for f in body["fields"]] == [field]
    assert "NUL" in body["message"]
    assert "Remove" in body["hint"]
    assert body["request_id"] == response.headers["x-request-id"]


@pytest.mark.parametrize(("method", "path", "body", "field"), JSON_INPUTS)
def test_a_nul_in_a_json_body_is_refused_naming_the_field(
    make_client: ClientFactory,
    database_url: str,
    method: str,
    path: str,
    body: dict[str, object],
    field: str,
) -> None:
    client = make_client(database_url=database_url)
    response = client.request(method, path, json=body)
    assert_names_the_field(response, field)


@pytest.mark.parametrize(("path", "field"), QUERY_INPUTS)
def test_a_nul_in_a_query_parameter_is_refused_naming_it(
    make_client: ClientFactory, database_url: str, path: str, field: str
) -> None:
    client = make_client(database_url=database_url)
    assert_names_the_field(client.get(path), field)


def test_a_nul_in_the_path_is_refused(make_client: ClientFactory, database_url: str) -> None:
    client = make_client(database_url=database_url)
    response = client.get("/api/v1/sources/pub%00med/search?q=x")
    assert_names_the_field(response, "path")


def test_a_nul_at_login_without_a_token_is_refused(
    make_client: ClientFactory, data_dir: Path, database_url: str
) -> None:
    settings = load_settings(
        data_dir=data_dir, database_url=database_url, server={"multi_user": True}
    )
    client = make_client(settings)
    create_users(settings, "alice")
    response = client.post("/api/v1/auth/login", json={"username": f"al{NUL}ice", "password": "x"})
    assert_names_the_field(response, "username")
    # The web form too (urlencoded).
    form = client.post(
        "/login",
        data={"username": "alice", "password": f"{PASSWORD}{NUL}"},
        headers={"Origin": "http://127.0.0.1"},
    )
    assert_names_the_field(form, "password")


def test_a_nul_in_a_multipart_text_field_or_file_name_is_refused(client: TestClient) -> None:
    ris = b"TY  - JOUR\nTI  - A title\nER  -\n"
    response = client.post(
        "/api/v1/library/imports",
        files={"file": ("a.ris", ris, "application/x-research-info-systems")},
        data={"format": f"ris{NUL}"},
    )
    assert_names_the_field(response, "format")
    # httpx (like browsers) writes a NUL in a file name as %00; a raw client need not.
    raw = (
        b'--b0undary\r\nContent-Disposition: form-data; name="file"; filename="a\x00.ris"\r\n'
        b"Content-Type: text/plain\r\n\r\n" + ris + b"\r\n--b0undary--\r\n"
    )
    named = client.post(
        "/api/v1/library/imports",
        content=raw,
        headers={"content-type": "multipart/form-data; boundary=b0undary"},
    )
    assert_names_the_field(named, "file")
    # A NUL inside the uploaded file itself is the importer's business, not an error.
    binary = client.post(
        "/api/v1/library/imports",
        files={"file": ("a.ris", ris.replace(b"A title", b"A\x00title"), "text/plain")},
    )
    assert binary.status_code == 201, binary.text


def test_text_that_only_spells_a_nul_escape_is_accepted(client: TestClient) -> None:
    response = client.post("/api/v1/tokens", json={"name": "the \\u0000 escape"})
    assert response.status_code == 201, response.text
    assert response.json()["name"] == "the \\u0000 escape"


# Framing: every page and every answer of the app.
FRAMED = ["/", "/library", "/docs", "/health", "/api/v1/me", "/api/v1/nothing-here"]


@pytest.mark.parametrize("path", FRAMED)
def test_no_response_can_be_framed(client: TestClient, path: str) -> None:
    response = client.get(path)
    assert response.headers["x-frame-options"] == "DENY"
    assert "frame-ancestors 'none'" in response.headers["content-security-policy"]
    assert response.headers["x-content-type-options"] == "nosniff"


def test_refusals_made_before_routing_cannot_be_framed_either(client: TestClient) -> None:
    response = client.get("/", headers={"Host": "evil.example"})
    assert response.status_code == 400
    assert response.headers["x-frame-options"] == "DENY"
    assert "frame-ancestors 'none'" in response.headers["content-security-policy"]


# The Host check of single-user mode.
REFUSED_HOSTS = [
    "127.0.0.1:8824@evil.example",
    "127.0.0.1@evil.example",
    "localhost:8000/evil",
    "localhost:8000 evil",
    "127.0.0.1:",
    "127.0.0.1:99999",
    "127.0.0.1:80:80",
    "127.0.0.1:8o",
    "[::1]evil.example",
    "[::1]:80@evil.example",
    "[::1",
    "localhost.evil.example",
    "evil.example#127.0.0.1",
    "127.0.0.1\t",
    "",
]
ACCEPTED_HOSTS = [
    "127.0.0.1",
    "127.0.0.1:8824",
    "127.9.8.7:1",
    "localhost",
    "LOCALHOST:8000",
    "[::1]",
    "[::1]:8824",
]


@pytest.mark.parametrize("host", REFUSED_HOSTS)
def test_a_host_with_junk_is_refused(client: TestClient, host: str) -> None:
    assert not is_loopback_host(host)
    response = client.get("/api/v1/me", headers={"Host": host})
    assert response.status_code == 400, host
    assert response.json()["code"] == "invalid_host"


@pytest.mark.parametrize("host", ACCEPTED_HOSTS)
def test_a_loopback_host_is_served(client: TestClient, host: str) -> None:
    assert is_loopback_host(host)
    assert client.get("/api/v1/me", headers={"Host": host}).status_code == 200


def test_a_bare_loopback_bind_address_is_loopback() -> None:
    # `serve --host ::1` checks its bind address with the same function.
    assert is_loopback_host("::1")
    assert not is_loopback_host("192.0.2.1")
    assert not is_loopback_host("::1 ")


def test_an_unhandled_error_answers_500_with_the_request_id(
    make_client: ClientFactory, data_dir: Path
) -> None:
    client = make_client()
    # A real fault: the table behind the route is gone.
    with sqlite3.connect(data_dir / "scholarstream.sqlite") as db:
        db.execute("DROP TABLE api_tokens")
    response = client.get("/api/v1/tokens", headers={"X-Request-ID": "trace-500"})
    assert response.status_code == 500
    assert response.headers["x-request-id"] == "trace-500"
    body = response.json()
    assert body["code"] == "internal_error"
    assert body["request_id"] == "trace-500"
    assert "trace-500" not in body["message"]
    assert body["hint"] == "Try again; if it persists, report it with its request id, trace-500."
    assert "api_tokens" not in response.text
    generated = client.get("/api/v1/tokens")
    assert generated.status_code == 500
    assert generated.json()["request_id"] == generated.headers["x-request-id"]
