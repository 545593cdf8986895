"""Request body limits (issue 20, point 1): a body larger than its route's limit is refused
with 413 and the JSON error body before the app reads it, whether its size is declared
(Content-Length) or not (a chunked body, counted as it arrives). Every route but the
imports has ``limits.json_body_bytes``; ``POST /api/v1/library/imports`` has
``limits.import_body_bytes``. The server-level checks (a real socket) are in
``test_live_server.py``."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from fastapi.testclient import TestClient

from tests.api.conftest import ClientFactory

JSON_LIMIT = 2048
IMPORT_LIMIT = 16_384
RECORD = "TY  - JOUR\nTI  - Setmelanotide for obesity, record {n}\nPY  - 2020\nER  -\n"


def limited(make_client: ClientFactory, **server: object) -> TestClient:
    return make_client(
        limits={"json_body_bytes": JSON_LIMIT, "import_body_bytes": IMPORT_LIMIT},
        server=server,
    )


def assert_too_large(response: Any, limit: int) -> None:
    assert response.status_code == 413, response.text
    body = response.json()
    assert body["code"] == "too_large"
    assert f"{limit:,}" in body["message"]
    assert body["hint"]
    assert body["request_id"] == response.headers["x-request-id"]
    assert response.headers["connection"] == "close"


def chunks(total: int, size: int = 512) -> Iterator[bytes]:
    """A JSON body of ``total`` bytes sent without Content-Length."""
    body = json.dumps({"name": "x" * (total - 12)}).encode()
    for start in range(0, len(body), size):
        yield body[start : start + size]


def test_an_oversized_json_body_is_refused_before_authentication(
    make_client: ClientFactory,
) -> None:
    client = limited(make_client, multi_user=True)
    big = {"username": "alice", "password": "x" * (JSON_LIMIT + 1)}
    for path in ("/api/v1/auth/login", "/api/v1/chat/messages", "/api/v1/tokens"):
        assert_too_large(client.post(path, json=big), JSON_LIMIT)
    # Under the limit, the same routes answer as usual (401 without a token, 422 ...).
    small = client.post("/api/v1/chat/messages", json={"message": "hi"})
    assert small.status_code == 401, small.text


def test_a_body_without_content_length_is_counted(make_client: ClientFactory) -> None:
    client = limited(make_client)
    response = client.post(
        "/api/v1/tokens",
        content=chunks(JSON_LIMIT * 4),
        headers={"content-type": "application/json"},
    )
    assert "content-length" not in response.request.headers
    assert_too_large(response, JSON_LIMIT)
    within = client.post(
        "/api/v1/tokens",
        content=chunks(JSON_LIMIT // 2),
        headers={"content-type": "application/json"},
    )
    assert within.status_code == 422, within.text  # too long a name, but read and validated


def test_imports_have_their_own_larger_limit(make_client: ClientFactory) -> None:
    client = limited(make_client)
    ris = "".join(RECORD.format(n=n) for n in range(100)).encode()
    assert JSON_LIMIT < len(ris) < IMPORT_LIMIT
    files = {"file": ("records.ris", ris, "application/x-research-info-systems")}
    accepted = client.post("/api/v1/library/imports", files=files)
    assert accepted.status_code == 201, accepted.text
    assert accepted.json()["imported"] == 100
    huge = ris * 3
    assert len(huge) > IMPORT_LIMIT
    files = {"file": ("records.ris", huge, "application/x-research-info-systems")}
    assert_too_large(client.post("/api/v1/library/imports", files=files), IMPORT_LIMIT)
    # The import limit belongs to that route only.
    other = client.post("/api/v1/tokens", content=ris, headers={"content-type": "application/json"})
    assert_too_large(other, JSON_LIMIT)
