"""Root command: global options, settings and logging set up once, errors shown plainly."""

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from typer.core import TyperGroup

import scholarstream
from scholarstream.cli import (
    config_cmd,
    db_cmd,
    dedup_cmd,
    evidence_cmd,
    export_cmd,
    import_cmd,
    library_cmd,
    models_cmd,
    research_cmd,
    screening_cmd,
    search_cmd,
    server_cmd,
    sources_cmd,
    streams_cmd,
    tokens_cmd,
    users_cmd,
)
from scholarstream.cli._failures import WORDS, describe, failures_shown, show
from scholarstream.cli.context import CliState

# Nothing above imports a feature, the runtime, pydantic or the settings: they are imported
# by the commands that use them, so that `scholarstream --help` starts at once (issue 21;
# tests/cli/test_startup_imports.py checks it, bench/startup.py measures it). The command
# modules do without `from __future__ import annotations`: Typer reads every command's
# signature at start-up, and evaluating annotation strings then cost more than evaluating
# the annotations with the module (18 ms against 7); names imported only for type checking
# are quoted where an annotation is evaluated.
if TYPE_CHECKING:
    from scholarstream.settings import Settings


class _Root(TyperGroup):
    """Keeps the command line's words, for the root callback to see a request for help;
    runs every command under ``failures_shown``: the one place where ``--json`` turns a
    failure into the JSON error object (``cli._failures``). Help names what an option
    takes by its name, never by its type (``--limit LIMIT``, not ``--limit INTEGER``)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        _name_values(self)

    # ``ctx`` is the Click context of Typer's vendored Click, which Typer does not export.
    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        ctx.meta[WORDS] = list(args)
        with _help_when_no_args():
            return super().parse_args(ctx, args)

    def invoke(self, ctx: Any) -> Any:
        with failures_shown(ctx.meta.get(WORDS, [])), _help_when_no_args():
            return super().invoke(ctx)


@contextmanager
def _help_when_no_args() -> Iterator[None]:
    """A group given no command (``scholarstream research``) prints its help on stdout, as
    ``--help`` does, and exits 2: Click would print it on stderr, as an error."""
    try:
        yield
    except Exception as exc:
        # Click's NoArgsIsHelpError: Typer vendors Click and does not export the class.
        if type(exc).__name__ != "NoArgsIsHelpError":
            raise
        typer.echo(exc.format_message())  # type: ignore[attr-defined]
        raise typer.Exit(2) from None


def _name_values(command: Any) -> None:
    """Through every subcommand: an option that takes a value and has no placeholder of its
    own gets its name as one (Click would write its type: TEXT, INTEGER, PATH), and a
    command listed in its group's help is described by its whole first paragraph, wrapped
    (Click would cut it at 45 characters)."""
    for param in command.params:
        takes_value = param.param_type_name == "option" and not (param.is_flag or param.count)
        # A choice keeps Click's placeholder: its choices ([ask|proceed|retry|cancel]).
        if takes_value and param.metavar is None and param.type.name != "choice":
            long = max(param.opts, key=len).lstrip("-")
            param.metavar = long.upper().replace("-", "_")
    for sub in getattr(command, "commands", {}).values():
        if not sub.short_help and sub.help:
            sub.short_help = " ".join(sub.help.split("\n\n", 1)[0].split())
        _name_values(sub)


def _asks_for_help(ctx: typer.Context) -> bool:
    """``scholarstream [options] <command> ... --help`` (before any ``--``)."""
    words: list[str] = ctx.meta.get(WORDS, [])
    if "--" in words:
        words = words[: words.index("--")]
    return any(word in ctx.help_option_names for word in words)


app = typer.Typer(
    cls=_Root,
    name="scholarstream",
    help="ScholarStream: a self-hostable AI research assistant for scientific literature.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    # Click's plain help: compact at 80 columns, and --help imports no Rich.
    rich_markup_mode=None,
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"scholarstream {scholarstream.__version__}")
        raise typer.Exit()


@app.callback()
def root(
    ctx: typer.Context,
    config: Annotated[
        Path | None, typer.Option("--config", help="TOML settings file (or SCHOLARSTREAM_CONFIG).")
    ] = None,
    data_dir: Annotated[
        Path | None,
        typer.Option("--data-dir", help="Where everything is stored (or SCHOLARSTREAM_DATA_DIR)."),
    ] = None,
    log_format: Annotated[
        str | None,
        typer.Option("--log-format", help="plain or json (or SCHOLARSTREAM_LOGGING__FORMAT)."),
    ] = None,
    log_level: Annotated[
        str | None,
        typer.Option(
            "--log-level",
            help="DEBUG, INFO, WARNING or ERROR (or SCHOLARSTREAM_LOGGING__LEVEL). "
            "Commands log only warnings and errors unless set; serve and worker log INFO.",
        ),
    ] = None,
    verbose: Annotated[
        int,
        typer.Option(
            "--verbose",
            "-v",
            count=True,
            show_default=False,
            help="Log what is being done on stderr too (-v: INFO, -vv: DEBUG).",
        ),
    ] = 0,
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Print the version.")
    ] = False,
) -> None:
    overrides: dict[str, Any] = {}
    if data_dir is not None:
        overrides["data_dir"] = data_dir
    logging_overrides = {k: v for k, v in (("format", log_format), ("level", log_level)) if v}
    if logging_overrides:
        overrides["logging"] = logging_overrides

    command = ctx.invoked_subcommand

    def load() -> "Settings":
        from scholarstream.logs import command_log_level, configure_logging
        from scholarstream.settings import load_settings, prepare_data_dir

        settings = load_settings(config, **overrides)
        prepare_data_dir(settings)
        level = command_log_level(settings.logging, verbose=verbose, command=command)
        configure_logging(settings.logging, secrets=settings.secret_values(), level=level)
        return settings

    if _asks_for_help(ctx):
        # Help needs no settings: loaded only if a command runs after all (``--title --help``).
        ctx.obj = CliState(load)
    else:
        # Loaded before the command runs, whether or not it uses them: a bad setting fails
        # every command the same way, and logging is configured before any work.
        settings = load()
        ctx.obj = CliState(lambda: settings)


for module in (
    server_cmd,
    db_cmd,
    config_cmd,
    models_cmd,
    users_cmd,
    tokens_cmd,
    import_cmd,
    library_cmd,
    export_cmd,
    sources_cmd,
    search_cmd,
    evidence_cmd,
    streams_cmd,
    research_cmd,
    dedup_cmd,
    screening_cmd,
):
    module.register(app)


def main() -> None:
    """The console script: a failure as two plain lines on stderr and a non-zero exit
    (with ``--json``, the root group has already printed it as JSON and exited)."""
    try:
        app(standalone_mode=True)
    except Exception as exc:
        failure = describe(exc)
        if failure is None:
            raise
        show(failure, as_json=False)
        sys.exit(failure.exit_code)
