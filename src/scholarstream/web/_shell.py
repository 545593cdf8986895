"""The shell's own pages: the home dashboard, the server's status for administrators, the
page of an address that does not exist, and the favicon."""

from __future__ import annotations

import inspect
from pathlib import Path

from fastapi import APIRouter, Depends, FastAPI, Request
from fastapi.responses import FileResponse, HTMLResponse, Response
from starlette.exceptions import HTTPException as StarletteHTTPException

from scholarstream.accounts import (
    LOCAL_USERNAME,
    RuntimeDep,
    SessionDep,
    list_users,
    optional_user,
)
from scholarstream.db.tables import User
from scholarstream.errors import ScholarStreamError
from scholarstream.web._dashboard import chat_view, collect_dashboard, tone
from scholarstream.web._nav import nav_items
from scholarstream.web._pages import (
    RESEARCH_STATUS_LABELS,
    MaybeUser,
    _login_redirect,
    _models_offline,
    render,
)

router = APIRouter(include_in_schema=False, dependencies=[Depends(_models_offline)])

FAVICON = Path(__file__).parent / "static" / "shared" / "favicon.svg"
API_PREFIX = "/api"
"""Under it every error is the API's JSON body; elsewhere a browser gets a page."""


@router.get("/", response_class=HTMLResponse)
async def home(request: Request, user: MaybeUser, runtime: RuntimeDep) -> Response:
    if user is None:
        return _login_redirect(request)
    dashboard = await collect_dashboard(runtime, user.id)
    research_labels = {status.value: label for status, label in RESEARCH_STATUS_LABELS.items()}
    return render(
        request,
        "home.html",
        user,
        "home",
        dashboard=dashboard,
        research_labels=research_labels,
        tone=tone,
        # What the page's chat sees of it (static/home/home.js).
        dashboard_chat=chat_view(dashboard, research_labels),
    )


@router.get("/admin", response_class=HTMLResponse)
async def admin_page(
    request: Request, user: MaybeUser, runtime: RuntimeDep, session: SessionDep
) -> Response:
    """The server's status (the process, its database, the workers, models): for
    administrators only in multi-user mode; the single-user mode's user is one."""
    if user is None:
        return _login_redirect(request)
    if not user.is_admin:
        page = render(
            request,
            "not_found.html",
            user,
            "admin",
            chat_page="home",
            heading="For administrators",
            message="This page shows the server's status; only an administrator can open it.",
            back_href="/",
            back_label="Back to your dashboard",
        )
        page.status_code = 403
        return page
    settings = runtime.settings
    return render(
        request,
        "admin.html",
        user,
        "admin",
        chat_page="home",  # the assistant has no page of its own here: the home page's
        database="PostgreSQL" if settings.is_postgres else "SQLite",
        data_dir=str(settings.data_dir),
        # The single-user mode's user exists in every database; it is no one's account.
        users=sum(u.username != LOCAL_USERNAME for u in await list_users(session))
        if settings.server.multi_user
        else None,
    )


@router.get("/favicon.ico")
async def favicon() -> FileResponse:
    # Browsers ask for /favicon.ico on pages that name no icon (the API docs, shared reports).
    return FileResponse(
        FAVICON, media_type="image/svg+xml", headers={"Cache-Control": "max-age=86400"}
    )


def wants_page(request: Request) -> bool:
    """Whether an error should answer with a page: outside /api, to a client that reads
    HTML or states no preference (a browser, curl); JSON to one that asks only for it."""
    path = request.url.path
    if path == API_PREFIX or path.startswith(API_PREFIX + "/"):
        return False
    accept = request.headers.get("accept", "").lower()
    if "text/html" in accept:
        return True
    return "json" not in accept


def install_not_found_page(app: FastAPI) -> None:
    """A 404 outside /api becomes the shell's page, with the navigation; the API's own
    handler (its JSON error body) still answers everything else."""
    fallback = app.exception_handlers.get(StarletteHTTPException)

    async def not_found(request: Request, exc: Exception) -> Response:
        if not wants_page(request):
            if fallback is None:
                raise exc
            answer = fallback(request, exc)
            return await answer if inspect.isawaitable(answer) else answer
        return await not_found_page(request)

    app.add_exception_handler(404, not_found)


async def not_found_page(request: Request) -> HTMLResponse:
    runtime = request.app.state.runtime
    user: User | None = None
    async with runtime.database.session() as session:
        try:
            user = await optional_user(request, runtime, session)
        except ScholarStreamError:
            user = None  # a cross-site request or an expired token: the page, without a user
        if user is not None:
            await _models_offline(request, runtime, session)
    page = render(
        request,
        "not_found.html",
        user,
        "",
        heading="Page not found",
        message="There is no page at this address. It may have moved, or the link may be mistyped.",
        back_href="/" if user is not None else "/login",
        back_label="Go to your dashboard" if user is not None else "Log in",
        destinations=[item for item in nav_items() if item.path != "/"] if user else [],
    )
    page.status_code = 404
    return page
