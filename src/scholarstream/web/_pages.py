"""Server-rendered pages of the web shell."""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable
from functools import partial
from pathlib import Path
from typing import Annotated, Any
from urllib.parse import urlencode

from fastapi import APIRouter, Depends, Form, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from fastapi.templating import Jinja2Templates

from scholarstream import __version__
from scholarstream.accounts import (
    RuntimeDep,
    SessionDep,
    client_address,
    optional_user,
    same_origin_login,
    set_session_cookie,
    start_session,
    throttled_login,
)
from scholarstream.db import OwnerScope
from scholarstream.db.tables import User
from scholarstream.errors import AuthenticationError, NotFoundError, RateLimitedError
from scholarstream.llm import registered_providers
from scholarstream.papers.formats import formats
from scholarstream.research import ResearchStatus, research_service
from scholarstream.sources import CLINICALTRIALS, TRIAL_PHASES, TRIAL_STATUSES
from scholarstream.sources.library import LIBRARY_INFO
from scholarstream.streams import FieldKind, StreamStore, field_specs
from scholarstream.streams.monitoring import ReportStore
from scholarstream.web._nav import NavItem, nav_items, register_nav_item

templates = Jinja2Templates(directory=Path(__file__).parent / "templates")
router = APIRouter(include_in_schema=False)

MaybeUser = Annotated[User | None, Depends(optional_user)]


async def _models_offline(request: Request, runtime: RuntimeDep, session: SessionDep) -> None:
    """Whether this user can ask a model (their own choice counts, not only the server's
    settings), for the offline banner ``render`` shows. Only pages that render (GET) need
    it; a form post (login, logout) keeps its own checks and is not refused here."""
    if request.method not in ("GET", "HEAD"):
        return
    user = await optional_user(request, runtime, session)
    if user is not None:
        offline = await runtime.models.offline_for_owner(runtime.database, user.id)
        request.state.models_offline = offline


router.dependencies.append(Depends(_models_offline))

register_nav_item(NavItem("search", "Search", "/search", order=5))
register_nav_item(NavItem("library", "Library", "/library", order=10))
register_nav_item(NavItem("trials", "Trials", "/trials", order=20))
register_nav_item(NavItem("streams", "Streams", "/streams", order=30))
register_nav_item(NavItem("research", "Research", "/research", order=40))

PHASE_LABELS = {
    "EARLY_PHASE1": "Early phase 1",
    "PHASE1": "Phase 1",
    "PHASE2": "Phase 2",
    "PHASE3": "Phase 3",
    "PHASE4": "Phase 4",
    "NA": "Not applicable",
}


def render(
    request: Request, name: str, user: User | None, active: str, **context: Any
) -> HTMLResponse:
    runtime = request.app.state.runtime
    return templates.TemplateResponse(
        request,
        name,
        {
            "user": user,
            "nav": nav_items(),
            "active": active,
            "version": __version__,
            "multi_user": runtime.settings.server.multi_user,
            "offline": getattr(request.state, "models_offline", runtime.models.offline),
            **context,
        },
    )


def _not_found(
    request: Request, user: User, active: str, message: str, back: tuple[str, str]
) -> HTMLResponse:
    """The page for an id that is not the user's (or no id at all): 404, as the API says,
    so that another user's ids are indistinguishable from ids that do not exist."""
    page = render(
        request,
        "not_found.html",
        user,
        active,
        message=message,
        back_href=back[0],
        back_label=back[1],
    )
    page.status_code = 404
    return page


async def _owns(lookup: Callable[..., Awaitable[object]], *ids: str) -> bool:
    """Whether the user's own ``lookup`` of ``ids`` finds it: False for text that is no
    id, and for another user's resource (their lookups do not find it)."""
    try:
        parsed = [uuid.UUID(text) for text in ids]
        await lookup(*parsed)
    except (ValueError, NotFoundError):
        return False
    return True


STREAMS_BACK = ("/streams", "Back to your streams")
RESEARCH_BACK = ("/research", "Back to your research")


def _login_redirect(request: Request) -> RedirectResponse:
    target = request.url.path + (f"?{request.url.query}" if request.url.query else "")
    return RedirectResponse(f"/login?{urlencode({'next': target}, safe='/')}", status_code=303)


