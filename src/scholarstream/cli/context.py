"""What every command receives: the settings built once by the root callback, and a way to
run async work against a migrated database."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Annotated, TypeVar

import typer
from rich.console import Console

from scholarstream.cli._choices import LOCAL_USERNAME

# Imported where used, so that defining the commands (``--help``) imports none of them.
if TYPE_CHECKING:
    from sqlalchemy.ext.asyncio import AsyncSession

    from scholarstream.db.tables import User
    from scholarstream.runtime import Runtime
    from scholarstream.settings import Settings

T = TypeVar("T")

console = Console()
err_console = Console(stderr=True)


class CliState:
    """The settings of this invocation, loaded once (logging configured with them): by the
    root callback before a command runs, or on first use after a request for help, so that
    ``scholarstream <command> --help`` never loads them."""

    def __init__(self, load: Callable[[], Settings]) -> None:
        self._load = load
        self._settings: Settings | None = None

    @property
    def settings(self) -> Settings:
        if self._settings is None:
            self._settings = self._load()
        return self._settings


def state(ctx: typer.Context) -> CliState:
    obj = ctx.find_root().obj
    assert isinstance(obj, CliState), "the root callback sets the state"
    return obj


def run_with_runtime(ctx: typer.Context, work: Callable[[Runtime], Awaitable[T]]) -> T:
    """Migrate the database (idempotent), build the runtime, run ``work``, close."""
    import asyncio

    from scholarstream.db import upgrade_async

    settings = state(ctx).settings

    async def _run() -> T:
        await upgrade_async(settings.app_database_url)
        runtime = build_runtime(settings)
        try:
            return await work(runtime)
        finally:
            await runtime.close()

    return asyncio.run(_run())


def build_runtime(settings: Settings) -> Runtime:
    """The runtime of a command (a module global: the research CLI tests replace it)."""
    from scholarstream.runtime import build_runtime as build

    return build(settings)


UserOption = Annotated[
    str,
    typer.Option(
        "--user", help=f"Owner's username (default: {LOCAL_USERNAME}, the single-user mode user)."
    ),
]


async def resolve_user(session: AsyncSession, username: str) -> User:
    """The user a command acts for: the local user by default, else an existing account."""
    from scholarstream.accounts import ensure_local_user, get_user_by_username

    if username == LOCAL_USERNAME:
        return await ensure_local_user(session)
    return await get_user_by_username(session, username)
