"""The home page is the user's dashboard: on a fresh install it says where to start; with work
it shows the recent searches with their state, the streams with their last report and what is
new in it, the research runs and the library's size, each linked. Work is made through the
public API of a live server (durable engine on, sources answered from recorded responses). The
server's health moved to /admin, for administrators only.

In a real browser (Debian's Chromium): the dashboard at 1440 and 390 px without sideways
scrolling, the main navigation on one line at 390 px behind a Menu button that the keyboard
opens and closes, and a visible focus on every control of the top bar."""

from __future__ import annotations

import asyncio
import json
import re
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import httpx
import pytest
from playwright.sync_api import Page, expect

from scholarstream.accounts import create_user
from scholarstream.chat.core import ChatContext
from scholarstream.chat.pages import get_page
from scholarstream.db import upgrade
from scholarstream.runtime import build_runtime
from scholarstream.settings import Settings
from scholarstream.web import STATIC_DIR
from tests.conftest import SHARED_DATA
from tests.search.world import QUESTION, LiteratureWorld
from tests.streams.test_runs_api import STREAMS, new_stream, run_now, server
from tests.web._checks import overflow, settle
from tests.web.live import (
    Account,
    LiveServer,
    NewPage,
    PageProblems,
    clean_settings,
    import_into_library,
    serve,
)

LIBRARY_FILE = SHARED_DATA / "exports" / "asysd_testthat" / "scopus.ris"
RESEARCH_PROMPT = "Does taurine supplementation lower blood pressure in adults?"
SEARCH_SOURCES = ["pubmed", "openalex", "semantic_scholar", "arxiv"]
WAIT_SEC = 60.0
START_HERE = ["Import a file", "Search papers", "Create a stream", "Start research"]
ICON = "/static/app/shared/favicon.svg"
UUID = r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"


BLOCKS = frozenset(
    {"p", "li", "ul", "ol", "h1", "h2", "h3", "div", "section", "header", "footer", "nav"}
    | {"main", "dl", "dt", "dd", "button", "title", "label"}
)


class _Text(HTMLParser):
    """The text of a page as it reads (no script or style; blocks apart, inline elements
    run together), and its links by text."""

    def __init__(self) -> None:
        super().__init__()
        self.parts: list[str] = []
        self.links: dict[str, str] = {}
        self._skip = 0
        self._href: str | None = None
        self._link_text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in ("script", "style"):
            self._skip += 1
        if tag in BLOCKS:
            self.parts.append(" ")
        if tag == "a":
            self._href = dict(attrs).get("href")
            self._link_text = []

    def handle_endtag(self, tag: str) -> None:
        if tag in ("script", "style"):
            self._skip -= 1
        if tag in BLOCKS:
            self.parts.append(" ")
        if tag == "a" and self._href is not None:
            self.links[" ".join("".join(self._link_text).split())] = self._href
            self._href = None

    def handle_data(self, data: str) -> None:
        if not self._skip:
            self.parts.append(data)
            if self._href is not None:
                self._link_text.append(data)

    @property
    def text(self) -> str:
        return " ".join("".join(self.parts).split())


def _read(response: httpx.Response) -> _Text:
    parsed = _Text()
    parsed.feed(response.text)
    return parsed


# --- fresh install -----------------------------------------------------------------------


@pytest.fixture(scope="module")
def empty_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    with serve(clean_settings(tmp_path_factory.mktemp("empty-home"))) as live:
        yield live


def _link(page: _Text, starting: str) -> str:
    """The target of the link whose text starts with ``starting`` (a start action's text is
    its title, then its line of description)."""
    return next(href for text, href in page.links.items() if text.startswith(starting))


def test_a_fresh_install_says_where_to_start(empty_server: LiveServer) -> None:
    response = httpx.get(empty_server.url("/"))
    assert response.status_code == 200
    page = _read(response)
    assert "Start here" in page.text
    assert "Nothing here yet" in page.text
    targets = ["/library#import-h", "/search", "/streams/new", "/research#new"]
    assert [_link(page, label) for label in START_HERE] == targets
    # No empty panels on a first run, and nothing of the server on the home page.
    assert 'data-testid="dash-' not in response.text
    assert "Workers" not in page.text and "sqlite" not in page.text.lower()
    # The way to the API docs and to the server's status is the footer, not the menu.
    assert page.links["API docs"] == "/docs"
    assert page.links["Server status"] == "/admin"


