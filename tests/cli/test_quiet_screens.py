"""What the terminal shows (issue 26): no log line of ours or of a library in a command's
screens unless asked for (-v, -vv, --log-level or SCHOLARSTREAM_LOGGING__LEVEL); help
without type labels; lists that fit 80 and 120 columns with short ids."""

from __future__ import annotations

import logging
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
import typer.main
from rich.console import Console
from typer.testing import CliRunner

from scholarstream.cli import app, context, streams_cmd
from scholarstream.logs import command_log_level, configure_logging
from scholarstream.runtime import Runtime
from scholarstream.settings import LoggingSettings, Settings
from tests.cli.test_streams_cli import new_stream
from tests.helpers import make_runtime

runner = CliRunner()
QUESTION = "eye diseases in cocker spaniel dogs"


@pytest.fixture
def no_network(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Every runtime of the command answers each source request with a failed connection."""

    def runtime_without_network(settings: Settings) -> Runtime:
        return make_runtime(settings)

    monkeypatch.setattr(context, "build_runtime", runtime_without_network)
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    yield
    root.handlers[:] = handlers
    root.setLevel(level)


def search(data_dir: Path, *options: str, env: dict[str, str] | None = None) -> str:
    result = runner.invoke(
        app,
        ["--data-dir", str(data_dir), *options, "search", QUESTION, "-s", "pubmed", "--yes"],
        env=env,
    )
    assert result.exit_code == 0, result.output
    return result.stderr


def test_a_command_logs_nothing_but_problems_unless_asked(data_dir: Path, no_network: None) -> None:
    quiet = search(data_dir)
    assert "INFO" not in quiet and "could not connect" not in quiet

    verbose = search(data_dir, "-v")
    assert re.search(r"INFO +scholarstream\.sources\._http .*pubmed: could not connect", verbose)
    assert "DEBUG" not in verbose

    configured = search(data_dir, env={"SCHOLARSTREAM_LOGGING__LEVEL": "INFO"})
    assert "pubmed: could not connect" in configured


def test_servers_log_at_the_configured_level_and_libraries_stay_quiet() -> None:
    default = LoggingSettings()
    assert command_log_level(default, command="serve") == "INFO"
    assert command_log_level(default, command="worker") == "INFO"
    assert command_log_level(default, command="search") == "WARNING"
    assert command_log_level(default, verbose=1, command="search") == "INFO"
    assert command_log_level(default, verbose=2, command="search") == "DEBUG"
    assert command_log_level(LoggingSettings(level="ERROR"), command="search") == "ERROR"

    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    try:
        configure_logging(default, level="INFO")
        for library in ("bm25s", "httpx", "dbos", "sqlalchemy"):
            assert logging.getLogger(library).getEffectiveLevel() == logging.WARNING, library
        assert logging.getLogger("scholarstream.search").getEffectiveLevel() == logging.INFO
        configure_logging(default, level="DEBUG")
        assert logging.getLogger("bm25s").getEffectiveLevel() == logging.DEBUG
    finally:
        configure_logging(default)
        root.handlers[:] = handlers
        root.setLevel(level)


# --- help ------------------------------------------------------------------------------------

TYPE_LABELS = re.compile(r"\b(TEXT|INTEGER|BOOLEAN|FLOAT|PATH|FILENAME|UUID|RANGE)\b|<\w+>")
OPTION_LINE = re.compile(r"^\s+(?:-\w, )?--[\w-]+(?: (\S+))?")


def _commands(command: object, words: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    found = [words]
    for name, sub in sorted(getattr(command, "commands", {}).items()):
        found += _commands(sub, (*words, name))
    return found


def test_help_shows_no_type_labels_anywhere(data_dir: Path) -> None:
    commands = _commands(typer.main.get_command(app))
    assert len(commands) > 20
    for words in commands:
        result = runner.invoke(app, [*words, "--help"], env={"COLUMNS": "80"})
        assert result.exit_code == 0, (words, result.output)
        for line in result.stdout.splitlines():
            option = OPTION_LINE.match(line)
            if option and option.group(1):
                assert not TYPE_LABELS.search(option.group(1)), (words, line)
            assert len(line) <= 80, (words, line)


# --- lists -----------------------------------------------------------------------------------


def test_streams_list_fits_80_and_120_columns_with_short_ids(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    stream_id = new_stream(data_dir, ["pubmed"])
    for width in (80, 120):
        # The command prints through the console made when the CLI was imported, as wide
        # as the terminal was then: here, as wide as the terminal of the test.
        monkeypatch.setattr(streams_cmd, "console", Console(width=width))
        result = runner.invoke(app, ["--data-dir", str(data_dir), "streams", "list"])
        assert result.exit_code == 0, result.output
        lines = result.stdout.splitlines()
        assert all(len(line) <= width for line in lines), result.stdout
        (row,) = [line for line in lines if stream_id.hex[:8] in line]
        assert str(stream_id) not in result.stdout
        assert "never" in row  # the last column is still on the stream's one line
