"""The shareable report of a completed research, served publicly: ``GET
/shared/research/{token}`` needs no login. The token (``secrets.token_urlsafe(32)``) is
the page's only address; an unknown token is a 404 like any other.

The page is sent with headers that keep it inert and private: a Content-Security-Policy
that allows no script and no request (only the page's own stylesheet), ``nosniff``, no
referrer, ``noindex``, no framing (``share_page.SHARE_HEADERS``).
"""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse

from scholarstream.api._deps import RuntimeDep
from scholarstream.errors import NotFoundError
from scholarstream.research import (
    SHARE_HEADERS,
    SHARED_PATH,
    ShareStorage,
    render_missing_share_page,
)

router = APIRouter(tags=["research"])


# A page, not part of the API: left out of the OpenAPI document like the web UI's pages.
@router.get(SHARED_PATH + "{token}", response_class=HTMLResponse, include_in_schema=False)
async def shared_research(token: str, runtime: RuntimeDep, request: Request) -> HTMLResponse:
    """The shareable HTML report of a completed research, public to whoever has the link.
    A link that leads nowhere is a 404: a page for a browser (whoever got the link may
    have no account), the API's error body for a client that asks for JSON."""
    try:
        page = await ShareStorage.for_settings(runtime.settings).read(token)
    except NotFoundError as exc:
        accept = request.headers.get("accept", "").lower()
        if "json" in accept and "text/html" not in accept:
            raise
        missing = render_missing_share_page(exc.message, exc.hint)
        return HTMLResponse(missing, status_code=404, headers=SHARE_HEADERS)
    return HTMLResponse(page, headers=SHARE_HEADERS)