def test_the_admin_page_shows_the_server_health(empty_server: LiveServer) -> None:
    response = httpx.get(empty_server.url("/admin"))
    assert response.status_code == 200
    page = _read(response)
    assert page.text.startswith("Server status · ScholarStream")
    for label in ("Status", "Version", "Mode Single-user", "Database SQLite", "Workers"):
        assert label in page.text
    assert str(empty_server.settings.data_dir) in page.text


def test_only_administrators_see_the_server_status(tmp_path: Path) -> None:
    admin = Account(username="root", password="correct horse battery", display_name="Root")
    member = Account(username="ada", password="correct horse battery", display_name="Ada")
    settings = clean_settings(tmp_path / "data", server={"multi_user": True})
    _off_loop(lambda: upgrade(settings.app_database_url))
    _off_loop(lambda: asyncio.run(_create_admin(settings, admin)))
    with serve(settings, [member]) as live:
        with httpx.Client(base_url=live.base_url) as anonymous:
            login = anonymous.get("/admin")
            assert login.status_code == 303
            assert login.headers["location"] == "/login?next=/admin"
        for account, status in ((member, 403), (admin, 200)):
            with httpx.Client(base_url=live.base_url, headers={"Origin": live.base_url}) as client:
                logged = client.post(
                    "/api/v1/auth/login",
                    json={"username": account.username, "password": account.password},
                )
                assert logged.status_code == 200, logged.text
                answer = client.get("/admin")
                assert answer.status_code == status
                home = _read(client.get("/"))
                if status == 403:
                    assert "only an administrator can open it" in _read(answer).text
                    assert "Server status" not in home.links
                else:
                    assert "Accounts 2" in _read(answer).text
                    assert home.links["Server status"] == "/admin"


async def _create_admin(settings: Settings, account: Account) -> None:
    """As ``scholarstream users create NAME --admin`` does."""
    runtime = build_runtime(settings)
    try:
        async with runtime.database.session() as session:
            await create_user(
                session,
                account.username,
                account.password,
                display_name=account.display_name,
                is_admin=True,
            )
    finally:
        await runtime.close()


def _off_loop(function: Callable[[], object]) -> None:
    """Set-up that runs its own event loop, in a thread (Playwright's sync API may hold one
    in the main thread)."""
    with ThreadPoolExecutor(max_workers=1) as pool:
        pool.submit(function).result()


# --- with work --------------------------------------------------------------------------


def _wait_for_search(client: httpx.Client, run_id: str) -> dict[str, Any]:
    deadline = time.monotonic() + WAIT_SEC
    while (run := client.get(f"/api/v1/search/runs/{run_id}").json())["status"] == "running":
        assert time.monotonic() < deadline, f"the search never reached a checkpoint: {run}"
        time.sleep(0.1)
    result: dict[str, Any] = run
    return result


def populate(live: LiveServer, client: httpx.Client) -> dict[str, Any]:
    """A user's first hour through the public API: a file imported, a stream created and run
    once, a paper search started (it waits at its first checkpoint), a research draft."""
    import_into_library(live, client, LIBRARY_FILE)
    stream = new_stream(client)
    report = run_now(client, f"{STREAMS}/{stream['id']}")
    started = client.post(
        "/api/v1/search/runs", json={"question": QUESTION, "sources": SEARCH_SOURCES}
    )
    assert started.status_code == 202, started.text
    search = _wait_for_search(client, started.json()["id"])
    draft = client.post("/api/v1/research/draft", json={"prompt": RESEARCH_PROMPT})
    assert draft.status_code == 201, draft.text
    records = client.get("/api/v1/library/records", params={"limit": 1}).json()["total"]
    return {
        "stream": stream,
        "report": report,
        "search": search,
        "research": draft.json(),
        "records": records,
    }


