"""The screening pages: the projects (and a new one), a project (progress, reviewers,
conflicts, full text, the PRISMA diagram, exports), and the focused screening view."""

from __future__ import annotations

import uuid
from collections.abc import Mapping

from fastapi import APIRouter, Depends, Request
from fastapi.responses import HTMLResponse, Response

from scholarstream.accounts import RuntimeDep
from scholarstream.errors import NotFoundError
from scholarstream.screening import Project, counted, screening_service
from scholarstream.search import SearchRunStore
from scholarstream.streams import StreamStore
from scholarstream.streams.monitoring import ReportStore
from scholarstream.web._nav import NavItem, register_nav_item
from scholarstream.web._pages import MaybeUser, _login_redirect, _models_offline, _not_found, render

router = APIRouter(include_in_schema=False, dependencies=[Depends(_models_offline)])

register_nav_item(NavItem("screening", "Screening", "/screening", order=12))

SCREENING_BACK = ("/screening", "Back to your screening projects")
NOT_YOURS = "There is no screening project with this address among yours."
_REPORTS_LISTED = 40


async def _sources(runtime: RuntimeDep, user_id: uuid.UUID) -> dict[str, object]:
    """What a new project can start from: the user's search runs with results, the
    finished reports of their streams that have items (newest first; a report with none
    has nothing to screen) and their library collections with records."""
    runs = [
        {"id": str(run.id), "label": run.question, "status": run.status}
        for run in await SearchRunStore(runtime.database).list(user_id)
        if run.status in ("waiting", "completed")
    ]
    reports: list[dict[str, str]] = []
    reports_store = ReportStore(runtime.database)
    for stream in await StreamStore(runtime.database).list(user_id):
        for report in await reports_store.list(user_id, stream.id):
            items = report.counts.new if report.counts is not None else 0
            if (
                report.status in ("complete", "partial")
                and items
                and len(reports) < _REPORTS_LISTED
            ):
                reports.append(
                    {
                        "stream_id": str(stream.id),
                        "report_id": str(report.id),
                        "label": f"{stream.stream_name}: report of "
                        f"{report.started_at.strftime('%Y-%m-%d %H:%M')} ({counted(items)})",
                    }
                )
    collections = [
        {"id": str(c.id), "label": f"{c.name} ({counted(c.records)})"}
        for c in await runtime.library.labels.collections(user_id)
        if c.records
    ]
    return {"runs": runs, "reports": reports, "collections": collections}


LIBRARY_FIELDS = ("query", "year_from", "year_to", "publication_type", "tag")
"""What a link may fill in of a library search (the Library page's "Screen these")."""
UNAVAILABLE = {
    "run": "The search run in the link has no results to screen (or is not yours): pick "
    "one of your search runs below.",
    "collection": "The collection in the link has no records (or is not yours): pick one "
    "of your collections below.",
}


def prefill(params: Mapping[str, str], sources: Mapping[str, object]) -> dict[str, str]:
    """The New project form as a link fills it in (``?run=ID``: a search run's results,
    from the Search page; ``?collection=ID``, or ``?query=`` with ``year_from``,
    ``year_to``, ``publication_type``, ``tag``: a library search, from the Library page):
    the values, the source chosen, and ``problem`` for a run or a collection that is not
    one the form offers."""
    filled = {name: params.get(name, "").strip() for name in ("run", "collection", *LIBRARY_FIELDS)}
    filled["source"], filled["problem"] = "library", ""
    for name, kind, listed in (
        ("run", "search_run", "runs"),
        ("collection", "collection", "collections"),
    ):
        offered = sources.get(listed)
        items = offered if isinstance(offered, list) else []
        ids = {str(item.get("id")) for item in items if isinstance(item, Mapping)}
        if filled[name] in ids:
            filled["source"] = kind
            break
        if filled[name]:
            filled["problem"] = UNAVAILABLE[name]
            filled[name] = ""
    return filled


@router.get("/screening", response_class=HTMLResponse)
async def screening_list_page(request: Request, user: MaybeUser, runtime: RuntimeDep) -> Response:
    if user is None:
        return _login_redirect(request)
    projects = await screening_service(runtime).list(user.id)
    sources = await _sources(runtime, user.id)
    return render(
        request,
        "screening.html",
        user,
        "screening",
        chat_page="home",
        projects=projects.projects,
        sources=sources,
        prefill=prefill(request.query_params, sources),
    )


async def _project(runtime: RuntimeDep, user_id: uuid.UUID, project_id: str) -> Project | None:
    """The user's project (or one they review); None for text that is no id and for a
    project that is not theirs, which the pages answer with 404."""
    try:
        return await screening_service(runtime).get(user_id, uuid.UUID(project_id))
    except (ValueError, NotFoundError):
        return None


@router.get("/screening/{project_id}", response_class=HTMLResponse)
async def screening_project_page(
    request: Request, user: MaybeUser, runtime: RuntimeDep, project_id: str
) -> Response:
    if user is None:
        return _login_redirect(request)
    project = await _project(runtime, user.id, project_id)
    if project is None:
        return _not_found(request, user, "screening", NOT_YOURS, SCREENING_BACK)
    return render(
        request,
        "screening_project.html",
        user,
        "screening",
        chat_page="home",
        project=project,
        project_id=project_id,
    )


@router.get("/screening/{project_id}/screen", response_class=HTMLResponse)
async def screening_view_page(
    request: Request, user: MaybeUser, runtime: RuntimeDep, project_id: str
) -> Response:
    if user is None:
        return _login_redirect(request)
    project = await _project(runtime, user.id, project_id)
    if project is None:
        return _not_found(request, user, "screening", NOT_YOURS, SCREENING_BACK)
    return render(
        request,
        "screening_screen.html",
        user,
        "screening",
        chat_page="home",
        project=project,
        project_id=project_id,
    )
