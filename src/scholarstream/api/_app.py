"""The API's application factory: API under /api/v1, /health, the shared-report pages and
the offline docs. ``scholarstream.bootstrap.create_app`` adds the web UI and the engine."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, Protocol

import fastapi_offline
from fastapi import APIRouter, Depends, FastAPI, Request
from fastapi.openapi.docs import get_swagger_ui_html
from fastapi.responses import HTMLResponse
from fastapi.staticfiles import StaticFiles

from scholarstream import __version__
from scholarstream.accounts import ensure_local_user
from scholarstream.api._errors import ERROR_RESPONSES, install_error_handlers
from scholarstream.api._middleware import (
    LoopbackHostMiddleware,
    RequestIdMiddleware,
    RequestInputMiddleware,
    SecurityHeadersMiddleware,
)
from scholarstream.api._query_guard import (
    UndeclaredQueryError,
    refuse_undeclared_query,
    undeclared_query_response,
)
from scholarstream.api.routes import (
    ai_columns,
    auth,
    chat,
    chat_thread,
    evidence,
    health,
    library,
    me,
    models,
    notifications,
    research,
    research_evidence,
    research_share,
    screening,
    search,
    sources,
    stream_reports,
    streams,
    tokens,
)
from scholarstream.chat import Assistant, TurnHub
from scholarstream.chat.tools import ToolServices
from scholarstream.research import SHARED_PATH
from scholarstream.runtime import Runtime

API_PREFIX = "/api/v1"
SWAGGER_STATIC = "/static/swagger"
_ANNOTATIONS = frozenset({"title", "description", "default", "examples"})


class Launchable(Protocol):
    """What the app starts and stops with itself (the durable engine, from bootstrap)."""

    async def launch(self) -> None: ...

    async def shutdown(self) -> None: ...


class ScholarStreamAPI(FastAPI):
    """FastAPI with two corrections to the OpenAPI document it builds:

    - an error (4XX, 5XX) is always the JSON ``ErrorBody``: FastAPI documents every
      additional response of a route in the route's media type, so the errors of a
      server-sent events route would read as ``text/event-stream``;
    - the event models of server-sent events responses (``routes._sse``) come with their
      schemas in ``$defs``; these are moved into ``components/schemas``."""

    def openapi(self) -> dict[str, Any]:
        if self.openapi_schema is None:
            document = super().openapi()
            _errors_as_json(document)
            _hoist_defs(document, document.setdefault("components", {}).setdefault("schemas", {}))
        return self.openapi_schema or {}


def api_router() -> APIRouter:
    # Every route refuses the query parameters it does not declare (``api._query_guard``):
    # a misspelt one would otherwise be ignored without a word.
    router = APIRouter(
        prefix=API_PREFIX,
        responses=ERROR_RESPONSES,
        dependencies=[Depends(refuse_undeclared_query)],
    )
    for module in (
        auth,
        me,
        tokens,
        models,
        library,
        sources,
        search,
        evidence,
        ai_columns,
        chat,
        chat_thread,
        streams,
        stream_reports,
        research,
        research_evidence,
        notifications,
        screening,
    ):
        router.include_router(module.router)
    return router


def create_app(runtime: Runtime, *, engine: Launchable | None = None) -> FastAPI:
    """The API app (no web UI: ``scholarstream.bootstrap.create_app`` builds the whole
    product). ``engine`` given: the app launches it (the durable workers) with itself."""

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        async with runtime.database.session() as session:
            local_user = await ensure_local_user(session)
        # Single-user mode's caller on every request (see deps.released_user); loaded whole
        # and kept detached (the session factory does not expire on commit).
        app.state.local_user = local_user
        app.state.local_user_id = local_user.id
        await runtime.library.start()
        if engine is not None:
            await engine.launch()
        try:
            yield
        finally:
            await app.state.assistant.hub.close()
            if engine is not None:
                await engine.shutdown()
            await runtime.close()

    app = ScholarStreamAPI(
        title="ScholarStream",
        version=__version__,
        summary="Self-hostable AI research assistant for scientific literature.",
        docs_url=None,
        redoc_url=None,
        lifespan=lifespan,
    )
    app.state.runtime = runtime
    app.state.engine = engine
    chat = runtime.settings.chat
    app.state.assistant = Assistant(
        settings=runtime.settings,
        database=runtime.database,
        models=runtime.models,
        tools=ToolServices(
            database=runtime.database,
            sources=runtime.sources,
            library=runtime.library,
            search=runtime.settings.search,
            chat=chat,
        ),
        hub=TurnHub(
            grace_seconds=chat.reconnect_grace_seconds,
            retain_seconds=chat.retain_finished_seconds,
        ),
    )
    # Outermost last: security headers, request id (and the 500 of an unhandled error),
    # the Host check of single-user mode, then body limits and NUL characters.
    limits = runtime.settings.limits
    app.add_middleware(
        RequestInputMiddleware,
        body_bytes=limits.json_body_bytes,
        route_body_bytes={("POST", f"{API_PREFIX}/library/imports"): limits.import_body_bytes},
    )
    if not runtime.settings.server.multi_user:
        app.add_middleware(LoopbackHostMiddleware, public_paths=(SHARED_PATH,))
    app.add_middleware(RequestIdMiddleware)
    app.add_middleware(SecurityHeadersMiddleware)
    install_error_handlers(app)
    app.add_exception_handler(UndeclaredQueryError, undeclared_query_response)
    app.include_router(health.router)
    app.include_router(research_share.router)
    app.include_router(api_router())
    _mount_docs(app)
    return app


def _errors_as_json(document: dict[str, Any]) -> None:
    for path in document.get("paths", {}).values():
        for operation in path.values():
            for status, response in operation.get("responses", {}).items():
                content = response.get("content")
                if not str(status).startswith(("4", "5")) or not content:
                    continue
                schema = next(iter(content.values())).get("schema", {})
                response["content"] = {"application/json": {"schema": schema}}


def _hoist_defs(node: Any, components: dict[str, Any]) -> None:
    """Moves every ``$defs`` under ``node`` into ``components``. A name already there must
    be the same model (the same schema, but for annotations)."""
    if isinstance(node, list):
        for item in node:
            _hoist_defs(item, components)
        return
    if not isinstance(node, dict):
        return
    for name, schema in node.pop("$defs", {}).items():
        _hoist_defs(schema, components)
        known = components.setdefault(name, schema)
        if _without_annotations(known) != _without_annotations(schema):
            raise RuntimeError(f"Two different schemas are named {name!r} in the API document.")
    for value in node.values():
        _hoist_defs(value, components)


def _without_annotations(node: Any) -> Any:
    if isinstance(node, dict):
        return {k: _without_annotations(v) for k, v in node.items() if k not in _ANNOTATIONS}
    if isinstance(node, list):
        return [_without_annotations(item) for item in node]
    return node


def _mount_docs(app: FastAPI) -> None:
    """Swagger UI 5 from the fastapi-offline package's assets: /docs works with no internet."""
    assets = Path(fastapi_offline.__file__).parent / "static"
    app.mount(SWAGGER_STATIC, StaticFiles(directory=assets), name="swagger")
    app.add_api_route("/docs", _swagger_page, include_in_schema=False)


_BACK_TO_APP = (
    '<nav aria-label="ScholarStream" style="padding:.6rem 1.5rem;border-bottom:1px solid #dde1ea;'
    'font:15px/1.5 system-ui,sans-serif"><a href="/" style="color:#2456c8">'
    "&larr; Back to ScholarStream</a></nav>"
)
"""The docs page's way back to the web UI (the page is Swagger UI's, not one of the UI's)."""


async def _swagger_page(request: Request) -> HTMLResponse:
    # Module-level, not a closure over the app: FastAPI caches endpoints by identity
    # (an lru_cache of 4096), so a closure would keep every app ever built alive.
    page = get_swagger_ui_html(
        openapi_url=request.app.openapi_url or "/openapi.json",
        title="ScholarStream API",
        swagger_js_url=f"{SWAGGER_STATIC}/swagger-ui-bundle.js",
        swagger_css_url=f"{SWAGGER_STATIC}/swagger-ui.css",
        swagger_favicon_url=f"{SWAGGER_STATIC}/favicon.png",
    )
    html = bytes(page.body).decode("utf-8").replace("<body>", f"<body>\n{_BACK_TO_APP}", 1)
    return HTMLResponse(html)