@pytest.fixture(scope="module")
def busy_server(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[tuple[LiveServer, dict[str, Any]]]:
    settings = clean_settings(tmp_path_factory.mktemp("busy-home"))
    with server(settings, LiteratureWorld()) as (live, client):
        yield live, populate(live, client)


def test_the_dashboard_shows_the_users_work(busy_server: tuple[LiveServer, dict[str, Any]]) -> None:
    live, made = busy_server
    page = _read(httpx.get(live.url("/")))
    text = page.text
    assert "Start here" not in text and "Start something new" in text
    for label in START_HERE:
        assert any(link.startswith(label) for link in page.links)

    # The stream, its last report and what is new in it.
    stream, report = made["stream"], made["report"]
    assert page.links[stream["stream_name"]] == f"/streams/{stream['id']}"
    assert page.links["All streams"] == "/streams"
    new = report["report"]["counts"]["new"]
    assert new > 0
    assert "First report, " in text and f": {new} item" in text
    assert page.links["Open the report"] == f"/streams/{stream['id']}/reports/{report['id']}"
    best = report["report"]["items"][0]["record"]["title"]
    assert " ".join(best.split()) in text

    # The search, with its state and a link that opens it.
    search = made["search"]
    assert page.links[QUESTION] == f"/search?run={search['id']}"
    state = {"waiting": "Waiting for you", "completed": "Completed"}[search["status"]]
    assert f"{QUESTION} {state}" in text

    # The research draft and the library's size.
    research = made["research"]
    assert page.links[research["title"]] == f"/research/{research['id']}"
    assert f"{research['title']} Draft" in text
    assert f"{made['records']:,} records" in text
    assert f"from {LIBRARY_FILE.name}." in text
    assert page.links["Open the library"] == "/library"
    # Nothing of the server's health, no ids as labels.
    assert "Workers" not in text
    assert not re.search(UUID, text)


def _dashboard_json(html: str) -> dict[str, Any]:
    found = re.search(
        r'<script type="application/json" data-role="dashboard">(.*?)</script>', html, re.S
    )
    assert found, "the page carries no dashboard for its chat"
    data: dict[str, Any] = json.loads(found.group(1))
    return data


def test_the_chat_sees_the_dashboard_the_page_shows(
    busy_server: tuple[LiveServer, dict[str, Any]],
) -> None:
    live, made = busy_server
    html = httpx.get(live.url("/")).text
    # The page's script hands the dashboard to the chat tray, its times written as shown.
    assert '<script type="module" src="/static/app/home/home.js"></script>' in html
    script = (STATIC_DIR / "home" / "home.js").read_text(encoding="utf-8")
    assert "registerChatContext(() => ({ dashboard: shown }))" in script

    dashboard = _dashboard_json(html)
    stream, report = made["stream"], made["report"]
    (line,) = dashboard["streams"]
    assert line["name"] == stream["stream_name"]
    last = line["last_report"]
    assert last["first"] is True and last["new"] == report["report"]["counts"]["new"] > 0
    best = report["report"]["items"][0]["record"]["title"]
    assert last["best"][0] == best
    assert dashboard["searches"][0]["question"] == QUESTION
    research = dashboard["research"][0]
    assert (research["title"], research["status"]) == (made["research"]["title"], "Draft")
    assert dashboard["library"]["records"] == made["records"]
    assert dashboard["library"]["file"] == LIBRARY_FILE.name
    assert not re.search(UUID, json.dumps(dashboard))  # no ids for the model to repeat

    # What the assistant is told is that dashboard, not the server's health.
    context = get_page("home").context_builder
    assert context is not None
    told = context(ChatContext(current_page="home", dashboard=dashboard))
    assert f"Stream “{stream['stream_name']}”: Reports " in told
    status = {"complete": "Complete", "partial": "Partial"}[report["status"]]
    assert f"first report ({status}, {last['when']}): {last['new']} items" in told
    assert f"Recent search “{QUESTION}”: " in told
    assert f"Research “{made['research']['title']}”: Draft, " in told
    assert f"Library: {made['records']:,} records" in told
    assert "Server status" not in told and "Workers" not in told


def test_the_dashboard_times_are_written_as_every_page_writes_them(
    busy_server: tuple[LiveServer, dict[str, Any]],
) -> None:
    live, _ = busy_server
    html = httpx.get(live.url("/")).text
    times = re.findall(r'<time datetime="([^"]+)">', html)
    assert times and all(re.match(r"\d{4}-\d\d-\d\dT.*\+00:00$", t) for t in times), times
    # Rewritten in the reader's own date and time by the one shared helper the research pages
    # use, not left in UTC.
    script = (STATIC_DIR / "home" / "home.js").read_text(encoding="utf-8")
    assert 'import { dateTime, showTimes } from "/static/app/shared/dates.js";' in script
    assert "showTimes(root);" in script
    for page in ("list-page.js", "research-page.js"):
        research = (STATIC_DIR / "research" / page).read_text(encoding="utf-8")
        assert '"/static/app/shared/dates.js"' in research


# --- unknown addresses and the favicon ------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "accept", "kind"),
    [
        ("/no-such-page", "text/html,application/xhtml+xml,*/*;q=0.8", "html"),  # a browser
        ("/no-such-page", "*/*", "html"),  # curl
        ("/streams/x/y/z", None, "html"),
        ("/no-such-page", "application/json", "json"),
        ("/api/v1/no-such-thing", "text/html,*/*;q=0.8", "json"),
        ("/api", "text/html", "json"),
        ("/static/app/no-such-file.js", "*/*", "html"),
    ],
)
def test_unknown_addresses_answer_a_page_outside_the_api(
    empty_server: LiveServer, path: str, accept: str | None, kind: str
) -> None:
    headers = {"Accept": accept} if accept else {}
    response = httpx.get(empty_server.url(path), headers=headers)
    assert response.status_code == 404
    if kind == "json":
        assert response.headers["content-type"] == "application/json"
        body = response.json()
        assert body["code"] == "not_found" and body["hint"] == "Check the path against /docs."
        return
    assert response.headers["content-type"].startswith("text/html")
    page = _read(response)
    assert page.text.startswith("Page not found · ScholarStream")
    assert "There is no page at this address." in page.text
    assert page.links["Go to your dashboard"] == "/"
    for label in ("Search", "Library", "Streams", "Research"):
        assert page.links[label] == f"/{label.lower()}"


