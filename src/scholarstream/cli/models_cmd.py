"""``models``: roles, providers and which have credentials."""

from typing import TYPE_CHECKING

import typer
from rich.table import Table

from scholarstream.cli.context import console, run_with_runtime

if TYPE_CHECKING:
    from scholarstream.llm import RoleStatus
    from scholarstream.runtime import Runtime


def models(ctx: typer.Context) -> None:
    """List model roles, the model each uses, and which providers have credentials."""
    from scholarstream.llm import registered_providers

    async def collect(
        runtime: "Runtime",
    ) -> "tuple[bool, list[RoleStatus], list[tuple[str, str, bool]]]":
        providers = [
            (p.name, p.label, await runtime.credentials.has_credential(None, p.name))
            for p in registered_providers()
        ]
        return runtime.models.offline, await runtime.models.status(None), providers

    offline, roles, providers = run_with_runtime(ctx, collect)
    table = Table(title="Model roles")
    for column in ("role", "used for", "model", "status"):
        table.add_column(column)
    for r in roles:
        status = "[green]ready[/]" if r.ready else f"[yellow]{r.problem}[/]"
        table.add_row(r.role, r.purpose, r.model or "-", status)
    console.print(table)
    ptable = Table(title="Providers (server credentials)")
    for column in ("provider", "name", "credentials"):
        ptable.add_column(column)
    for name, label, ready in providers:
        ptable.add_row(name, label, "[green]yes[/]" if ready else "no")
    console.print(ptable)
    if offline:
        console.print(
            "[yellow]Offline mode:[/] no model is configured. Set e.g. "
            "SCHOLARSTREAM_LLM__ROLES__DEFAULT=openai:gpt-4.1-mini and OPENAI_API_KEY.",
            highlight=False,
        )


def register(app: typer.Typer) -> None:
    app.command()(models)
