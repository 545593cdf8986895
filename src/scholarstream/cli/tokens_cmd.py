"""``tokens create|list|revoke``: bearer tokens for the API and scripts."""

import json
import uuid
from typing import TYPE_CHECKING, Annotated

import typer
from rich.table import Table

from scholarstream.cli._choices import LOCAL_USERNAME
from scholarstream.cli.context import UserOption, console, resolve_user, run_with_runtime

if TYPE_CHECKING:
    from sqlalchemy.ext.asyncio import AsyncSession

    from scholarstream.db import OwnerScope
    from scholarstream.db.tables import ApiToken
    from scholarstream.runtime import Runtime

tokens_app = typer.Typer(help="API tokens.", no_args_is_help=True)


async def _scope(session: "AsyncSession", username: str) -> "OwnerScope":
    from scholarstream.db import OwnerScope

    return OwnerScope(session, (await resolve_user(session, username)).id)


@tokens_app.command("create")
def tokens_create(
    ctx: typer.Context,
    name: Annotated[str, typer.Option(help="What the token is for.")],
    user: UserOption = LOCAL_USERNAME,
    expires_days: Annotated[
        int | None, typer.Option(help="Expiry in days (default: never).", min=1)
    ] = None,
) -> None:
    """Create a token; it is printed once."""
    from scholarstream.accounts import create_api_token

    async def create(runtime: "Runtime") -> str:
        async with runtime.database.session() as session:
            _, plaintext = await create_api_token(
                await _scope(session, user), name, expires_days=expires_days
            )
            return plaintext

    plaintext = run_with_runtime(ctx, create)
    console.print("Token created. Store it now; it is not shown again:", highlight=False)
    typer.echo(plaintext)


@tokens_app.command("list")
def tokens_list(
    ctx: typer.Context,
    user: UserOption = LOCAL_USERNAME,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON lines.")] = False,
) -> None:
    """List active tokens (their prefixes, never the tokens)."""
    from scholarstream.accounts import list_api_tokens

    async def collect(runtime: "Runtime") -> "list[ApiToken]":
        async with runtime.database.session() as session:
            return await list_api_tokens(await _scope(session, user))

    tokens = run_with_runtime(ctx, collect)
    if as_json:
        for t in tokens:
            typer.echo(
                json.dumps(
                    {
                        "id": str(t.id),
                        "name": t.name,
                        "prefix": t.prefix,
                        "created_at": t.created_at.isoformat(),
                        "expires_at": t.expires_at.isoformat() if t.expires_at else None,
                    }
                )
            )
        return
    table = Table()
    for column in ("id", "name", "prefix", "created", "last used", "expires"):
        table.add_column(column)
    for t in tokens:
        fmt = "%Y-%m-%d %H:%M"
        table.add_row(
            str(t.id),
            t.name,
            t.prefix + "…",
            t.created_at.strftime(fmt),
            t.last_used_at.strftime(fmt) if t.last_used_at else "-",
            t.expires_at.strftime(fmt) if t.expires_at else "never",
        )
    console.print(table)


@tokens_app.command("revoke")
def tokens_revoke(
    ctx: typer.Context,
    token_id: Annotated[uuid.UUID, typer.Argument(help="The id shown by 'tokens list'.")],
    user: UserOption = LOCAL_USERNAME,
) -> None:
    """Revoke a token."""
    from scholarstream.accounts import revoke_api_token

    async def revoke(runtime: "Runtime") -> None:
        async with runtime.database.session() as session:
            await revoke_api_token(await _scope(session, user), token_id)

    run_with_runtime(ctx, revoke)
    console.print(f"Revoked {token_id}.")


def register(app: typer.Typer) -> None:
    app.add_typer(tokens_app, name="tokens")
