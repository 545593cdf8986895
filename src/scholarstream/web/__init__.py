"""The web UI: Jinja2 pages and hand-written ES modules, shipped inside the package."""

from __future__ import annotations

from pathlib import Path

from fastapi import FastAPI
from fastapi.staticfiles import StaticFiles

from scholarstream.web._nav import NavItem, nav_items, register_nav_item
from scholarstream.web._pages import RESEARCH_STATUS_LABELS, router
from scholarstream.web._screening_pages import router as screening_router
from scholarstream.web._shell import install_not_found_page
from scholarstream.web._shell import router as shell_router

STATIC_DIR = Path(__file__).parent / "static"


def mount_web(app: FastAPI) -> None:
    app.mount("/static/app", StaticFiles(directory=STATIC_DIR), name="app-static")
    app.include_router(shell_router)
    app.include_router(router)
    app.include_router(screening_router)
    install_not_found_page(app)


__all__ = [
    "RESEARCH_STATUS_LABELS",
    "NavItem",
    "mount_web",
    "nav_items",
    "register_nav_item",
]
