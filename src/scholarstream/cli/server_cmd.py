"""``serve`` (API + web UI, and the workers unless ``--no-workers``) and ``worker``
(workers only). Several of each may share a PostgreSQL database: see docs/deployment.md."""

from __future__ import annotations

import errno
import logging
import signal
import socket
import sys
from typing import TYPE_CHECKING, Annotated

import typer

from scholarstream.cli.context import console, state
from scholarstream.errors import ConfigurationError

if TYPE_CHECKING:  # imported by the commands that run, so that --help imports none
    from scholarstream.settings import Settings

log = logging.getLogger(__name__)


def check_bind_allowed(settings: Settings, host: str) -> None:
    """Single-user mode has no login, so it must not be reachable from other machines."""
    # Here, not at the top: importing the API package costs a worker a second at start.
    from scholarstream.public_addresses import is_loopback_host

    if not settings.server.multi_user and not is_loopback_host(host):
        raise ConfigurationError(
            f"Refusing to listen on {host} in single-user mode: anyone who can reach it would "
            "have full access without logging in.",
            hint="Bind to 127.0.0.1, or enable accounts with SCHOLARSTREAM_SERVER__MULTI_USER=true "
            "and create a user with 'scholarstream users create'.",
        )


_OTHER_PORT = "choose another port with --port (or SCHOLARSTREAM_SERVER__PORT)"
# Why a bind fails, in words, and what to do: by errno; anything else is named as it is.
_BIND_FAILURES: dict[int, tuple[str, str]] = {
    errno.EADDRINUSE: (
        "the port is already in use (another ScholarStream, or another program, listens on it)",
        f"Stop the process that listens on it, or {_OTHER_PORT}.",
    ),
    errno.EACCES: (
        "this user may not use the port (ports below 1024 need administrator rights)",
        f"Run as a user who may, or {_OTHER_PORT}, e.g. --port 8000.",
    ),
    errno.EADDRNOTAVAIL: (
        "the address is not one of this machine's",
        "Give --host an address of this machine, e.g. 127.0.0.1.",
    ),
}


def bind_server_socket(host: str, port: int) -> socket.socket:
    """The server's listening address, taken before anything else starts: a port in use
    must stop ``serve`` before it migrates the database or launches the durable engine
    (which would take an executor id and could pick up queued work only to stop again).
    ``ConfigurationError`` naming the address and what to do when it cannot be taken."""
    address = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    try:
        family, kind, proto, _, sockaddr = socket.getaddrinfo(
            host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
        )[0]
    except socket.gaierror as exc:
        raise ConfigurationError(
            f"Cannot listen on {address}: the host name {host!r} does not resolve.",
            hint="Give --host an address of this machine, e.g. 127.0.0.1.",
        ) from exc
    sock = socket.socket(family, kind, proto)
    try:
        # As uvicorn does: a restarted server may take its port at once (on Windows the
        # option would let a second server take a port in use, so it is left off there).
        if sys.platform != "win32":
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(sockaddr)
    except OSError as exc:
        sock.close()
        why, hint = _BIND_FAILURES.get(
            exc.errno or 0,
            (f"{exc.strerror or exc}", f"Check --host and --port, or {_OTHER_PORT}."),
        )
        raise ConfigurationError(f"Cannot listen on {address}: {why}.", hint=hint) from exc
    return sock


ExecutorIdOption = Annotated[
    str | None,
    typer.Option(
        "--executor-id",
        help="This process's id in the durable engine; a restarted process given the same id "
        "resumes its interrupted work. Default: SCHOLARSTREAM_ENGINE__EXECUTOR_ID, else "
        "'<host>-<role>-<n>' (n: the lowest number free on this host).",
    ),
]


def serve(
    ctx: typer.Context,
    host: Annotated[
        str | None, typer.Option(help="Address to listen on (default 127.0.0.1).")
    ] = None,
    port: Annotated[int | None, typer.Option(help="Port (default 8000).", min=1, max=65535)] = None,
    workers: Annotated[
        bool | None,
        typer.Option(
            "--workers/--no-workers",
            help="Also work the queues and schedules here (default: "
            "SCHOLARSTREAM_ENGINE__RUN_QUEUES, true). --no-workers when 'scholarstream worker' "
            "processes do the work.",
        ),
    ] = None,
    executor_id: ExecutorIdOption = None,
) -> None:
    """Run the API, the web UI and the workers in one process (migrates the database first)."""
    import uvicorn

    from scholarstream.bootstrap import serve_app
    from scholarstream.db import upgrade
    from scholarstream.gc_tuning import tune_for_serving

    configured = state(ctx).settings
    host = host or configured.server.host
    port = port or configured.server.port
    # The address it is started on, for the links it makes with no request to go by (the
    # stream reports' notifications); server.public_url still wins.
    settings = configured.serving_at(host, port)
    check_bind_allowed(settings, host)
    listening = bind_server_socket(host, port)
    with listening:  # closed however serve ends
        upgrade(settings.app_database_url)
        run_queues = settings.engine.run_queues if workers is None else workers
        app = serve_app(settings, run_queues=run_queues, executor_id=executor_id)
        mode = "multi-user" if settings.server.multi_user else "single-user"
        console.print(
            f"ScholarStream on [bold]http://{host}:{port}[/] ({mode}, data in {settings.data_dir})",
            highlight=False,
        )
        tune_for_serving()
        uvicorn.Server(
            uvicorn.Config(app, host=host, port=port, log_config=None, proxy_headers=True)
        ).run(sockets=[listening])


def worker(ctx: typer.Context, executor_id: ExecutorIdOption = None) -> None:
    """Run the durable workers only (queues and schedules), without the HTTP server."""
    import asyncio

    from scholarstream.bootstrap import worker_engine
    from scholarstream.db import upgrade
    from scholarstream.runtime import build_runtime

    settings = state(ctx).settings
    upgrade(settings.app_database_url)

    async def run() -> None:
        runtime = build_runtime(settings)
        engine = worker_engine(runtime, executor_id=executor_id)
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, stop.set)
        try:
            await engine.launch()
            console.print(
                f"ScholarStream worker running (executor {engine.executor_id}); Ctrl-C to stop.",
                highlight=False,
            )
            if settings.server.public_url is None:
                # A worker serves no page: the links it sends can only guess the address.
                console.print(
                    "server.public_url is not set: links in the notifications this worker "
                    f"sends point to {settings.server.base_url}. Set it (or "
                    "SCHOLARSTREAM_SERVER__PUBLIC_URL) to the address people open.",
                    highlight=False,
                )
            await stop.wait()
        finally:
            await engine.shutdown()
            await runtime.close()

    asyncio.run(run())


def register(app: typer.Typer) -> None:
    app.command()(serve)
    app.command()(worker)
