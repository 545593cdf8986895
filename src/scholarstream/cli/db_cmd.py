"""``db upgrade`` and ``db current``."""

import typer

from scholarstream.cli.context import console, state

db_app = typer.Typer(help="Database migrations.", no_args_is_help=True)


@db_app.command("upgrade")
def db_upgrade(ctx: typer.Context) -> None:
    """Apply every pending migration (serve does this on start)."""
    import asyncio

    from scholarstream.db import current_revision, upgrade
    from scholarstream.settings import mask_url_password

    settings = state(ctx).settings
    upgrade(settings.app_database_url)
    revision = asyncio.run(current_revision(settings.app_database_url))
    console.print(
        f"Database {mask_url_password(settings.app_database_url)} is at revision {revision}."
    )


@db_app.command("current")
def db_current(ctx: typer.Context) -> None:
    """Show the database's migration revision."""
    import asyncio

    from scholarstream.db import current_revision

    settings = state(ctx).settings
    revision = asyncio.run(current_revision(settings.app_database_url))
    console.print(revision or "not migrated (run 'scholarstream db upgrade')")


def register(app: typer.Typer) -> None:
    app.add_typer(db_app, name="db")
