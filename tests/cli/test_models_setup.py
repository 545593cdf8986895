"""``scholarstream models`` with custom providers, and ``models --check [ROLE]``."""

from __future__ import annotations

from pathlib import Path

import pydantic_ai.models
import pytest
from typer.testing import CliRunner

from scholarstream.cli import app
from tests.llm.model_setup_endpoint import model_endpoint

runner = CliRunner()


@pytest.fixture(autouse=True)
def _real_requests(monkeypatch: pytest.MonkeyPatch) -> None:
    # Only to the loopback endpoint of each test (tests/conftest.py guards every socket).
    monkeypatch.setattr(pydantic_ai.models, "ALLOW_MODEL_REQUESTS", True)
    monkeypatch.setenv("COLUMNS", "200")


def _local(monkeypatch: pytest.MonkeyPatch, base_url: str) -> None:
    monkeypatch.setenv("SCHOLARSTREAM_LLM__PROVIDERS__LABBOX__BASE_URL", base_url)
    monkeypatch.setenv("SCHOLARSTREAM_LLM__ROLES__DEFAULT", "labbox:tiny-instruct")


def test_models_lists_custom_providers_with_where_they_come_from(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _local(monkeypatch, "http://127.0.0.1:9/v1")
    result = runner.invoke(app, ["--data-dir", str(data_dir), "models"])
    assert result.exit_code == 0, result.output
    assert "labbox" in result.output
    assert "OpenAI-compatible at http://127.0.0.1:9/v1" in result.output
    assert "settings" in result.output  # where the default role's model comes from
    assert "configured (not checked)" in result.output


def test_check_prints_each_step_and_the_structured_output_to_use(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with model_endpoint(tools=False) as served:
        _local(monkeypatch, served.base_url)
        result = runner.invoke(app, ["--data-dir", str(data_dir), "models", "--check", "default"])
    assert result.exit_code == 0, result.output
    out = result.output
    assert "✓ reachable" in out
    assert "✓ completion" in out
    assert "✗ tools" in out
    assert "--jinja" in out  # what to change, in the server's own words
    assert "✓ json_schema" in out
    assert "structured output: native; tool calls: no" in out


def test_check_of_an_unreachable_model_exits_1(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _local(monkeypatch, "http://127.0.0.1:9/v1")
    result = runner.invoke(app, ["--data-dir", str(data_dir), "models", "--check"])
    assert result.exit_code == 1, result.output
    assert "✗ reachable" in result.output
    assert "not usable" in result.output


def test_a_role_is_only_taken_with_check(data_dir: Path) -> None:
    result = runner.invoke(app, ["--data-dir", str(data_dir), "models", "fast"])
    assert result.exit_code == 2
    assert "--check" in result.output
