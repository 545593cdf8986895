"""A command given ``--json`` fails with one JSON object on stdout,
``{"error": {"code", "message", "hint"}}``, and a non-zero exit, whatever failed: the
product, an option a model refuses, an option Click refuses, the settings. Without
``--json``, the two plain lines; in neither, pydantic's wording."""

from __future__ import annotations

import json
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

import pytest
import typer.main
from typer.testing import CliRunner

from scholarstream.cli import app
from tests.helpers import assert_plain

runner = CliRunner()
SOME_ID = str(uuid.UUID(int=7))
NO_SUCH_USER = {
    "code": "not_found",
    "message": "No user named 'nobody'.",
    "hint": "'scholarstream users list' shows the accounts.",
}

# Every command with --json, failing for a user that does not exist (or, for those that
# take no user, for the settings).
FAILING_FOR_THE_USER: dict[str, list[str]] = {
    "evidence": ["evidence", "aspirin", "--sources", "library", "--offline"],
    "library find-duplicates": ["library", "find-duplicates"],
    "library merges": ["library", "merges"],
    "library search": ["library", "search", "aspirin"],
    "research list": ["research", "list"],
    "research show": ["research", "show", SOME_ID],
    "screening create": ["screening", "create", "Statins review", "--library-query", "statin"],
    "screening list": ["screening", "list"],
    "screening status": ["screening", "status", SOME_ID],
    "search runs": ["search", "runs"],
    "search strategy": ["search", "strategy", "statins in older adults", "--offline"],
    "sources search": ["sources", "search", "library", "aspirin"],
    "streams list": ["streams", "list"],
    "streams report": ["streams", "report", SOME_ID, SOME_ID],
    "streams reports": ["streams", "reports", SOME_ID],
    "tokens list": ["tokens", "list"],
}
FAILING_FOR_THE_SETTINGS = {"config show": ["config", "show"], "sources list": ["sources", "list"]}


def invoke(data_dir: Path, *args: str, env: dict[str, str] | None = None) -> tuple[int, Any]:
    """Exit code and the JSON object printed on stdout (nothing else is printed there)."""
    result = runner.invoke(app, ["--data-dir", str(data_dir), *args], env=env)
    assert isinstance(result.exception, SystemExit | None), result.exception
    assert_plain(result.output)
    return result.exit_code, json.loads(result.stdout)


def _commands_with_json(command: Any, words: tuple[str, ...] = ()) -> list[str]:
    found = []
    for name, sub in sorted(getattr(command, "commands", {}).items()):
        found += _commands_with_json(sub, (*words, name))
    if any("--json" in getattr(param, "opts", ()) for param in command.params):
        found.append(" ".join(words))
    return found


def test_every_command_with_json_is_covered_here() -> None:
    every = _commands_with_json(typer.main.get_command(app))
    assert sorted(every) == sorted({**FAILING_FOR_THE_USER, **FAILING_FOR_THE_SETTINGS})


@pytest.mark.parametrize("command", sorted(FAILING_FOR_THE_USER))
def test_a_product_error_is_the_json_error_object(data_dir: Path, command: str) -> None:
    code, shown = invoke(data_dir, *FAILING_FOR_THE_USER[command], "--json", "--user", "nobody")
    assert (code, shown) == (1, {"error": NO_SUCH_USER})


@pytest.mark.parametrize("command", sorted({**FAILING_FOR_THE_USER, **FAILING_FOR_THE_SETTINGS}))
def test_a_settings_error_is_the_json_error_object(data_dir: Path, command: str) -> None:
    args = {**FAILING_FOR_THE_USER, **FAILING_FOR_THE_SETTINGS}[command]
    code, shown = invoke(data_dir, *args, "--json", env={"SCHOLARSTREAM_SERVER__PORT": "eighty"})
    assert code == 2
    assert shown == {
        "error": {
            "code": "configuration_error",
            "message": "Invalid settings: server.port must be a whole number.",
            "hint": "Fix the named setting in your environment (SCHOLARSTREAM_...) or config file.",
        }
    }


@pytest.mark.parametrize(
    ("where", "reason"),
    [
        ("a-file", "it is a file, not a directory"),
        ("a-file/below", "part of its path is a file, not a directory"),
    ],
)
def test_a_data_directory_that_cannot_be_used_is_said_plainly(
    tmp_path: Path, where: str, reason: str
) -> None:
    (tmp_path / "a-file").write_text("notes")
    data_dir = tmp_path / where
    code, shown = invoke(data_dir, "library", "merges", "--json")
    assert code == 2
    assert shown["error"]["message"] == f"The data directory {data_dir} cannot be used: {reason}."
    assert "--data-dir" in shown["error"]["hint"]
    assert (tmp_path / "a-file").read_text() == "notes"


