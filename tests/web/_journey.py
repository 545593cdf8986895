"""A new user's first hour, walked in a real browser against a real running app on the embedded
defaults (SQLite, the durable engine, no language model configured), with every literature
source answered from recorded responses on this machine (``OfflineWorld``): nothing reaches
the network.

The walk: open the app, an unknown address, import a file into the library and search it, run
a paper search to an export, create a stream with the guide and run it, open its report, use
the chat tray, open research without a model, the trials and screening pages, and home again.
At each *stop* (a page in a state worth looking at) it hands the page to an ``Observer``: the
checks of tests/web/test_first_hour.py, or the screenshots of scripts/screenshots.py.

Where the journey sees something issue 26 says must not happen that no generic check can see
(a JSON 404, no favicon, research startable without a model), it adds an "expectation" finding
rather than stopping, so one run reports every problem.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

import httpx
from playwright.sync_api import Locator, Page, expect

from tests.conftest import SHARED_DATA
from tests.search.world import LiteratureWorld
from tests.web._checks import Findings, PageWatch, settle

LIBRARY_FILE = SHARED_DATA / "exports" / "asysd_testthat" / "scopus.ris"
LIBRARY_WORD = "taurine"  # in the title of one record of LIBRARY_FILE
QUESTION = "machine learning for natural language processing"  # the recorded responses' query
STREAM_OPENING = (
    "I want to follow new evidence on machine learning for clinical natural language "
    "processing, including work by Google DeepMind and Microsoft Research"
)
STREAM_ANSWERS = {
    "keywords": "clinical natural language processing, machine learning, text mining",
    "competitors": "Google DeepMind, Microsoft Research",
}
"""What the user types at a step of the guide, by step; at any other step they take the first
suggestion the guide offers (or skip an optional step)."""
CHAT_QUESTION = "What is new on machine learning for clinical text?"
RESEARCH_QUESTION = "Does machine learning improve clinical text classification?"

TRAY = "#chat-tray"
WAIT_MS = 30_000  # a run over recorded responses takes a few seconds; this only stops a hang
GUIDE_TURNS = 16
UUID = r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"


# --- the sources, offline -------------------------------------------------------------------

_STUDIES = SHARED_DATA / "api_fixtures" / "clinicaltrials_v2_aact"
_CROSSREF = SHARED_DATA / "api_fixtures" / "crossref_works_habanero" / "test_works_query.0.json"


@dataclass
class OfflineWorld:
    """Answers every literature source from responses recorded from the real services:
    PubMed, OpenAlex, Semantic Scholar and arXiv as ``LiteratureWorld`` does, Crossref with a
    recorded works query, ClinicalTrials.gov with the recorded studies. Any other host (e.g.
    SerpAPI) cannot be reached, as on a machine without that service."""

    literature: LiteratureWorld = field(default_factory=LiteratureWorld)

    def __call__(self, request: httpx.Request) -> httpx.Response:
        host = request.url.host
        if "crossref" in host:
            return httpx.Response(200, content=_CROSSREF.read_bytes(), headers=_JSON)
        if "clinicaltrials" in host:
            studies = [json.loads(p.read_text()) for p in sorted(_STUDIES.glob("NCT*.json"))]
            return httpx.Response(200, json={"studies": studies, "totalCount": len(studies)})
        if any(name in host for name in ("ncbi", "openalex", "semanticscholar", "arxiv")):
            return self.literature(request)
        raise httpx.ConnectError(f"{host} is not reachable from the journey", request=request)

    def transport(self) -> httpx.MockTransport:
        return httpx.MockTransport(self)


_JSON = {"content-type": "application/json"}


# --- what happens at a stop -----------------------------------------------------------------


class Observer(Protocol):
    def stop(self, page: Page, area: str, name: str, shot: str | None, scope: str | None) -> None:
        """The page is in a state worth checking (``shot``: the screenshot's name, if any;
        ``scope``: the CSS selector of the part that is new, when the rest was seen before)."""


@dataclass
class FirstHour:
    page: Page
    watch: PageWatch
    observer: Observer
    findings: Findings
    downloads: Path
    screening_seen: bool = False

    def run(self) -> None:
        for step in self.steps():
            step()

    def steps(self) -> list[Callable[[], None]]:
        return [
            self.home,
            self.not_found,
            self.library,
            self.paper_search,
            self.stream,
            self.chat_tray,
            self.research,
            self.trials,
            self.screening,
            self.home_again,
        ]

    # --- helpers ------------------------------------------------------------------------

    def stop(self, area: str, name: str, shot: str | None = None, scope: str | None = None) -> None:
        self.watch.idle(self.page)
        settle(self.page)
        self.observer.stop(self.page, area, name, shot, scope)

    def expectation(self, area: str, name: str, detail: str) -> None:
        self.findings.add(area, name, "issue 26 expectation", detail)

    def nav(self) -> Locator:
        return self.page.get_by_role("navigation", name="Main")

    def open_from_nav(self, label: str, path: str) -> None:
        """Through the main navigation, as a user would; by address if the menu lacks it."""
        link = self.nav().get_by_role("link", name=label, exact=True)
        if link.count():
            link.first.click()
        else:
            self.page.goto(path)
        self.page.wait_for_load_state()

    # --- the walk -----------------------------------------------------------------------

    def home(self) -> None:
        page = self.page
        page.goto("/")
        expect(page).to_have_title(re.compile("ScholarStream"))
        self.stop("home/nav", "home, first visit")
        labels = [t.strip() for t in self.nav().get_by_role("link").all_inner_texts()]
        if "API docs" in labels:
            self.expectation(
                "home/nav",
                "navigation",
                "API docs are in the main navigation (move them to a footer or help menu)",
            )
        icon = page.locator("link[rel~=icon]").first
        href = (icon.get_attribute("href") if icon.count() else None) or "/favicon.ico"
        answer = page.request.get(href)
        if answer.status != 200:
            self.expectation(
                "home/nav", "favicon", f"GET {href} answered {answer.status}: no favicon"
            )

    def not_found(self) -> None:
        page = self.page
        with self.watch.expect_status(404, r"/no-such-page$"):
            response = page.goto("/no-such-page")
            assert response is not None
            kind = response.headers.get("content-type", "")
            if "text/html" not in kind or not self.nav().count():
                self.expectation(
                    "home/nav",
                    "unknown address",
                    f"an unknown URL answers {kind or 'nothing'} "
                    "without the navigation (expected an HTML 404 page with navigation)",
                )
            self.stop("home/nav", "unknown address (404)")

    def library(self) -> None:
        page = self.page
        self.open_from_nav("Library", "/library")
        self.stop("library", "library, empty")
        page.get_by_label("File", exact=True).set_input_files(LIBRARY_FILE)
        page.get_by_role("button", name="Import", exact=True).click()
        expect(page.get_by_test_id("import-summary")).to_contain_text(LIBRARY_FILE.name)
        self.stop("library", "library after the import")
        words = page.get_by_label(re.compile(r"^Search words"))
        words.fill(LIBRARY_WORD)
        words.press("Enter")
        expect(page.get_by_test_id("result-count")).to_have_text(re.compile(r"^1 record"))
        self.stop("library", "library search", "library")

    def paper_search(self) -> None:
        page = self.page
        self.open_from_nav("Search", "/search")
        self.stop("search", "search form")
        page.get_by_label("Your question").fill(QUESTION)
        page.get_by_role("button", name="Start", exact=True).click()
        # The strategy first (when the form asks to confirm it, as it does by default).
        strategy, review = page.get_by_test_id("strategy"), page.get_by_test_id("review")
        expect(strategy.or_(review).first).to_be_visible(timeout=WAIT_MS)
        if strategy.is_visible():
            self.stop("search", "search strategy to confirm")
            strategy.get_by_role("button", name="Approve", exact=True).click()
        expect(review).to_be_visible(timeout=WAIT_MS)
        self.stop("search", "search results to review", "search-results")
        page.get_by_role("button", name=re.compile(r"^Accept")).click()
        final = page.get_by_test_id("final")
        expect(final).to_be_visible(timeout=WAIT_MS)
        self.stop("search", "search completed, with its exports")
        export = page.get_by_role("link", name=re.compile(r"^RIS")).first
        with page.expect_download() as download:
            export.click()
        saved = self.downloads / download.value.suggested_filename
        download.value.save_as(saved)
        records = sum(
            1
            for line in saved.read_text(encoding="utf-8-sig").splitlines()
            if line.startswith("ER  -")
        )
        if records == 0:
            self.findings.add("search", "search export", "export", f"{saved.name} holds no record")

    def stream(self) -> None:
        page = self.page
        self.open_from_nav("Streams", "/streams")
        self.stop("streams", "streams, none yet")
        page.get_by_role("link", name="New stream").first.click()
        answer = page.get_by_label("Your answer")
        expect(answer).to_be_visible()
        self.stop("streams", "stream guide, first question")
        self._guide_turn(lambda: _type(answer, STREAM_OPENING))
        for _ in range(GUIDE_TURNS):
            create = page.get_by_role("button", name="Create the stream")
            if create.count() and create.first.is_visible():
                self.stop("streams", "stream guide, review", "stream-guide")
                create.first.click()
                break
            self._guide_turn(self._answer_the_guide)
        else:
            raise AssertionError(f"the guide did not reach its review in {GUIDE_TURNS} turns")
        expect(page).to_have_url(re.compile(rf"/streams/{UUID}$"), timeout=WAIT_MS)
        self.stop("streams", "stream page, new")

        run = page.get_by_role("button", name="Run now")
        run.click()
        row = page.get_by_test_id("reports").locator("a[href*='/reports/']").first
        expect(row).to_be_visible(timeout=WAIT_MS)
        expect(run).to_be_enabled(timeout=WAIT_MS)
        self.stop("streams", "stream page after its first run", "stream-page")
        row.click()
        expect(page).to_have_url(re.compile(rf"/reports/{UUID}$"))
        expect(page.get_by_test_id("report-status")).not_to_be_empty()
        self.stop("streams", "stream report", "stream-report")

    def _step(self) -> str:
        current = self.page.get_by_test_id("steps").locator('[aria-current="step"]')
        return (current.first.get_attribute("data-step") or "") if current.count() else ""

    def _answer_the_guide(self) -> None:
        """What a user does at the guide's current step: type the answer they have for it,
        else take the first suggestion, else tick the first options, else skip, else type."""
        page, offer = self.page, self.page.get_by_test_id("guide-offer")
        typed = STREAM_ANSWERS.get(self._step())
        chips = offer.locator("button.chip")
        boxes = offer.get_by_role("checkbox")
        skip = offer.get_by_role("button", name=re.compile(r"^Skip"))
        if typed is None and chips.count():
            chips.first.click()
        elif typed is None and boxes.count():
            for index in range(min(2, boxes.count())):
                boxes.nth(index).check()
            offer.locator("fieldset button").first.click()
        elif typed is None and skip.count():
            skip.first.click()
        else:
            box = page.get_by_label("Your answer")
            box.fill(typed or "Yes, that is right")
            box.press("Enter")

    def _guide_turn(self, act: Callable[[], object]) -> None:
        page = self.page
        with page.expect_response(
            lambda r: r.request.method == "POST" and r.url.endswith("/turns"), timeout=WAIT_MS
        ):
            act()
        expect(page.get_by_test_id("composer")).to_have_attribute(
            "aria-busy", "false", timeout=WAIT_MS
        )

    def chat_tray(self) -> None:
        """On the report page: the tray opened with the keyboard, a question sent with Enter."""
        page = self.page
        toggle = page.get_by_role("button", name="Assistant", exact=True)
        toggle.focus()
        page.keyboard.press("Enter")
        tray = page.get_by_role("complementary", name="Assistant")
        expect(tray).to_be_visible()
        box = tray.get_by_label("Message to the assistant")
        expect(box).to_be_focused()
        self.stop("chat tray", "chat tray open on a report", None, TRAY)
        box.fill(CHAT_QUESTION)
        box.press("Enter")
        answer = tray.locator('[data-role="assistant"]').last
        expect(answer).to_have_attribute("data-status", "complete", timeout=WAIT_MS)
        expect(answer).not_to_be_empty()
        self.stop("chat tray", "chat tray with an answer", "chat-tray", TRAY)
        box.focus()
        page.keyboard.press("Escape")
        expect(tray).to_be_hidden()

    def research(self) -> None:
        page = self.page
        self.open_from_nav("Research", "/research")
        self.stop("research", "research, no model", "research")
        form = page.get_by_test_id("new-research-form")
        question = form.get_by_label("Research question")
        start = form.get_by_role("button", name="Start research")
        if not (question.count() and start.count()):
            return
        question.fill(RESEARCH_QUESTION)
        if start.is_enabled():
            self.expectation(
                "research",
                "research, no model",
                '"Start research" can be pressed with no '
                "model configured (expected: disabled, saying which keys are missing)",
            )
            with self.watch.expect_status(range(400, 500), r"/api/v1/research"):
                start.click()
                expect(form.get_by_role("alert").first).to_be_visible()
                self.stop("research", "research refused, no model")

    def trials(self) -> None:
        self.open_from_nav("Trials", "/trials")
        self.stop("trials", "trials")

    def screening(self) -> None:
        link = self.nav().get_by_role("link", name=re.compile("Screening"))
        if not link.count():
            return
        self.screening_seen = True
        link.first.click()
        self.page.wait_for_load_state()
        self.stop("screening", "screening", "screening")

    def home_again(self) -> None:
        self.open_from_nav("Home", "/")
        self.stop("home/nav", "home after the first hour", "home")


def _type(box: Locator, text: str) -> None:
    box.fill(text)
    box.press("Enter")
