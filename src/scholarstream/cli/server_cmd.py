"""``serve`` (API + web UI + workers in one process) and ``worker`` (workers only)."""

from __future__ import annotations

import asyncio
import logging
import signal
from typing import Annotated

import typer

from scholarstream.api.middleware import is_loopback_host
from scholarstream.cli.context import console, state
from scholarstream.db import upgrade
from scholarstream.errors import ConfigurationError
from scholarstream.settings import Settings

log = logging.getLogger(__name__)


def check_bind_allowed(settings: Settings, host: str) -> None:
    """Single-user mode has no login, so it must not be reachable from other machines."""
    if not settings.server.multi_user and not is_loopback_host(host):
        raise ConfigurationError(
            f"Refusing to listen on {host} in single-user mode: anyone who can reach it would "
            "have full access without logging in.",
            hint="Bind to 127.0.0.1, or enable accounts with SCHOLARSTREAM_SERVER__MULTI_USER=true "
            "and create a user with 'scholarstream users create'.",
        )


def serve(
    ctx: typer.Context,
    host: Annotated[
        str | None, typer.Option(help="Address to listen on (default 127.0.0.1).")
    ] = None,
    port: Annotated[int | None, typer.Option(help="Port (default 8000).", min=1, max=65535)] = None,
) -> None:
    """Run the API, the web UI and the workers in one process (migrates the database first)."""
    import uvicorn

    from scholarstream.api import create_app
    from scholarstream.engine import Engine
    from scholarstream.gc_tuning import tune_for_serving
    from scholarstream.runtime import build_runtime

    settings = state(ctx).settings
    host = host or settings.server.host
    port = port or settings.server.port
    check_bind_allowed(settings, host)
    upgrade(settings.app_database_url)
    runtime = build_runtime(settings)
    app = create_app(runtime, engine=Engine(runtime))
    mode = "multi-user" if settings.server.multi_user else "single-user"
    console.print(
        f"ScholarStream on [bold]http://{host}:{port}[/] ({mode}, data in {settings.data_dir})",
        highlight=False,
    )
    tune_for_serving()
    uvicorn.Server(
        uvicorn.Config(app, host=host, port=port, log_config=None, proxy_headers=True)
    ).run()


def worker(ctx: typer.Context) -> None:
    """Run the durable workers only (queues and schedules), without the HTTP server."""
    from scholarstream.engine import Engine
    from scholarstream.runtime import build_runtime

    settings = state(ctx).settings
    upgrade(settings.app_database_url)

    async def run() -> None:
        runtime = build_runtime(settings)
        engine = Engine(runtime, role="worker")
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, stop.set)
        await engine.launch()
        console.print("ScholarStream worker running; Ctrl-C to stop.")
        try:
            await stop.wait()
        finally:
            await engine.shutdown()
            await runtime.close()

    asyncio.run(run())


def register(app: typer.Typer) -> None:
    app.command()(serve)
    app.command()(worker)
