"""The one place that wires the product: it builds the runtime, imports each feature's
registrations (the modules that declare durable workflows and register their schedules),
builds the FastAPI app with the API and the web UI mounted, and launches the engine with it.

``scholarstream serve`` and ``scholarstream worker`` start here, as do the CLI commands that
run an engine of their own and the tests that need the whole app. Nothing imports this
module but those: it sits above every other package."""

from __future__ import annotations

import importlib
from collections.abc import Collection, Iterable

from fastapi import FastAPI

from scholarstream.api import create_app as create_api_app
from scholarstream.durable import SERVE, WORKER, Engine
from scholarstream.runtime import Runtime, build_runtime
from scholarstream.settings import Settings
from scholarstream.web import mount_web

__all__ = [
    "REGISTRATIONS",
    "build_engine",
    "create_app",
    "load_registrations",
    "serve_app",
    "worker_engine",
]

# Each feature's registration module: importing it declares its workflows to DBOS and
# registers its schedules (and any queue of its own) with ``scholarstream.durable``.
REGISTRATIONS: tuple[str, ...] = (
    "scholarstream.accounts._workflows",  # purge-expired-sessions
    "scholarstream.research._execution",  # research calls, synthesis, sharing, webhooks; sweep
    "scholarstream.search._durable",  # the search run workflow
    "scholarstream.streams.monitoring._schedule",  # run-due-streams
)


def load_registrations(modules: Iterable[str] = REGISTRATIONS) -> None:
    """Imports the registration modules (once; importing again changes nothing)."""
    for name in modules:
        importlib.import_module(name)


def build_engine(
    runtime: Runtime,
    *,
    role: str = SERVE,
    queues: Collection[str] | None = None,
    executor_id: str | None = None,
    name: str = "scholarstream",
) -> Engine:
    """The durable engine of this process, every feature's workflows registered first
    (``Engine`` documents the arguments). Not launched: ``create_app`` launches it with
    the app, or the caller does."""
    load_registrations()
    return Engine(runtime, name=name, role=role, queues=queues, executor_id=executor_id)


def create_app(runtime: Runtime, *, engine: Engine | None = None) -> FastAPI:
    """The whole product's app: the API (``scholarstream.api``) and the web UI. ``engine``
    given: the app launches it with itself and shuts it down after."""
    app = create_api_app(runtime, engine=engine)
    mount_web(app)
    return app


def serve_app(
    settings: Settings, *, run_queues: bool = True, executor_id: str | None = None
) -> FastAPI:
    """``scholarstream serve``'s app: the runtime built from ``settings``, an engine that
    works every queue (``run_queues``) or none (it still enqueues)."""
    runtime = build_runtime(settings)
    engine = build_engine(
        runtime, role=SERVE, queues=None if run_queues else (), executor_id=executor_id
    )
    return create_app(runtime, engine=engine)


def worker_engine(runtime: Runtime, *, executor_id: str | None = None) -> Engine:
    """``scholarstream worker``'s engine: every queue and schedule, no HTTP."""
    return build_engine(runtime, role=WORKER, executor_id=executor_id)
