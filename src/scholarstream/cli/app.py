"""Root command: global options, settings and logging set up once, errors shown plainly."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Any

import typer
from pydantic import ValidationError

from scholarstream import __version__
from scholarstream.cli import (
    config_cmd,
    db_cmd,
    dedup_cmd,
    export_cmd,
    import_cmd,
    library_cmd,
    models_cmd,
    research_cmd,
    search_cmd,
    server_cmd,
    sources_cmd,
    streams_cmd,
    tokens_cmd,
    users_cmd,
)
from scholarstream.cli.context import CliState, err_console
from scholarstream.errors import ConfigurationError, InvalidInputError, ScholarStreamError
from scholarstream.logs import configure_logging
from scholarstream.settings import load_settings

app = typer.Typer(
    name="scholarstream",
    help="ScholarStream: a self-hostable AI research assistant for scientific literature.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"scholarstream {__version__}")
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
        str | None, typer.Option("--log-level", help="DEBUG, INFO, WARNING or ERROR.")
    ] = None,
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
    settings = load_settings(config, **overrides)
    configure_logging(settings.logging, secrets=settings.secret_values())
    ctx.obj = CliState(settings=settings)


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
    streams_cmd,
    research_cmd,
    dedup_cmd,
):
    module.register(app)


def main() -> None:
    try:
        app(standalone_mode=True)
    except ScholarStreamError as exc:
        err_console.print(f"[bold red]Error:[/] {exc.message}", highlight=False)
        if exc.hint:
            err_console.print(f"[yellow]What to do:[/] {exc.hint}", highlight=False)
        sys.exit(2 if isinstance(exc, (ConfigurationError, InvalidInputError)) else 1)
    except ValidationError as exc:
        # Options that passed Typer's checks but not a model's (e.g. --year-from after
        # --year-to): the same two lines as any bad input.
        problems = "; ".join(
            f"{'.'.join(map(str, e['loc'])) or 'input'}: {e['msg']}" for e in exc.errors()
        )
        err_console.print(f"[bold red]Error:[/] {problems}", highlight=False)
        err_console.print("[yellow]What to do:[/] Correct the options and run the command again.")
        sys.exit(2)
