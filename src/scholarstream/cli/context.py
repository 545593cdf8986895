"""What every command receives: the settings built once by the root callback, and a way to
run async work against a migrated database."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Annotated, TypeVar

import typer
from rich.console import Console
from sqlalchemy.ext.asyncio import AsyncSession

from scholarstream.accounts import LOCAL_USERNAME, ensure_local_user, get_user_by_username
from scholarstream.db import upgrade_async
from scholarstream.db.tables import User
from scholarstream.runtime import Runtime, build_runtime
from scholarstream.settings import Settings

T = TypeVar("T")

console = Console()
err_console = Console(stderr=True)


@dataclass
class CliState:
    settings: Settings


def state(ctx: typer.Context) -> CliState:
    obj = ctx.find_root().obj
    assert isinstance(obj, CliState), "the root callback sets the state"
    return obj


def run_with_runtime(ctx: typer.Context, work: Callable[[Runtime], Awaitable[T]]) -> T:
    """Migrate the database (idempotent), build the runtime, run ``work``, close."""
    settings = state(ctx).settings

    async def _run() -> T:
        await upgrade_async(settings.app_database_url)
        runtime = build_runtime(settings)
        try:
            return await work(runtime)
        finally:
            await runtime.close()

    return asyncio.run(_run())


UserOption = Annotated[
    str,
    typer.Option(
        "--user", help=f"Owner's username (default: {LOCAL_USERNAME}, the single-user mode user)."
    ),
]


async def resolve_user(session: AsyncSession, username: str) -> User:
    """The user a command acts for: the local user by default, else an existing account."""
    if username == LOCAL_USERNAME:
        return await ensure_local_user(session)
    return await get_user_by_username(session, username)