def test_an_unknown_address_when_logged_out_offers_the_login(tmp_path: Path) -> None:
    settings = clean_settings(tmp_path / "data", server={"multi_user": True})
    with serve(settings) as live:
        response = httpx.get(live.url("/no-such-page"), headers={"Accept": "text/html"})
    assert response.status_code == 404
    page = _read(response)
    assert page.links["Log in"] == "/login"
    assert "Search" not in page.links  # no menu for nobody


def test_the_favicon_is_served_and_named_by_every_page(empty_server: LiveServer) -> None:
    for path in ("/favicon.ico", ICON):
        icon = httpx.get(empty_server.url(path))
        assert icon.status_code == 200
        assert icon.headers["content-type"].startswith("image/svg+xml")
        assert icon.text.lstrip().startswith("<svg")
    for path in ("/", "/admin", "/no-such-page", "/library"):
        html = httpx.get(empty_server.url(path)).text
        assert f'<link rel="icon" href="{ICON}" type="image/svg+xml">' in html


def test_the_api_docs_are_reached_from_the_footer_and_lead_back(empty_server: LiveServer) -> None:
    home = _read(httpx.get(empty_server.url("/")))
    docs = httpx.get(empty_server.url(home.links["API docs"]))
    assert docs.status_code == 200
    page = _read(docs)
    assert page.text.startswith("ScholarStream API")
    assert page.links["← Back to ScholarStream"] == "/"


# --- in the browser ----------------------------------------------------------------------


def _menu(page: Page) -> Any:
    return page.get_by_role("button", name="Menu")


def _nav_top(page: Page) -> list[float]:
    nav = page.get_by_role("navigation", name="Main")
    return [
        round(box["y"]) for link in nav.get_by_role("link").all() if (box := link.bounding_box())
    ]


