"""The command line imports only what the command runs (issue 21): ``scholarstream --help``
and ``scholarstream <command> --help`` import no feature, no runtime, no settings and none
of the heavy libraries, checked in a fresh interpreter (``sys.modules`` at exit). A
structural check, not a timing test: ``bench/startup.py`` measures the time."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import typer.main

from scholarstream.accounts import LOCAL_USERNAME
from scholarstream.cli import _choices, app
from scholarstream.papers.formats import export_format_names, import_format_names
from scholarstream.research import ResearchStatus

HEAVY_LIBRARIES = ("pydantic_ai", "fastapi", "starlette", "sqlalchemy", "alembic", "dbos", "httpx")
# Everything of ours but the command line itself and the base it stands on (errors).
OUR_PACKAGES = (
    "accounts",
    "ai_columns",
    "api",
    "bootstrap",
    "chat",
    "db",
    "durable",
    "grounding",
    "llm",
    "notify",
    "papers",
    "research",
    "runtime",
    "search",
    "settings",
    "sources",
    "streams",
    "understanding",
    "web",
)

# Runs the command line as the console script does, and writes the modules loaded by then
# to the file named first, however the command ends (help ends with SystemExit).
_RUN = """
import atexit, json, sys
out = sys.argv.pop(1)
atexit.register(lambda: open(out, "w").write(json.dumps(sorted(sys.modules))))
from scholarstream.cli import main
sys.argv[0] = "scholarstream"
main()
"""


def _commands() -> list[str]:
    root = typer.main.get_command(app)
    return sorted(getattr(root, "commands", {}))


def modules_loaded(tmp_path: Path, *args: str) -> set[str]:
    out = tmp_path / "modules.json"
    env = {k: v for k, v in os.environ.items() if not k.startswith("SCHOLARSTREAM_")}
    env["SCHOLARSTREAM_DATA_DIR"] = str(tmp_path / "data")
    done = subprocess.run(
        [sys.executable, "-c", _RUN, str(out), *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert "Usage" in done.stdout
    loaded: list[str] = json.loads(out.read_text())
    return set(loaded)


def heavy(modules: set[str]) -> list[str]:
    banned = {*HEAVY_LIBRARIES, *(f"scholarstream.{name}" for name in OUR_PACKAGES)}
    return sorted(
        name for name in modules if any(name == b or name.startswith(f"{b}.") for b in banned)
    )


def test_help_imports_no_feature(tmp_path: Path) -> None:
    modules = modules_loaded(tmp_path, "--help")
    assert "scholarstream.cli.app" in modules
    assert heavy(modules) == []
    assert "pydantic" not in modules


@pytest.mark.parametrize("command", [*_commands(), "research run"])
def test_command_help_imports_no_feature(tmp_path: Path, command: str) -> None:
    assert heavy(modules_loaded(tmp_path, *command.split(), "--help")) == []


def test_the_commands_are_all_checked() -> None:
    # The parametrisation above covers every command of the app.
    assert {"research", "search", "serve", "streams", "worker"} <= set(_commands())


def test_light_names_equal_the_features() -> None:
    """The names written out in ``cli._choices`` for ``--help`` are the features' own."""
    assert _choices.LOCAL_USERNAME == LOCAL_USERNAME
    assert list(_choices.IMPORT_FORMATS) == import_format_names()
    assert list(_choices.EXPORT_FORMATS) == export_format_names()
    assert [(s.name, s.value) for s in _choices.ResearchStatusChoice] == [
        (s.name, s.value) for s in ResearchStatus
    ]