def test_a_config_file_that_is_not_toml_says_where(tmp_path: Path) -> None:
    config = tmp_path / "broken.toml"
    config.write_text("data_dir = [1, 2\n")
    result = runner.invoke(app, ["--config", str(config), "config", "show", "--json"])
    assert result.exit_code == 2
    error = json.loads(result.stdout)["error"]
    assert error["code"] == "configuration_error"
    assert error["message"].startswith(f"Config file {config} is not valid TOML: Unclosed array")
    assert_plain(result.output)


def test_an_empty_question_with_json(data_dir: Path) -> None:
    code, shown = invoke(data_dir, "search", "strategy", "--json", "")
    assert code == 2
    assert shown == {
        "error": {
            "code": "invalid_input",
            "message": "The question is empty.",
            "hint": 'Say what you are looking for: scholarstream search strategy "gastric '
            'cancer staging by endoscopic ultrasound"',
        }
    }


def test_options_a_model_refuses_with_json(data_dir: Path) -> None:
    code, shown = invoke(
        data_dir, "library", "search", "x", "--year-from", "2020", "--year-to", "2000", "--json"
    )
    assert code == 2
    assert shown == {
        "error": {
            "code": "invalid_input",
            "message": "The first year (2020) is after the last (2000): give the earlier year"
            " first.",
            "hint": "Correct the options and run the command again.",
        }
    }


def test_options_click_refuses_with_json(data_dir: Path) -> None:
    code, shown = invoke(data_dir, "research", "list", "--status", "sleeping", "--json")
    assert code == 2
    assert shown["error"]["code"] == "usage_error"
    assert "sleeping" in shown["error"]["message"]
    assert "--help" in shown["error"]["hint"]

    # An id is the whole id or its first characters (as lists show it): anything else is
    # refused in our words.
    code, shown = invoke(data_dir, "research", "show", "not-an-id", "--json")
    assert code == 2
    assert shown["error"]["code"] == "invalid_input"
    assert shown["error"]["message"] == "'not-an-id' is not an id."
    assert "scholarstream research list" in shown["error"]["hint"]

    code, shown = invoke(data_dir, "library", "search", "x", "--limit", "0", "--json")
    assert code == 2
    assert shown["error"]["code"] == "usage_error" and "--limit" in shown["error"]["message"]


def test_json_after_a_double_dash_is_not_the_option(data_dir: Path) -> None:
    """``--`` ends the options: "--json" after it is the question, and errors stay plain."""
    result = runner.invoke(
        app, ["--data-dir", str(data_dir), "search", "strategy", "--user", "nobody", "--", "--json"]
    )
    assert result.exception is not None and not isinstance(result.exception, SystemExit)
    assert result.stdout == ""


def test_without_json_the_console_script_prints_two_plain_lines(data_dir: Path) -> None:
    command = ["library", "search", "x", "--year-from", "2020", "--year-to", "2000"]
    result = subprocess.run(
        [sys.executable, "-m", "scholarstream", "--data-dir", str(data_dir), *command],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 2
    assert result.stdout == ""
    assert result.stderr.splitlines() == [
        "Error: The first year (2020) is after the last (2000): give the earlier year first.",
        "What to do: Correct the options and run the command again.",
    ]


def test_an_edited_strategy_that_is_not_json_says_where(
    data_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """At the strategy checkpoint, text that is not JSON is named as such, with the line
    and column, not as the parser's exception; the strategy stays as it was."""
    editor = tmp_path / "editor.py"
    editor.write_text("import sys\nopen(sys.argv[1], 'w').write('{\"queries\": [}')\n")
    monkeypatch.setenv("EDITOR", f"{sys.executable} {editor}")
    result = runner.invoke(
        app,
        ["--data-dir", str(data_dir), "search", "cocker spaniel eyes", "-s", "library"],
        input="e\nn\na\naccept\n",
    )
    assert result.exit_code == 0, result.output
    assert "The edited text is not JSON: expecting value (line 1, column 14)." in result.stdout, (
        result.stdout
    )
    assert "JSONDecodeError" not in result.output and "char 13" not in result.output
