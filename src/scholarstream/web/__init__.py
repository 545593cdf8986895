"""The web UI: Jinja2 pages and hand-written ES modules, shipped inside the package."""

from __future__ import annotations

from pathlib import Path

from fastapi import FastAPI
from fastapi.staticfiles import StaticFiles

from scholarstream.web.nav import NavItem, nav_items, register_nav_item

STATIC_DIR = Path(__file__).parent / "static"


def mount_web(app: FastAPI) -> None:
    from scholarstream.web.pages import router

    app.mount("/static/app", StaticFiles(directory=STATIC_DIR), name="app-static")
    app.include_router(router)


__all__ = ["NavItem", "mount_web", "nav_items", "register_nav_item"]
