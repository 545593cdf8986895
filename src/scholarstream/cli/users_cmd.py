"""``users create`` and ``users list`` (accounts for multi-user mode)."""

from typing import TYPE_CHECKING, Annotated

import typer
from rich.table import Table

from scholarstream.cli.context import console, run_with_runtime

if TYPE_CHECKING:
    from scholarstream.db.tables import User
    from scholarstream.runtime import Runtime

users_app = typer.Typer(help="User accounts (multi-user mode).", no_args_is_help=True)


@users_app.command("create")
def users_create(
    ctx: typer.Context,
    username: Annotated[str, typer.Argument(help="Login name.")],
    password: Annotated[
        str,
        typer.Option(
            prompt=True,
            hide_input=True,
            confirmation_prompt=True,
            envvar="SCHOLARSTREAM_NEW_USER_PASSWORD",
            help="Prompted for when omitted.",
        ),
    ],
    display_name: Annotated[str, typer.Option(help="Name shown in the UI.")] = "",
    admin: Annotated[bool, typer.Option("--admin", help="Make the user an administrator.")] = False,
) -> None:
    """Create an account."""
    from scholarstream.accounts import create_user

    async def create(runtime: "Runtime") -> "User":
        async with runtime.database.session() as session:
            return await create_user(
                session, username, password, display_name=display_name, is_admin=admin
            )

    user = run_with_runtime(ctx, create)
    console.print(f"Created user [bold]{user.username}[/] ({user.id}).", highlight=False)


@users_app.command("list")
def users_list(ctx: typer.Context) -> None:
    """List accounts."""
    from scholarstream.accounts import list_users

    async def collect(runtime: "Runtime") -> "list[User]":
        async with runtime.database.session() as session:
            return await list_users(session)

    table = Table()
    for column in ("username", "display name", "admin", "active", "created"):
        table.add_column(column)
    for u in run_with_runtime(ctx, collect):
        table.add_row(
            u.username,
            u.display_name,
            "yes" if u.is_admin else "",
            "yes" if u.is_active else "no",
            u.created_at.strftime("%Y-%m-%d %H:%M"),
        )
    console.print(table)


def register(app: typer.Typer) -> None:
    app.add_typer(users_app, name="users")
