"""A new user's first hour in a real browser (Debian's Chromium against a real uvicorn server
with the durable engine, on the embedded defaults, no model, sources answered offline): the
walk of tests/web/_journey.py, with every page it stops at checked for

- console errors and uncaught exceptions, and HTTP answers of 400 or more the page did not
  expect (tests/web/_checks.py ``PageWatch``);
- horizontal scrolling at 390 px and at 1440 px (``document.documentElement.scrollWidth >
  innerWidth``);
- visible text that leaks internals (the pattern list ``_checks.LEAKS``);
- accessibility: no serious or critical axe-core violation (axe-core from npm, injected by
  Playwright), every control reached with the Tab key in document order, each with a visible
  focus indicator (tests/web/_axe.py).

The journey walks to the end whatever it finds, then fails once with every finding grouped by
area (home/nav, library, search, streams, chat tray, research, trials, screening). A second
test shows the checks see each kind of problem on a page made to have them. See
docs/ui-checks.md."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, Route

from tests.web._axe import axe_violations, keyboard_walk, require_axe
from tests.web._checks import WIDTHS, Findings, PageWatch, leaks, overflow, settle
from tests.web._journey import FirstHour, OfflineWorld
from tests.web.live import LiveServer, NewPage, PageProblems, clean_settings, serve

pytestmark = pytest.mark.browser

BUDGET_SECONDS = 240.0
"""The walk takes about a minute on an idle two-core machine, and under three on one loaded
ten times over; past the budget something hangs or the journey grew too long."""


def check_page(
    page: Page, watch: PageWatch, axe: Path, scope: str | None = None
) -> list[tuple[str, str]]:
    """Every check of a stop, as (check, what fails) pairs. The page is left at desktop width."""
    found: list[tuple[str, str]] = []

    def drain() -> None:
        console, failures = watch.drain()
        found.extend(("console error", line) for line in console)
        found.extend(("unexpected HTTP failure", line) for line in failures)

    drain()
    found.extend(("leaks internals", line) for line in leaks(page, scope))
    found.extend(("axe-core", line) for line in axe_violations(page, axe, scope))
    found.extend(("keyboard", line) for line in keyboard_walk(page, scope))
    for label in ("mobile", "desktop"):
        width, height = WIDTHS[label]
        page.set_viewport_size({"width": width, "height": height})
        settle(page)
        problem = overflow(page)
        if problem:
            found.append((f"overflow at {width} px", problem))
    settle(page)
    drain()  # what the resizes set off (a re-render that fails) counts here too
    return found


class PageChecks:
    """The ``Observer`` of the journey that checks each stop and writes down what fails."""

    def __init__(self, findings: Findings, watch: PageWatch, axe: Path) -> None:
        self.findings = findings
        self.watch = watch
        self.axe = axe
        self.seconds: list[tuple[str, float]] = []

    def stop(self, page: Page, area: str, name: str, shot: str | None, scope: str | None) -> None:
        began = time.monotonic()
        for check, detail in check_page(page, self.watch, self.axe, scope):
            self.findings.add(area, name, check, detail)
        self.seconds.append((name, time.monotonic() - began))


@pytest.fixture
def journey_server(tmp_path: Path) -> Iterator[LiveServer]:
    settings = clean_settings(tmp_path / "data")
    with serve(settings, source_transport=OfflineWorld().transport(), engine=True) as live:
        yield live


def test_a_new_users_first_hour(
    journey_server: LiveServer, new_page: NewPage, problems: PageProblems, tmp_path: Path
) -> None:
    axe = require_axe()
    started = time.monotonic()
    page = new_page(journey_server)
    width, height = WIDTHS["desktop"]
    page.set_viewport_size({"width": width, "height": height})
    findings, watch = Findings(), PageWatch()
    watch.attach(page)
    checks = PageChecks(findings, watch, axe)
    FirstHour(page, watch, checks, findings, downloads=tmp_path).run()
    elapsed = time.monotonic() - started

    stops = [name for name, _ in checks.seconds]
    assert len(stops) >= 18, stops  # the walk went all the way
    (tmp_path / "first-hour-findings.json").write_text(
        json.dumps([f.__dict__ for f in findings.items], indent=1)
    )
    print(f"{elapsed:.0f} s in all; the checks at each stop:")
    print("\n".join(f"  {seconds:5.1f} s  {name}" for name, seconds in checks.seconds))
    report = findings.report()
    print(report)
    assert not findings.items, report
    # What new_page records that PageWatch does not: requests that tried to leave the machine.
    assert problems.foreign_requests == [], "the page tried to reach a non-local host"
    assert elapsed < BUDGET_SECONDS, f"the journey took {elapsed:.0f} s"


# --- the checks themselves ------------------------------------------------------------------

ORIGIN = "http://checks.test"
BAD_PAGE = """<!doctype html>
<html><head><title>Made to fail</title>
<style>
  .no-ring:focus { outline: none; }
  .wide { width: 600px; height: 10px; background: #eee; }
</style></head>
<body>
  <main>
    <h1>A page with every problem</h1>
    <p>1 validation error for LibraryQuery</p>
    <p>could not connect (ConnectError)</p>
    <p>Selected 'clinical' for stream_type</p>
    <p>Status: NOT_YET_RECRUITING</p>
    <p>'scholarstream models' lists the configured ones.</p>
    <table><tr><td><a href="/r">3f2b1c9e-2a4d-4b8e-9c1f-0a1b2c3d4e5f</a></td></tr></table>
    <img src="/pixel.png">
    <button class="no-ring">No ring</button>
    <div role="button" onclick="void 0">Not reachable</div>
    <a href="/first" tabindex="3">Jumps the queue</a>
    <div class="wide"></div>
    <p>Allowed: <code>stream_type</code>, <code>SOME_SETTING</code>, my_export.ris,
      https://example.org/a_b, a@b_c.org</p>
  </main>
  <script>
    console.error("broken");
    fetch("/missing");
  </script>
</body></html>
"""


def _serve_bad_page(route: Route) -> None:
    path = route.request.url.removeprefix(ORIGIN)
    if path == "/":
        route.fulfill(content_type="text/html", body=BAD_PAGE)
    elif path == "/missing":
        route.fulfill(status=404, content_type="application/json", body='{"detail": "Not Found"}')
    else:
        route.fulfill(status=204)


@pytest.fixture
def bad_page(browser: Browser) -> Iterator[Page]:
    context = browser.new_context(viewport={"width": 1440, "height": 900})
    context.route("**/*", lambda route: route.abort())
    context.route(f"{ORIGIN}/**", _serve_bad_page)
    page = context.new_page()
    yield page
    context.close()


def test_the_checks_see_each_kind_of_problem(bad_page: Page) -> None:
    axe = require_axe()
    watch = PageWatch()
    watch.attach(bad_page)
    bad_page.goto(f"{ORIGIN}/")
    watch.idle(bad_page)
    found = check_page(bad_page, watch, axe)
    text = "\n".join(f"{check}: {detail}" for check, detail in found)
    expected = {
        ("console error", "broken"),
        ("unexpected HTTP failure", "/missing answered 404"),
        ("leaks internals", '"validation error for" in p'),
        ("leaks internals", '"ConnectError"'),
        ("leaks internals", 'snake_case field name "stream_type" in p'),
        ("leaks internals", 'identifier in capitals "NOT_YET_RECRUITING"'),
        ("leaks internals", 'command for the terminal "scholarstream models"'),
        ("leaks internals", 'a UUID as visible text "3f2b1c9e-2a4d-4b8e-9c1f-0a1b2c3d4e5f"'),
        ("axe-core", "html-has-lang (serious"),
        ("axe-core", "image-alt (critical"),
        (
            "keyboard",
            "show no visible focus (outline, box-shadow, border or background "
            'unchanged): button "No ring"',
        ),
        ("keyboard", 'with a role but no tabindex: div "Not reachable"'),
        ("axe-core", "tabindex (serious"),  # a positive tabindex takes focus out of order
        ("overflow at 390 px", "div.wide"),
    }
    for check, part in expected:
        assert any(c == check and part in d for c, d in found), f"{check} {part!r}:\n{text}"
    # What is allowed: code samples, file names, addresses; and the 1440 px width fits.
    for allowed in ("my_export", "a_b", "b_c", "SOME_SETTING", "in code"):
        assert allowed not in text, text
    assert not any(check == "overflow at 1440 px" for check, _ in found), text

    # An answer declared as expected is not a finding, nor is Chromium's console line for it.
    with watch.expect_status(404, r"/missing$"):
        bad_page.evaluate("() => fetch('/missing')")
        watch.idle(bad_page)
    assert watch.drain() == ([], [])
