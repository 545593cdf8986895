"""A write request while another connection holds SQLite's write lock: after a short wait,
503 ``database_busy`` with Retry-After, the request id, and a message that says what to do;
nothing of it is stored, and the same request succeeds once the lock is free."""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from fastapi.testclient import TestClient

from scholarstream.db import BUSY_TIMEOUT_SECONDS
from tests.api.conftest import ClientFactory

AI_COLUMNS = "/api/v1/ai-columns"
COLUMN = {
    "table": "library",
    "name": "RCT",
    "criteria": "Is it a randomised controlled trial?",
    "output_type": "yes_no",
}


@contextmanager
def another_writer(database: Path) -> Iterator[None]:
    """A second connection (another process, a long import) holding the write lock."""
    connection = sqlite3.connect(database, isolation_level=None)
    try:
        connection.execute("BEGIN IMMEDIATE")
        yield
    finally:
        connection.rollback()
        connection.close()


def _columns(client: TestClient) -> list[str]:
    listed = client.get(AI_COLUMNS, params={"table": "library"})
    assert listed.status_code == 200, listed.text
    return [column["name"] for column in listed.json()["columns"]]


def test_a_write_behind_another_writer_is_503_database_busy(
    make_client: ClientFactory, data_dir: Path
) -> None:
    client = make_client()
    assert _columns(client) == []  # the server's connections are open (WAL)
    with another_writer(data_dir / "scholarstream.sqlite"):
        started = time.monotonic()
        busy = client.post(AI_COLUMNS, json=COLUMN)
        waited = time.monotonic() - started
        assert _columns(client) == []  # reads go on meanwhile
    assert busy.status_code == 503, busy.text
    assert waited < BUSY_TIMEOUT_SECONDS + 3, waited
    body = busy.json()
    assert body["code"] == "database_busy"
    assert int(busy.headers["Retry-After"]) >= 1
    assert body["request_id"] and busy.headers["X-Request-ID"] == body["request_id"]
    assert "not saved" in body["message"]
    assert "Send the same request again" in body["hint"]
    for internal in ("sqlite", "OperationalError", "locked", "Traceback"):
        assert internal not in busy.text
    # Nothing was stored; the same request now succeeds.
    assert _columns(client) == []
    created = client.post(AI_COLUMNS, json=COLUMN)
    assert created.status_code == 201, created.text
    assert _columns(client) == ["RCT"]
