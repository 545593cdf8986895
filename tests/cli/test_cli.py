from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from alembic.script import ScriptDirectory
from typer.testing import CliRunner

from scholarstream.cli import app
from scholarstream.db import alembic_config
from scholarstream.errors import ConfigurationError

PUBLIC_HOST = "0.0.0.0"  # noqa: S104 (only to check that serve refuses it)

runner = CliRunner()


def invoke(data_dir: Path, *args: str, input: str | None = None) -> str:
    result = runner.invoke(app, ["--data-dir", str(data_dir), *args], input=input)
    assert result.exit_code == 0, (result.output, result.exception)
    return result.output


def test_config_show_masks_secrets(data_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SCHOLARSTREAM_SOURCES__SERPAPI_API_KEY", "serp-secret-123")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-openai-secret-456")
    data = json.loads(invoke(data_dir, "config", "show", "--json"))
    assert data["data_dir"] == str(data_dir)
    assert data["sources"]["serpapi_api_key"] == "**********"
    assert data["llm"]["providers"]["openai"]["api_key"] == "**********"
    text = invoke(data_dir, "config", "show")
    assert "[server]" in text
    assert "serp-secret-123" not in text
    assert "sk-openai-secret-456" not in text


def test_models_lists_roles_and_offline_mode(data_dir: Path) -> None:
    out = invoke(data_dir, "models")
    assert "default" in out
    assert "synthesis" in out
    assert "Offline mode" in out


def test_models_with_a_configured_role(data_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SCHOLARSTREAM_LLM__ROLES__DEFAULT", "openai:gpt-4.1-mini")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-openai-secret-456")
    out = invoke(data_dir, "models")
    assert "openai:gpt-4.1-mini" in out
    assert "not checked" in out  # nothing was asked of it yet
    assert "Offline mode" not in out


def test_db_upgrade_and_current(data_dir: Path) -> None:
    assert "not migrated" in invoke(data_dir, "db", "current")
    head = ScriptDirectory.from_config(alembic_config()).get_current_head()
    assert f"revision {head}" in invoke(data_dir, "db", "upgrade")
    assert invoke(data_dir, "db", "current").strip() == head


def test_users_and_tokens(data_dir: Path) -> None:
    out = invoke(
        data_dir,
        "users",
        "create",
        "ada",
        "--display-name",
        "Ada L",
        input="long password\nlong password\n",
    )
    assert "Created user ada" in out
    assert "Ada L" in invoke(data_dir, "users", "list")
    created = invoke(data_dir, "tokens", "create", "--name", "laptop", "--user", "ada")
    token = created.strip().splitlines()[-1]
    assert token.startswith("ss_")
    listed = invoke(data_dir, "tokens", "list", "--user", "ada")
    assert "laptop" in listed
    assert token not in listed
    (entry,) = [
        json.loads(line)
        for line in invoke(data_dir, "tokens", "list", "--user", "ada", "--json").splitlines()
    ]
    assert entry["name"] == "laptop"
    assert token.startswith(entry["prefix"])
    assert "Revoked" in invoke(data_dir, "tokens", "revoke", entry["id"], "--user", "ada")
    assert invoke(data_dir, "tokens", "list", "--user", "ada", "--json").strip() == ""
    local = invoke(data_dir, "tokens", "create", "--name", "scripts")
    assert local.strip().splitlines()[-1].startswith("ss_")


def test_duplicate_user_is_a_clear_error(data_dir: Path) -> None:
    invoke(data_dir, "users", "create", "ada", "--password", "long password")
    result = runner.invoke(
        app, ["--data-dir", str(data_dir), "users", "create", "ada", "--password", "long password"]
    )
    assert result.exit_code != 0
    assert "already exists" in str(result.exception)


def test_serve_refuses_public_bind_in_single_user_mode(data_dir: Path) -> None:
    result = runner.invoke(app, ["--data-dir", str(data_dir), "serve", "--host", PUBLIC_HOST])
    assert isinstance(result.exception, ConfigurationError)
    assert "MULTI_USER" in (result.exception.hint or "")


def test_help_needs_no_settings_but_commands_do(data_dir: Path) -> None:
    """``<command> --help`` does not load the settings (issue 21: the CLI starts at once), so
    a missing config file does not stop it; every command still fails on it, as before."""
    missing = data_dir / "missing.toml"
    shown = runner.invoke(app, ["--config", str(missing), "dedup", "--help"])
    assert shown.exit_code == 0, shown.output
    assert "Usage" in shown.output
    for args in (["dedup", "x.ris", "--out", "-"], ["config", "show"]):
        failed = runner.invoke(app, ["--config", str(missing), *args])
        assert isinstance(failed.exception, ConfigurationError), args


def test_help_as_an_option_value_runs_the_command(data_dir: Path) -> None:
    # '--type --help' is a publication type named '--help', not a request for help: the
    # command runs, with the settings loaded when it first needs them.
    result = runner.invoke(
        app, ["--data-dir", str(data_dir), "library", "search", "--type", "--help"]
    )
    assert "Usage" not in result.output
    # The command ran: an empty library has no such publication type, and says so.
    assert "0 records" in result.output or "“--help”" in str(result.exception)


def test_no_help_text_shows_source_markup() -> None:
    """Help is read in a terminal: reStructuredText's ``literal`` marks are the source's,
    not the user's (every command and option of the whole tree)."""
    from typer.main import get_command

    def walk(command: Any, path: str) -> Iterator[tuple[str, Any]]:
        yield path, command
        for name, sub in getattr(command, "commands", {}).items():
            yield from walk(sub, f"{path} {name}")

    marked = [
        path
        for path, command in walk(get_command(app), "scholarstream")
        for text in [command.help or "", *(getattr(p, "help", None) or "" for p in command.params)]
        if "``" in text
    ]
    assert marked == []
