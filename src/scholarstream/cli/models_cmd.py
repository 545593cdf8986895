"""``models``: roles with the model each uses and where that choice comes from, providers
(built-in, the server's OpenAI-compatible ones, the user's endpoints), and ``--check``:
what a role's model can do, step by step."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer
from rich.table import Table

from scholarstream.cli._choices import LOCAL_USERNAME
from scholarstream.cli.context import UserOption, console, resolve_user, run_with_runtime

# Imported where used, so that defining the command (``--help``) imports none of them.
if TYPE_CHECKING:
    from scholarstream.llm import CheckReport, RoleStatus
    from scholarstream.runtime import Runtime

_SOURCE = {"user": "your choice", "server default": "server default", "settings": "settings"}
_STATE_STYLE = {
    "checked": "green",
    "configured": "cyan",
    "check_failed": "red",
    "problem": "yellow",
    "offline": "yellow",
}


class _Overview:
    def __init__(
        self,
        offline: bool,
        roles: list[RoleStatus],
        providers: list[tuple[str, str, str, bool]],
        checks: list[tuple[str, CheckReport]],
    ) -> None:
        self.offline = offline
        self.roles = roles
        self.providers = providers
        self.checks = checks


def models(
    ctx: typer.Context,
    role: Annotated[
        str | None,
        typer.Argument(help="With --check: the role to check (default: every role's model)."),
    ] = None,
    check: Annotated[
        bool,
        typer.Option(
            "--check",
            help="Ask each model: reachable, a one-token answer, tool calls, JSON-schema output.",
        ),
    ] = False,
    user: UserOption = LOCAL_USERNAME,
) -> None:
    """List model roles, the model each uses (and from where), and the providers; with
    --check, test what each model can do. Exit code 1 when a checked model is not usable."""
    if role is not None and not check:
        raise typer.BadParameter("a ROLE is only taken with --check", param_hint="ROLE")

    async def collect(runtime: Runtime) -> _Overview:
        from scholarstream.db import OwnerScope
        from scholarstream.llm import check_and_record

        async with runtime.database.session() as session:
            owner = (await resolve_user(session, user)).id
        async with runtime.database.session() as session:
            scope = OwnerScope(session, owner)
            providers = await _providers(runtime, scope)
            wanted = [role] if role is not None else await runtime.models.roles_for(scope)
            to_check: dict[str, str] = {}  # model -> the first role that uses it
            for name in wanted if check else []:
                choice = await runtime.models.choice(name, scope)
                if choice is not None:
                    to_check.setdefault(choice.model, name)
                elif role is not None:
                    raise typer.BadParameter(f"the {name!r} role has no model", param_hint="ROLE")
        checks = []
        for model, name in to_check.items():
            console.print(f"Checking {name}: {model} ...", highlight=False)
            report = await check_and_record(
                runtime.models,
                runtime.database,
                owner,
                model,
                role=name,
                settings=runtime.settings,
            )
            checks.append((name, report))
        async with runtime.database.session() as session:
            scope = OwnerScope(session, owner)
            offline = await runtime.models.offline_for(scope)
            statuses = await runtime.models.status(scope)
        return _Overview(offline, statuses, providers, checks)

    overview = run_with_runtime(ctx, collect)
    for name, report in overview.checks:
        _print_check(name, report)
    _print_roles(overview.roles)
    _print_providers(overview.providers)
    if overview.offline:
        console.print(
            "[yellow]Offline mode:[/] no model is configured. Choose one in the web UI "
            "(Settings -> Models), or set e.g. "
            "SCHOLARSTREAM_LLM__ROLES__DEFAULT=openai:gpt-4.1-mini and OPENAI_API_KEY.",
            highlight=False,
        )
    if any(not report.usable for _, report in overview.checks):
        raise typer.Exit(1)


async def _providers(runtime: Runtime, scope: object) -> list[tuple[str, str, str, bool]]:
    """(name, label, where it comes from, has credentials) of every provider this user can
    name in a model string."""
    from scholarstream.db import OwnerScope
    from scholarstream.llm import registered_providers

    assert isinstance(scope, OwnerScope)
    rows = [
        (p.name, p.label, "built-in", await runtime.credentials.has_credential(scope, p.name))
        for p in registered_providers()
    ]
    builtin = {name for name, *_ in rows}
    for name, configured in sorted(runtime.settings.llm.providers.items()):
        if name not in builtin and configured.base_url:
            rows.append((name, f"OpenAI-compatible at {configured.base_url}", "settings", True))
    for endpoint in await runtime.models.choices.endpoints(scope):
        rows.append((endpoint.name, f"OpenAI-compatible at {endpoint.base_url}", "user", True))
    return rows


def _print_roles(roles: list[RoleStatus]) -> None:
    table = Table(title="Model roles")
    table.add_column("role")
    table.add_column("used for", ratio=1)
    table.add_column("model", no_wrap=True)  # a model string is copied whole
    table.add_column("from")
    table.add_column("status", ratio=1)
    for r in roles:
        style = _STATE_STYLE.get(r.state, "white")
        source = _SOURCE.get(r.source or "", r.source or "-")
        table.add_row(r.role, r.purpose, r.model or "-", source, f"[{style}]{r.status}[/]")
    console.print(table)


def _print_providers(providers: list[tuple[str, str, str, bool]]) -> None:
    table = Table(title="Providers")
    for column in ("provider", "name", "from", "credentials"):
        table.add_column(column)
    for name, label, source, ready in providers:
        table.add_row(name, label, source, "[green]yes[/]" if ready else "no")
    console.print(table)


def _print_check(role: str, report: CheckReport) -> None:
    verdict = "[green]usable[/]" if report.usable else "[red]not usable[/]"
    console.print(f"[bold]{role}[/]: {report.model_string} is {verdict}", highlight=False)
    for step in report.steps:
        mark = "[green]✓[/]" if step.ok else "[red]✗[/]"
        console.print(
            f"  {mark} {step.name:<12} {step.detail} ({step.seconds:.1f} s)", highlight=False
        )
    if report.usable:
        tools = "yes" if report.suggested.supports_tools else "no"
        console.print(
            f"  structured output: {report.suggested.structured_output}; tool calls: {tools}",
            highlight=False,
        )


def register(app: typer.Typer) -> None:
    app.command()(models)