@router.get("/settings", response_class=HTMLResponse)
async def settings_page(
    request: Request, user: MaybeUser, runtime: RuntimeDep, session: SessionDep
) -> Response:
    if user is None:
        return _login_redirect(request)
    scope = OwnerScope(session, user.id)
    return render(
        request,
        "settings.html",
        user,
        "settings",
        roles=await runtime.models.status(scope),
        providers=registered_providers(),
        user_keys={k.provider for k in await runtime.credentials.list_user_keys(scope)},
    )


@router.get("/search", response_class=HTMLResponse)
async def search_page(request: Request, user: MaybeUser, runtime: RuntimeDep) -> Response:
    if user is None:
        return _login_redirect(request)
    settings = runtime.settings.search
    return render(
        request,
        "search.html",
        user,
        "search",
        default_sources=settings.default_sources,
        max_iterations=settings.max_iterations,
    )


@router.get("/library", response_class=HTMLResponse)
async def library_page(request: Request, user: MaybeUser) -> Response:
    if user is None:
        return _login_redirect(request)
    known = sorted(formats(), key=lambda f: f.label.lower())
    return render(
        request,
        "library.html",
        user,
        "library",
        import_formats=[(f.name, f.label) for f in known if f.read is not None],
        # What the file picker offers first; "All files" stays available in it.
        accept=",".join(
            sorted({ext for f in known if f.read is not None for ext in f.extensions} | {".gz"})
        ),
        export_formats=[(f.name, f.label) for f in known if f.write is not None],
    )


def _code_label(code: str) -> str:
    """``NOT_YET_RECRUITING`` -> ``Not yet recruiting``."""
    return code.replace("_", " ").capitalize()


@router.get("/trials", response_class=HTMLResponse)
async def trials_page(request: Request, user: MaybeUser, runtime: RuntimeDep) -> Response:
    if user is None:
        return _login_redirect(request)
    info = runtime.sources.get(CLINICALTRIALS).info
    return render(
        request,
        "trials.html",
        user,
        "trials",
        source=info,
        phases=[(code, PHASE_LABELS.get(code, _code_label(code))) for code in TRIAL_PHASES],
        statuses=[(code, _code_label(code)) for code in TRIAL_STATUSES],
    )


def _stream_fields() -> list[dict[str, Any]]:
    """The stream's editable fields as the forms show them, from the workflow's own field
    catalogue (labels, kinds, choices), then the chat instructions."""
    fields: list[dict[str, Any]] = [
        {
            "name": spec.name,
            "label": spec.label.capitalize(),
            "kind": spec.kind.value,
            "choices": list(spec.choices),
            "choice_labels": {c: spec.choice_label(c) for c in spec.choices},
            "optional": spec.optional,
            "long": spec.kind is FieldKind.TEXT and spec.name != "stream_name",
        }
        for spec in field_specs()
    ]
    fields.append(
        {
            "name": "chat_instructions",
            "label": "Chat instructions",
            "kind": "text",
            "choices": [],
            "choice_labels": {},
            "optional": True,
            "long": True,
        }
    )
    return fields


@router.get("/streams", response_class=HTMLResponse)
async def streams_page(request: Request, user: MaybeUser, runtime: RuntimeDep) -> Response:
    if user is None:
        return _login_redirect(request)
    streams = await StreamStore(runtime.database).list(user.id)
    return render(request, "streams.html", user, "streams", streams=streams)


@router.get("/streams/new", response_class=HTMLResponse)
@router.get("/streams/new/{creation_id}", response_class=HTMLResponse)
async def stream_creation_page(
    request: Request, user: MaybeUser, runtime: RuntimeDep, creation_id: str | None = None
) -> Response:
    if user is None:
        return _login_redirect(request)
    creations = partial(StreamStore(runtime.database).creation, user.id)
    if creation_id is not None and not await _owns(creations, creation_id):
        message = "There is no stream draft with this address among yours."
        return _not_found(request, user, "streams", message, STREAMS_BACK)
    return render(
        request,
        "stream_new.html",
        user,
        "streams",
        chat_page="stream_new",
        creation_id=creation_id or "",
        fields=_stream_fields(),
    )


