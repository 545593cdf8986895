from __future__ import annotations

import json
import logging
from collections.abc import Iterator

import pytest

from scholarstream.logs import configure_logging, redact, request_id_var
from scholarstream.settings import LoggingSettings, Settings


@pytest.fixture
def restore_logging() -> Iterator[None]:
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    yield
    root.handlers[:] = handlers
    root.setLevel(level)


def test_json_lines_carry_the_request_id(
    restore_logging: None, capsys: pytest.CaptureFixture[str]
) -> None:
    configure_logging(LoggingSettings(format="json", level="INFO"))
    token = request_id_var.set("req-123")
    try:
        logging.getLogger("scholarstream.test").info("hello %s", "world")
    finally:
        request_id_var.reset(token)
    record = json.loads(capsys.readouterr().err.strip().splitlines()[-1])
    assert record["message"] == "hello world"
    assert record["request_id"] == "req-123"
    assert record["level"] == "INFO"
    assert record["logger"] == "scholarstream.test"


def test_plain_lines_and_level(restore_logging: None, capsys: pytest.CaptureFixture[str]) -> None:
    configure_logging(LoggingSettings(format="plain", level="WARNING"))
    log = logging.getLogger("scholarstream.test")
    log.info("quiet")
    log.warning("loud")
    err = capsys.readouterr().err
    assert "quiet" not in err
    assert "WARNING scholarstream.test [-] loud" in err


def test_secrets_never_reach_the_log(
    restore_logging: None, capsys: pytest.CaptureFixture[str]
) -> None:
    configure_logging(LoggingSettings(), secrets=["configured-secret-value"])
    log = logging.getLogger("scholarstream.test")
    log.info("key is %s", "configured-secret-value")
    log.info("header Authorization: Bearer abcdefghijklmnop")
    log.info("user pasted sk-proj-abcdefghijklmnopqrstu")
    try:
        raise ValueError("failed with api_key=another-secret-thing")
    except ValueError:
        log.exception("call failed")
    err = capsys.readouterr().err
    for leaked in (
        "configured-secret-value",
        "abcdefghijklmnop",
        "ghijklmnopqrstu",
        "another-secret-thing",
    ):
        assert leaked not in err
    assert err.count("***") >= 4


def test_redact_keeps_ordinary_text() -> None:
    text = "Searched PubMed for 'token ring networks' and found 12 papers"
    assert redact(text) == text


def test_each_request_is_logged_with_its_id(
    restore_logging: None, capsys: pytest.CaptureFixture[str], settings: Settings
) -> None:
    from fastapi.testclient import TestClient

    from scholarstream.bootstrap import create_app
    from scholarstream.db import upgrade
    from scholarstream.runtime import build_runtime

    upgrade(settings.app_database_url)
    configure_logging(LoggingSettings(format="json"))
    with TestClient(create_app(build_runtime(settings)), base_url="http://127.0.0.1") as client:
        client.get("/health?api_key=typed-by-user", headers={"X-Request-ID": "trace-7"})
    lines = [
        json.loads(line) for line in capsys.readouterr().err.splitlines() if line.startswith("{")
    ]
    access = [r for r in lines if r["logger"] == "scholarstream.access"]
    assert [r["request_id"] for r in access] == ["trace-7"]
    assert access[0]["message"].startswith("GET /health 200 ")
    assert "typed-by-user" not in access[0]["message"]


async def test_a_users_provider_key_of_any_shape_never_reaches_the_log(
    restore_logging: None, capsys: pytest.CaptureFixture[str], db_settings: Settings
) -> None:
    """A key with no known shape (not ``sk-...``), once used for a call, is redacted from
    every log line, e.g. a provider error that echoes it."""
    from scholarstream.db import OwnerScope
    from tests.helpers import make_runtime, new_user

    key = "gemini-like-UserKey-7f3a9c1e5b"
    assert redact(f"Invalid key {key}") == f"Invalid key {key}"  # no pattern knows it
    configure_logging(LoggingSettings())
    runtime = make_runtime(db_settings)
    try:
        user = await new_user(runtime)
        async with runtime.database.session() as session:
            scope = OwnerScope(session, user.id)
            await runtime.credentials.store_user_key(scope, "google", key)
            used = await runtime.credentials.resolve(scope, "google")
        assert used.api_key == key
        logging.getLogger("scholarstream.test").error("provider said: API key %s is invalid", key)
    finally:
        await runtime.close()
    err = capsys.readouterr().err
    assert "provider said: API key *** is invalid" in err
    assert key not in err