@pytest.mark.browser
def test_the_dashboard_fits_desktop_and_phone(
    busy_server: tuple[LiveServer, dict[str, Any]], new_page: NewPage, problems: PageProblems
) -> None:
    live, made = busy_server
    page = new_page(live)
    page.set_viewport_size({"width": 1440, "height": 900})
    page.goto("/")
    expect(page.get_by_role("heading", name="Your streams")).to_be_visible()
    assert overflow(page) is None
    # Times in the reader's own format (as the other pages write them), not UTC; the chat
    # tray is given the dashboard with the times as shown.
    when = page.locator("[data-page=home] time").first
    expect(when).not_to_contain_text("UTC")
    shown, local = when.evaluate(
        "el => [el.textContent, new Date(el.getAttribute('datetime')).toLocaleString()]"
    )
    assert shown == local
    sent = page.evaluate(
        "async () => (await import('/static/app/chat/page-context.js')).collectContext()"
    )
    assert sent["current_page"] == "home"
    assert sent["dashboard"]["streams"][0]["name"] == made["stream"]["stream_name"]
    assert sent["dashboard"]["streams"][0]["last_report"]["when"] == local  # not the ISO time
    # Desktop: the whole menu on one line, no Menu button; the API docs are in the footer.
    expect(_menu(page)).to_be_hidden()
    tops = _nav_top(page)
    assert len(tops) >= 7 and len(set(tops)) == 1, tops
    nav_labels = page.get_by_role("navigation", name="Main").get_by_role("link").all_inner_texts()
    assert "API docs" not in [label.strip() for label in nav_labels]
    expect(page.locator("footer").get_by_role("link", name="API docs")).to_be_visible()
    page.screenshot(path="/tmp/home-after-desktop-work.png", full_page=True)

    page.set_viewport_size({"width": 390, "height": 844})
    settle(page)
    assert overflow(page) is None
    header = page.locator("header.topbar").bounding_box()
    assert header is not None and header["height"] < 60, header  # one line
    expect(page.get_by_role("navigation", name="Main")).to_be_hidden()
    stream = page.get_by_role("link", name=made["stream"]["stream_name"])
    expect(stream).to_be_visible()
    box = stream.bounding_box()
    assert box is not None and box["x"] + box["width"] <= 390
    page.screenshot(path="/tmp/home-after-mobile-work.png", full_page=True)
    problems.assert_none()


@pytest.mark.browser
def test_the_phone_menu_opens_and_closes_with_the_keyboard(
    empty_server: LiveServer, new_page: NewPage, problems: PageProblems
) -> None:
    page = new_page(empty_server)
    page.set_viewport_size({"width": 390, "height": 844})
    page.goto("/")
    menu = _menu(page)
    expect(menu).to_have_attribute("aria-expanded", "false")
    # Tab from the top: the skip link, the brand, then the Menu button, each visibly focused.
    page.keyboard.press("Tab")
    expect(page.get_by_role("link", name="Skip to the content")).to_be_focused()
    expect(page.get_by_role("link", name="Skip to the content")).to_be_in_viewport()
    page.keyboard.press("Tab")
    page.keyboard.press("Tab")
    expect(menu).to_be_focused()
    outline = menu.evaluate("el => getComputedStyle(el).outlineStyle")
    assert outline not in ("", "none"), outline

    page.keyboard.press("Enter")
    expect(menu).to_have_attribute("aria-expanded", "true")
    nav = page.get_by_role("navigation", name="Main")
    expect(nav).to_be_visible()
    assert overflow(page) is None
    page.screenshot(path="/tmp/home-after-mobile-menu.png", full_page=True)
    page.keyboard.press("Tab")
    first = nav.get_by_role("link", name="Home")
    expect(first).to_be_focused()
    assert first.evaluate("el => getComputedStyle(el).outlineStyle") != "none"
    page.keyboard.press("Escape")
    expect(menu).to_have_attribute("aria-expanded", "false")
    expect(menu).to_be_focused()
    expect(nav).to_be_hidden()

    # Through the menu to another page, where the menu starts closed again.
    menu.press("Enter")
    nav.get_by_role("link", name="Library").click()
    expect(page).to_have_url(empty_server.url("/library"))
    expect(_menu(page)).to_have_attribute("aria-expanded", "false")
    problems.assert_none()


@pytest.mark.browser
def test_the_404_page_in_the_browser_has_the_menu(
    empty_server: LiveServer, new_page: NewPage, problems: PageProblems
) -> None:
    page = new_page(empty_server)
    response = page.goto("/no-such-page")
    assert response is not None and response.status == 404
    problems.expect_failed_loads(404)
    expect(page.get_by_role("heading", level=1)).to_have_text("Page not found")
    expect(page.get_by_role("navigation", name="Main")).to_be_visible()
    page.get_by_role("link", name="Go to your dashboard").click()
    expect(page).to_have_url(empty_server.url("/"))
    problems.assert_none()