@router.get("/streams/{stream_id}", response_class=HTMLResponse)
async def stream_page(
    request: Request, user: MaybeUser, runtime: RuntimeDep, stream_id: str
) -> Response:
    if user is None:
        return _login_redirect(request)
    if not await _owns(partial(StreamStore(runtime.database).get, user.id), stream_id):
        message = "There is no stream with this address among yours."
        return _not_found(request, user, "streams", message, STREAMS_BACK)
    return render(
        request,
        "stream.html",
        user,
        "streams",
        chat_page="stream",
        stream_id=stream_id,
        fields=_stream_fields(),
        sources={
            info.name: {"label": info.label, "syntax": info.query_syntax}
            for info in [LIBRARY_INFO, *runtime.sources.infos()]
        },
    )


@router.get("/streams/{stream_id}/reports/{report_id}", response_class=HTMLResponse)
async def stream_report_page(
    request: Request, user: MaybeUser, runtime: RuntimeDep, stream_id: str, report_id: str
) -> Response:
    if user is None:
        return _login_redirect(request)
    lookup = partial(ReportStore(runtime.database).get, user.id)
    if not await _owns(lookup, stream_id, report_id):
        message = "There is no report with this address among your streams' reports."
        return _not_found(request, user, "streams", message, STREAMS_BACK)
    return render(
        request,
        "stream_report.html",
        user,
        "streams",
        stream_id=stream_id,
        report_id=report_id,
        source_labels={info.name: info.label for info in [LIBRARY_INFO, *runtime.sources.infos()]},
    )


RESEARCH_STATUS_LABELS = {
    ResearchStatus.DRAFT: "Draft",
    ResearchStatus.PROCESSING: "Processing",
    ResearchStatus.SYNTHESIZING: "Synthesizing",
    ResearchStatus.RETRYING: "Retrying",
    ResearchStatus.AWAITING_CONFIRMATION: "Awaiting confirmation",
    ResearchStatus.COMPLETED: "Completed",
    ResearchStatus.FAILED: "Failed",
}


@router.get("/research", response_class=HTMLResponse)
async def research_list_page(request: Request, user: MaybeUser, runtime: RuntimeDep) -> Response:
    if user is None:
        return _login_redirect(request)
    runs = await research_service(runtime).list(user.id)
    return render(
        request,
        "research.html",
        user,
        "research",
        chat_page="research_list",
        runs=runs,
        status_labels={status.value: label for status, label in RESEARCH_STATUS_LABELS.items()},
        # What the page's chat sees of the list (static/research/list-page.js).
        runs_json=[
            {
                "id": str(run.id),
                "title": run.title,
                "status": run.status.value,
                "models": run.selected_llms,
                "created_at": run.created_at.isoformat(),
            }
            for run in runs
        ],
    )


@router.get("/research/{research_id}", response_class=HTMLResponse)
async def research_page(
    request: Request, user: MaybeUser, runtime: RuntimeDep, research_id: str
) -> Response:
    if user is None:
        return _login_redirect(request)
    if not await _owns(partial(research_service(runtime).get, user.id), research_id):
        message = "There is no research with this address among yours."
        return _not_found(request, user, "research", message, RESEARCH_BACK)
    return render(
        request,
        "research_detail.html",
        user,
        "research",
        chat_page="research",
        research_id=research_id,
    )


@router.get("/login", response_class=HTMLResponse)
async def login_page(request: Request, user: MaybeUser, next: str = "/") -> Response:
    if user is not None:
        return RedirectResponse(_safe_next(next), status_code=303)
    return render(request, "login.html", None, "login", next=_safe_next(next), error=None)


@router.post("/login", response_class=HTMLResponse, dependencies=[Depends(same_origin_login)])
async def login_form(
    request: Request,
    runtime: RuntimeDep,
    session: SessionDep,
    username: Annotated[str, Form()],
    password: Annotated[str, Form()],
    next: Annotated[str, Form()] = "/",
) -> Response:
    try:
        user = await throttled_login(
            runtime.login_throttle, session, username, password, client_address(request)
        )
    except (AuthenticationError, RateLimitedError) as exc:
        error = f"{exc.message} {exc.hint}" if isinstance(exc, RateLimitedError) else exc.message
        page = render(request, "login.html", None, "login", next=_safe_next(next), error=error)
        page.status_code = exc.http_status
        page.headers.update(exc.response_headers)
        return page
    response = RedirectResponse(_safe_next(next), status_code=303)
    set_session_cookie(
        response,
        runtime,
        await start_session(session, user, days=runtime.settings.server.session_days),
    )
    return response


def _safe_next(target: str) -> str:
    # Only same-site paths: never redirect a fresh login to another host.
    return target if target.startswith("/") and not target.startswith("//") else "/"
