"""Browser-test fixtures: real uvicorn servers on loopback and one Chromium per module."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import (
    Browser,
    BrowserContext,
    ConsoleMessage,
    Page,
    Request,
    Route,
    expect,
    sync_playwright,
)

from scholarstream.web import STATIC_DIR
from tests.conftest import skip_or_fail
from tests.web.live import (
    CHROMIUM,
    CHROMIUM_ARGS,
    Account,
    LiveServer,
    NewPage,
    PageProblems,
    SourceStub,
    clean_settings,
    is_foreign,
    serve,
)

# Assertions wait as long as actions do (10 s, below): on a loaded two-core CI machine a
# page's first API answers can take several seconds, and Playwright's default is 5 s.
expect.set_options(timeout=10_000)

STATIC_ORIGIN = "http://scholarstream.test"
"""The made-up origin of ``static_page``: nothing is served there but the app's static files."""
STATIC_PREFIX = "/static/app/"


@pytest.fixture(scope="module")
def single_user_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    with serve(clean_settings(tmp_path_factory.mktemp("single-user-data"))) as live:
        yield live


@pytest.fixture(scope="module")
def account() -> Account:
    return Account(username="ada", password="correct horse battery", display_name="Ada Lovelace")


@pytest.fixture(scope="module")
def multi_user_server(
    tmp_path_factory: pytest.TempPathFactory, account: Account
) -> Iterator[LiveServer]:
    settings = clean_settings(
        tmp_path_factory.mktemp("multi-user-data"), server={"multi_user": True}
    )
    with serve(settings, accounts=[account]) as live:
        yield live


@pytest.fixture
def fresh_server(tmp_path: Path) -> Iterator[LiveServer]:
    """A single-user server of the test's own, for tests that change the user's data."""
    with serve(clean_settings(tmp_path / "data")) as live:
        yield live


@pytest.fixture(scope="module")
def _module_source_stub() -> SourceStub:
    return SourceStub()


@pytest.fixture(scope="module")
def stubbed_server(
    tmp_path_factory: pytest.TempPathFactory, _module_source_stub: SourceStub
) -> Iterator[LiveServer]:
    """A single-user server whose literature sources reach ``source_stub``, never the network."""
    settings = clean_settings(tmp_path_factory.mktemp("stubbed-sources-data"))
    with serve(settings, source_transport=_module_source_stub.transport()) as live:
        yield live


@pytest.fixture
def source_stub(_module_source_stub: SourceStub) -> Iterator[SourceStub]:
    """The stub of ``stubbed_server``, with no requests recorded and no answer set."""
    _module_source_stub.reset()
    yield _module_source_stub
    _module_source_stub.reset()


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    """One headless Debian Chromium for the module; Playwright never downloads one here."""
    if not CHROMIUM.exists():
        skip_or_fail(
            f"browser tests need Debian's Chromium at {CHROMIUM} (apt-get install chromium)"
        )
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            yield chromium
        finally:
            chromium.close()


@pytest.fixture
def problems() -> PageProblems:
    return PageProblems()


@pytest.fixture
def new_page(browser: Browser, problems: PageProblems) -> Iterator[NewPage]:
    """A factory for a page in a fresh context (its own cookies) against a server.

    Every request to a host other than loopback is recorded (redirects included) and
    aborted; console errors and uncaught exceptions are recorded. Tests end with
    ``problems.assert_none()``.
    """
    contexts: list[BrowserContext] = []

    def on_request(request: Request) -> None:
        if is_foreign(request.url):
            problems.foreign_requests.append(request.url)

    def guard(route: Route) -> None:
        if is_foreign(route.request.url):
            route.abort("blockedbyclient")
        else:
            route.continue_()

    def on_console(message: ConsoleMessage) -> None:
        if message.type == "error":
            problems.console_errors.append(f"{message.text} ({message.location.get('url')})")

    def make(live: LiveServer) -> Page:
        context = browser.new_context(
            base_url=live.base_url, viewport={"width": 1280, "height": 800}
        )
        contexts.append(context)
        context.set_default_timeout(10_000)
        context.on("request", on_request)
        context.route("**/*", guard)
        page = context.new_page()
        page.on("console", on_console)
        page.on("pageerror", lambda error: problems.page_errors.append(str(error)))
        return page

    yield make
    for context in contexts:
        context.close()


def _serve_static(route: Route) -> None:
    path = route.request.url.removeprefix(STATIC_ORIGIN)
    if path == "/":
        route.fulfill(content_type="text/html", body="<!doctype html><title>static</title>")
        return
    target = (STATIC_DIR / path.removeprefix(STATIC_PREFIX)).resolve()
    if (
        not path.startswith(STATIC_PREFIX)
        or not target.is_relative_to(STATIC_DIR)
        or not target.is_file()
    ):
        route.abort()
        return
    route.fulfill(content_type="text/javascript", body=target.read_text(encoding="utf-8"))


@pytest.fixture
def static_page(browser: Browser) -> Iterator[Page]:
    """A page on a made-up origin whose only content is the app's static files, served by
    Playwright itself: a module (``import('/static/app/...')``) runs with nothing else on
    the page, and nothing leaves the machine."""
    context = browser.new_context()
    context.route("**/*", lambda route: route.abort())
    context.route(f"{STATIC_ORIGIN}/**", _serve_static)
    page = context.new_page()
    page.goto(f"{STATIC_ORIGIN}/")
    yield page
    context.close()
