"""``config show``: the effective settings, secrets masked."""

import json
from typing import Annotated

import typer
from rich.markup import escape

from scholarstream.cli.context import console, state

config_app = typer.Typer(help="Inspect the configuration.", no_args_is_help=True)


@config_app.command("show")
def config_show(
    ctx: typer.Context,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print JSON instead of TOML-like text.")
    ] = False,
) -> None:
    """Print the effective settings (defaults, config file and environment merged)."""
    data = state(ctx).settings.masked()
    if as_json:
        typer.echo(json.dumps(data, indent=2))
        return
    scalars = {k: v for k, v in data.items() if not isinstance(v, dict)}
    for key, value in scalars.items():
        console.print(f"{key} = {json.dumps(value)}", highlight=False)
    for section, values in data.items():
        if isinstance(values, dict):
            console.print(f"\n[bold]{escape(f'[{section}]')}[/]", highlight=False)
            for key, value in values.items():
                console.print(f"{key} = {json.dumps(value)}", highlight=False)


def register(app: typer.Typer) -> None:
    app.add_typer(config_app, name="config")
