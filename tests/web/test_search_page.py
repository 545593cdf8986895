"""The Search page in a real browser: Debian's Chromium against a real uvicorn server that
runs search runs as durable workflows (DBOS). The sources answer with the real responses
of tests/search/world.py; the model is scripted (a pydantic-ai ``FunctionModel``), or
absent (offline mode, deterministic skills)."""

from __future__ import annotations

import re
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from playwright.sync_api import Locator, Page, ViewportSize, expect
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    ToolCallPart,
    UserPromptPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel

from tests.conftest import SHARED_DATA
from tests.search.world import QUESTION, LiteratureWorld
from tests.web._axe import axe_violations, keyboard_walk, require_axe
from tests.web.live import (
    LiveServer,
    NewPage,
    PageProblems,
    clean_settings,
    import_into_library,
    serve,
)

pytestmark = pytest.mark.browser

SOURCE_LABELS = {"pubmed": "PubMed", "arxiv": "arXiv"}
SCREENSHOTS = Path("/tmp")
RUN_WAIT_MS = 20_000  # a healthy step takes well under a second; this only stops a hang


# --- the scripted model ----------------------------------------------------------------

TOPIC = "Machine learning methods for natural language processing"
RATIONALE = [
    "Combines the two concepts with AND and each concept's synonyms with OR, as title and "
    "abstract words; English only on PubMed.",
    "Adds transformer terms, as your feedback asked, and keeps the first two concepts.",
]
QUERIES: list[dict[str, str]] = [
    {
        "pubmed": '("machine learning"[tiab] OR "deep learning"[tiab]) AND '
        '("natural language processing"[tiab] OR "NLP"[tiab])',
        "arxiv": 'all:"machine learning" AND all:"natural language processing"',
    },
    {
        "pubmed": '("machine learning"[tiab] OR "deep learning"[tiab]) AND '
        '("natural language processing"[tiab] OR "NLP"[tiab]) AND "transformer"[tiab]',
        "arxiv": 'all:"natural language processing" AND all:transformer',
    },
]
THEMES = ("Language models and text mining", "Other methods")
_PAPER = re.compile(r"^\[(\d+)\] \([^)]*\) (.*)$", re.M)
_LISTED = re.compile(r"^(\d+)\. (.*)$", re.M)
_SOURCE = re.compile(r"^- ([a-z_]+)\b", re.M)


def _prompt(messages: list[ModelMessage]) -> str:
    """The user prompt of the request (the first one: retries add prompts of their own)."""
    for message in messages:
        if isinstance(message, ModelRequest):
            for part in message.parts:
                if isinstance(part, UserPromptPart) and isinstance(part.content, str):
                    return part.content
    raise AssertionError("no user prompt")


def scripted_reason(text: str) -> str:
    words = " ".join(text.split()[:6]).rstrip(".,:;")
    return f"Scripted: about {words}."


class ScriptedModel:
    """Plays the model for every LLM skill of a search run. Which agent is asking shows in
    the JSON schema of its output tool; the answer is built from the prompt (the sources
    to write queries for, the numbered papers to score or to group), so it is what a good
    model would answer, and the same on every run."""

    def __init__(self) -> None:
        self.asked: list[str] = []

    def __call__(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        (tool,) = info.output_tools
        fields = set(tool.parameters_json_schema.get("properties", {}))
        prompt = _prompt(messages)
        answer: dict[str, Any]
        if "topic" in fields:
            self.asked.append("intent")
            answer = self.intent()
        elif "queries" in fields:
            self.asked.append("query")
            answer = self.strategy(prompt)
        elif "scores" in fields:
            self.asked.append("score")
            answer = self.scores(prompt)
        elif "themes" in fields:
            self.asked.append("organize")
            answer = self.themes(prompt)
        else:
            raise AssertionError(f"no script for output {tool.name}: {sorted(fields)}")
        return ModelResponse(parts=[ToolCallPart(tool_name=tool.name, args=answer)])

    @staticmethod
    def intent() -> dict[str, Any]:
        return {
            "topic": TOPIC,
            "concepts": [
                {"term": "machine learning", "synonyms": ["deep learning", "neural networks"]},
                {"term": "natural language processing", "synonyms": ["NLP", "text mining"]},
            ],
            "pico": None,
            "date_from": None,
            "date_to": None,
            "study_types": [],
            "languages": ["en"],
            "exclude_terms": [],
        }

    @staticmethod
    def strategy(prompt: str) -> dict[str, Any]:
        sources_block = prompt.split("Sources:\n", 1)[1].split("\n\n", 1)[0]
        sources = _SOURCE.findall(sources_block)
        previous = prompt.split("Previous strategies (oldest first): ", 1)[1]
        round_ = 0 if previous.startswith("none") else 1
        queries = [
            {
                "source": source,
                "query": QUERIES[round_].get(
                    source, "machine learning natural language processing"
                ),
                "filters": {"language": "english"} if source == "pubmed" else {},
            }
            for source in sources
        ]
        return {
            "queries": queries,
            "date_from": None,
            "date_to": None,
            "concepts": [
                {"concept": "machine learning", "terms": ["machine learning", "deep learning"]},
                {"concept": "natural language processing", "terms": ["NLP"]},
            ],
            "rationale": RATIONALE[round_],
        }

    @staticmethod
    def scores(prompt: str) -> dict[str, Any]:
        papers = _PAPER.findall(prompt.split("Papers:", 1)[1])
        assert papers, prompt
        return {
            "scores": [
                {
                    "paper": int(number),
                    # Spread over 0.30-0.99, fixed by the paper's text.
                    "score": 0.3 + (zlib.crc32(text.encode()) % 70) / 100,
                    "reason": scripted_reason(text),
                }
                for number, text in papers
            ]
        }

    @staticmethod
    def themes(prompt: str) -> dict[str, Any]:
        numbers = [int(n) for n, _ in _LISTED.findall(prompt)]
        assert numbers, prompt
        return {
            "themes": [
                {"label": THEMES[0], "papers": numbers[0::2]},
                {"label": THEMES[1], "papers": numbers[1::2]},
            ]
        }


@pytest.fixture
def world() -> LiteratureWorld:
    return LiteratureWorld()


@pytest.fixture
def offline_server(tmp_path: Path) -> Iterator[LiveServer]:
    """No model configured: the run uses the deterministic skills. arXiv refuses every
    request (401)."""
    settings = clean_settings(tmp_path / "data")
    world = LiteratureWorld(failing=["arxiv"])
    with serve(settings, source_transport=world.transport(), engine=True) as live:
        yield live


@pytest.fixture
def scripted() -> ScriptedModel:
    return ScriptedModel()


@pytest.fixture
def scripted_server(
    tmp_path: Path, world: LiteratureWorld, scripted: ScriptedModel
) -> Iterator[LiveServer]:
    """Every model role answered by ``scripted``."""
    settings = clean_settings(tmp_path / "data")
    models = {"default": FunctionModel(scripted)}
    with serve(settings, source_transport=world.transport(), engine=True, models=models) as live:
        yield live


# --- page helpers --------------------------------------------------------------------


def _start(page: Page, question: str, sources: list[str], *, confirm: bool = True) -> None:
    page.get_by_label("Your question").fill(question)
    choices = page.get_by_role("group", name="Sources").get_by_role("checkbox")
    expect(choices.first).to_be_visible()
    for box in choices.all():
        box.set_checked(False)
    for name in sources:
        page.get_by_role("checkbox", name=SOURCE_LABELS[name], exact=True).check()
    page.get_by_label("Confirm the strategy first").set_checked(confirm)
    page.get_by_role("button", name="Start", exact=True).click()


def _status(page: Page) -> Locator:
    return page.get_by_test_id("run-status")


def _papers(page: Page) -> Locator:
    return page.get_by_test_id("papers").get_by_role("listitem")


def _paper(page: Page, index: int) -> Locator:
    return _papers(page).nth(index)


def _run_id(page: Page) -> str:
    expect(page).to_have_url(re.compile(r"[?&]run=[0-9a-f-]{36}"))
    match = re.search(r"[?&]run=([0-9a-f-]{36})", page.url)
    assert match, page.url
    return match.group(1)


def _ris_records(path: Path) -> int:
    return sum(1 for line in path.read_text(encoding="utf-8-sig").splitlines() if line[:2] == "ER")


# --- offline mode: reload at the result review ---------------------------------------


def test_a_reload_at_the_result_review_continues_the_run(
    offline_server: LiveServer, new_page: NewPage, problems: PageProblems
) -> None:
    page = new_page(offline_server)
    page.goto("/")
    page.get_by_role("navigation", name="Main").get_by_role(
        "link", name="Search", exact=True
    ).click()
    expect(page).to_have_title("Search · ScholarStream")
    current = page.get_by_role("navigation", name="Main").locator("[aria-current=page]")
    expect(current).to_have_text("Search")
    # The configured default sources come pre-checked.
    expect(page.get_by_role("checkbox", name="PubMed", exact=True)).to_be_checked()
    expect(page.get_by_role("checkbox", name="arXiv", exact=True)).not_to_be_checked()
    expect(page.get_by_test_id("recent-runs")).to_contain_text("No searches yet.")

    _start(page, QUESTION, ["pubmed", "arxiv"], confirm=False)
    run_id = _run_id(page)
    expect(page.get_by_role("heading", name=QUESTION)).to_be_visible()
    # No strategy checkpoint asked for: straight to the results.
    review = page.get_by_test_id("review")
    expect(review).to_be_visible(timeout=RUN_WAIT_MS)
    expect(_status(page)).to_have_text("Waiting for you (round 1): review the results.")
    total = _papers(page).count()
    assert total > 3
    first_title = _paper(page, 0).locator("h4").inner_text()
    expect(_paper(page, 0).locator('[data-field="reason"]')).not_to_be_empty()
    expect(page.get_by_test_id("stats")).to_contain_text(f"{total} papers")
    failed = page.get_by_test_id("failed-sources")
    expect(failed).to_contain_text("1 source failed")
    expect(failed.locator('[data-source="arxiv"]')).to_contain_text("arXiv: ")
    assert all(text == "PubMed" for text in review.locator(".badge.source").all_inner_texts())

    # Reload: the page resumes the same run from ?run=, at the same checkpoint, with the
    # marks given so far.
    _paper(page, 0).get_by_role("button", name="Relevant", exact=True).click()
    _paper(page, 1).get_by_role("button", name="Not relevant", exact=True).click()
    page.reload()
    assert _run_id(page) == run_id
    expect(review).to_be_visible()
    expect(_papers(page)).to_have_count(total)
    relevant = _paper(page, 0).get_by_role("button", name="Relevant", exact=True)
    expect(relevant).to_have_attribute("aria-pressed", "true")
    unmark = _paper(page, 1).get_by_role("button", name="Not relevant", exact=True)
    expect(unmark).to_have_attribute("aria-pressed", "true")
    unmark.click()  # a second press takes the mark back
    expect(unmark).to_have_attribute("aria-pressed", "false")
    expect(page.get_by_test_id("mark-count")).to_have_text(
        "You marked 1 relevant and 0 not relevant."
    )
    # Nothing to screen before the run is finished.
    expect(page.get_by_role("link", name="Screen these papers")).to_have_count(0)
    page.get_by_role("button", name="Accept these results").click()

    final = page.get_by_test_id("final")
    expect(final).to_be_visible(timeout=RUN_WAIT_MS)
    expect(_status(page)).to_have_text("Completed.")
    screen = final.get_by_test_id("screen-these").get_by_role("link", name="Screen these papers")
    expect(screen).to_have_attribute("href", f"/screening?run={run_id}")
    expect(final.get_by_test_id("screen-these")).to_contain_text(f"the {total} papers")
    expect(page.get_by_role("button", name="Cancel this search")).to_be_hidden()
    labelled = _papers(page).filter(has=page.locator('[data-field="label"]'))
    expect(labelled).to_have_count(1)
    expect(labelled.locator("h4")).to_have_text(first_title)
    expect(labelled.locator('[data-field="label"]')).to_have_text("Relevant")
    exports = page.get_by_test_id("export-relevant")
    expect(exports.get_by_role("link", name="CSV, only relevant papers")).to_have_attribute(
        "href", f"/api/v1/search/runs/{run_id}/export?format=csv&only=relevant"
    )
    expect(page.get_by_test_id("history").get_by_role("listitem").first).to_contain_text(
        "Results accepted"
    )

    # A finished run is not polled any more.
    polled: list[str] = []
    page.on("request", lambda request: polled.append(request.url))
    page.wait_for_timeout(1500)
    assert polled == []

    # A second run: reject its strategy with a note, then cancel it at the next one.
    page.get_by_role("link", name="← New search").click()
    second_question = "deep learning for text classification"
    _start(page, second_question, ["arxiv"])
    second_id = _run_id(page)
    expect(page.get_by_test_id("strategy")).to_be_visible(timeout=RUN_WAIT_MS)
    page.get_by_label("Or reject it, saying what is wrong (optional)").fill("only reviews")
    page.get_by_role("button", name="Reject and rebuild").click()
    expect(_status(page)).to_have_text(
        "Waiting for you (round 2): confirm the search strategy.", timeout=RUN_WAIT_MS
    )
    page.get_by_role("button", name="Cancel this search").click()
    expect(_status(page)).to_have_text("This search was cancelled.")
    expect(page.get_by_test_id("strategy")).to_have_count(0)
    expect(page.get_by_role("button", name="Cancel this search")).to_be_hidden()

    # Both runs are in the list of recent searches, newest first, and reopen from it.
    page.get_by_role("link", name="← New search").click()
    recent = page.get_by_test_id("recent-runs").get_by_role("listitem")
    expect(recent).to_have_count(2)
    expect(recent.nth(0)).to_contain_text(second_question)
    expect(recent.nth(0)).to_contain_text("cancelled")
    expect(recent.nth(1)).to_contain_text("completed")
    recent.get_by_role("link", name=QUESTION).click()
    expect(page.get_by_test_id("final")).to_be_visible()
    assert _run_id(page) == run_id != second_id

    # "Screen these", by keyboard: the Screening page's form, with this run chosen.
    page.get_by_role("link", name="Screen these papers").focus()
    page.keyboard.press("Enter")
    expect(page).to_have_url(re.compile(rf"/screening\?run={run_id}$"))
    expect(page.get_by_role("radio", name="From a search run")).to_be_checked()
    expect(page.get_by_role("combobox", name="Search run")).to_have_value(run_id)
    problems.assert_none()


# --- a full run with the scripted model ------------------------------------------------


def _query_box(page: Page, source: str) -> Locator:
    return page.get_by_role("textbox", name=f"{SOURCE_LABELS[source]} query", exact=True)


def test_a_full_run_with_a_scripted_model(
    scripted_server: LiveServer,
    world: LiteratureWorld,
    scripted: ScriptedModel,
    new_page: NewPage,
    problems: PageProblems,
) -> None:
    page = new_page(scripted_server)
    page.goto("/search")
    expect(page.get_by_test_id("offline-banner")).to_have_count(0)
    # The question asks for English: a language the question does not ask for is dropped
    # from the model's reading and strategy.
    _start(page, f"{QUESTION}, in English", ["pubmed", "arxiv"])
    run_id = _run_id(page)

    # Checkpoint 1: the scripted intent and strategy, nothing searched yet.
    strategy = page.get_by_test_id("strategy")
    expect(strategy).to_be_visible(timeout=RUN_WAIT_MS)
    expect(_status(page)).to_have_text("Waiting for you (round 1): confirm the search strategy.")
    intent = page.get_by_test_id("intent")
    expect(intent.locator('[data-field="topic"]')).to_have_text(TOPIC)
    expect(intent.locator('[data-field="concepts"]')).to_contain_text(
        "natural language processing — also: NLP, text mining"
    )
    expect(page.get_by_test_id("rationale")).to_contain_text(RATIONALE[0])
    expect(_query_box(page, "pubmed")).to_have_value(QUERIES[0]["pubmed"])
    expect(_query_box(page, "arxiv")).to_have_value(QUERIES[0]["arxiv"])
    expect(strategy.locator('.query-field[data-source="pubmed"]')).to_contain_text(
        "Filters: language = english"
    )
    assert world.requests == [], "nothing is searched before the strategy is confirmed"
    edit = page.get_by_role("button", name="Search with my edits")
    approve = page.get_by_role("button", name="Approve", exact=True)
    expect(edit).to_be_disabled()

    # An emptied query: the server refuses the strategy; the page says why, keeps the edit.
    _query_box(page, "arxiv").fill("")
    expect(edit).to_be_enabled()
    expect(approve).to_be_disabled()
    edit.click()
    problem = strategy.locator('[data-role="decision-problem"]')
    expect(problem).to_contain_text("The edited strategy is not valid")
    expect(problem).to_contain_text(re.compile(r"queries, item \d \u203a query must not be empty"))
    expect(problem.locator(".problem-hint")).to_contain_text(
        "Send revised_data as a search strategy"
    )
    problems.expect_failed_loads(422)
    expect(_query_box(page, "arxiv")).to_have_value("")
    expect(_query_box(page, "arxiv")).to_have_attribute("aria-invalid", "true")
    expect(_query_box(page, "arxiv")).to_be_focused()
    expect(_status(page)).to_have_text("Waiting for you (round 1): confirm the search strategy.")

    # The real edit: the arXiv query back as it was, PubMed's narrowed to reviews.
    edited = f'{QUERIES[0]["pubmed"]} AND "survey"[tiab]'
    _query_box(page, "arxiv").fill(QUERIES[0]["arxiv"])
    _query_box(page, "pubmed").fill(edited)
    edit.click()

    # Checkpoint 2: results, ranked with the scripted reasons, grouped by the scripted themes.
    review = page.get_by_test_id("review")
    expect(review).to_be_visible(timeout=RUN_WAIT_MS)
    esearch = [r for r in world.searched("pubmed") if "esearch" in r.url.path]
    assert esearch and all(edited in r.url.params["term"] for r in esearch)
    total = _papers(page).count()
    assert total >= 5
    reasons = review.locator('[data-field="reason"]').all_inner_texts()
    assert len(reasons) == total and all(r.startswith("Scripted: about ") for r in reasons)
    first_title = _paper(page, 0).locator("h4").inner_text()
    assert scripted_reason(first_title).removesuffix(".")[:30] in reasons[0]
    expect(page.get_by_test_id("stats")).to_contain_text(f"{total} papers")
    expect(_paper(page, 0).locator(".badge.source").first).to_be_visible()

    facet = review.get_by_role("combobox", name="Show")
    facet.select_option(value="theme:theme-1")
    expect(facet.locator("option:checked")).to_contain_text(THEMES[0])
    expect(review.get_by_text(re.compile(r"^Showing \d+ of \d+$"))).to_be_visible()
    facet.select_option(index=0)
    expect(_papers(page).filter(visible=True)).to_have_count(total)

    titles = [_paper(page, i).locator("h4").inner_text() for i in range(3)]
    for index, mark in ((0, "Relevant"), (1, "Relevant"), (2, "Not relevant")):
        button = _paper(page, index).get_by_role("button", name=mark, exact=True)
        button.click()
        expect(button).to_have_attribute("aria-pressed", "true")
    expect(page.get_by_test_id("mark-count")).to_have_text(
        "You marked 2 relevant and 1 not relevant."
    )
    page.get_by_label("Feedback", exact=True).fill("More on transformers, please.")
    page.get_by_role("button", name="Narrow", exact=True).click()
    page.get_by_role("button", name="Search again with my feedback").click()

    # Round 2: the builder asked for transformer terms, but that would leave out the papers
    # marked relevant (their titles do not say it): the change is not made, and the
    # rationale says why. Approve the strategy, then accept.
    expect(_status(page)).to_have_text(
        "Waiting for you (round 2): confirm the search strategy.", timeout=RUN_WAIT_MS
    )
    rationale = page.get_by_test_id("rationale")
    expect(rationale).to_contain_text("Not made: required the concept (transformer)")
    expect(rationale).to_contain_text("which you marked relevant")
    expect(_query_box(page, "pubmed")).not_to_have_value(re.compile("transformer"))
    page.get_by_role("button", name="Approve", exact=True).click()
    expect(_status(page)).to_have_text(
        "Waiting for you (round 2): review the results.", timeout=RUN_WAIT_MS
    )
    page.get_by_role("button", name="Accept these results").click()

    # Completed: the two papers labelled relevant, exports, the history.
    final = page.get_by_test_id("final")
    expect(final).to_be_visible(timeout=RUN_WAIT_MS)
    relevant = _papers(page).filter(has=page.locator(".badge.label-relevant"))
    expect(relevant).to_have_count(2)
    assert sorted(relevant.locator("h4").all_inner_texts()) == sorted(titles[:2])
    shown = _papers(page).count()
    history = page.get_by_test_id("history").locator(":scope > ol > li")
    expect(history).to_have_count(2)
    expect(history.nth(0)).to_contain_text("Searched again with your feedback")
    expect(history.nth(0)).to_contain_text("2 marked relevant; 1 marked not relevant; narrow")
    expect(history.nth(0)).to_contain_text(edited)
    expect(history.nth(1)).to_contain_text("Results accepted")

    with page.expect_download() as download_info:
        page.get_by_role("link", name="RIS, all papers").click()
    download = download_info.value
    assert download.suggested_filename == f"search-{run_id}.ris"
    assert _ris_records(Path(download.path())) == shown
    with page.expect_download() as download_info:
        page.get_by_role("link", name="RIS, only relevant papers").click()
    assert _ris_records(Path(download_info.value.path())) == 2

    assert scripted.asked[0] == "intent" and {"query", "score", "organize"} <= set(scripted.asked)
    page.screenshot(path=str(SCREENSHOTS / "search-page.png"), full_page=True)
    problems.assert_none()


# --- the results as a compact list worked by keyboard; sources apart from origins --------

CANINE_RIS = SHARED_DATA / "exports" / "asysd_testthat" / "wos_test.ris"  # 50 cocker spaniel papers
CANINE_CSV = SHARED_DATA / "exports" / "asysd_testthat" / "zotero_export.csv"  # the same, by Zotero
MOBILE: ViewportSize = {"width": 390, "height": 844}


@pytest.fixture
def library_server(tmp_path: Path) -> Iterator[LiveServer]:
    """Offline mode, a library imported from a RIS and a CSV file; PubMed refuses (401)."""
    settings = clean_settings(tmp_path / "data")
    world = LiteratureWorld(failing=["pubmed"])
    with serve(settings, source_transport=world.transport(), engine=True) as live:
        with httpx.Client(base_url=live.base_url, timeout=120) as client:
            for path in (CANINE_RIS, CANINE_CSV):
                import_into_library(live, client, path)
        yield live


def _overflow(page: Page) -> int:
    """How far the page is wider than the window (0: no horizontal scrolling)."""
    return int(page.evaluate("document.documentElement.scrollWidth - window.innerWidth"))


def _boxes_overlap(a: Locator, b: Locator) -> bool:
    one, two = a.bounding_box(), b.bounding_box()
    assert one and two
    return not (
        one["x"] + one["width"] <= two["x"]
        or two["x"] + two["width"] <= one["x"]
        or one["y"] + one["height"] <= two["y"]
        or two["y"] + two["height"] <= one["y"]
    )


def test_the_start_form_fits_a_phone(
    library_server: LiveServer, new_page: NewPage, problems: PageProblems
) -> None:
    page = new_page(library_server)
    page.set_viewport_size(MOBILE)
    page.goto("/search")
    scholar = page.locator("label.source-option").filter(has_text="Google Scholar")
    note = scholar.locator(".source-note")
    expect(note).to_have_text(
        "Not set up: it needs an API key, which the server's administrator adds."
    )
    # The note that Google Scholar cannot run stays in its column, under its name.
    for other in ("OpenAlex", "Crossref", "PubMed"):
        box = page.locator("label.source-option").filter(has_text=other)
        assert not _boxes_overlap(note, box), other
    assert _overflow(page) == 0
    assert axe_violations(page, require_axe(), '[data-testid="start"]') == []
    problems.assert_none()


def test_results_are_a_compact_list_marked_by_keyboard_with_sources_apart_from_origins(
    library_server: LiveServer, new_page: NewPage, problems: PageProblems
) -> None:
    page = new_page(library_server)
    page.goto("/search")
    page.get_by_label("Your question").fill("eye diseases in cocker spaniel dogs")
    for box in page.get_by_role("group", name="Sources").get_by_role("checkbox").all():
        if box.is_enabled():
            box.set_checked(False)
    page.get_by_role("checkbox", name="Local library", exact=True).check()
    page.get_by_role("checkbox", name="PubMed", exact=True).check()
    page.get_by_label("Confirm the strategy first").set_checked(False)
    page.get_by_role("button", name="Start", exact=True).click()
    review = page.get_by_test_id("review")
    expect(review).to_be_visible(timeout=RUN_WAIT_MS)
    total = _papers(page).count()
    assert total > 20

    # Sources (what this search returned, a failed source as failed) apart from origins
    # (the files the library's papers were imported from): no file format as a source.
    expect(page.get_by_test_id("source-counts")).to_have_text(
        f"Sources: Local library {total} · PubMed failed"
    )
    origins = page.get_by_test_id("origin-counts")
    expect(origins).to_contain_text("In your library from: ")
    expect(origins).to_contain_text("CSV file")
    expect(origins).to_contain_text("RIS file")
    assert set(review.locator(".badge.source").all_inner_texts()) == {"Local library"}
    facet = review.get_by_role("combobox", name="Show")
    assert not facet.locator("option").filter(has_text=re.compile(r"^(csv|ris) \(")).count()

    # A compact row per paper: title, short authors, venue, year, source, relevance, and
    # the first line of its abstract; the whole abstract only on demand.
    first = _paper(page, 0)
    expect(first.locator(".paper-meta")).to_contain_text(re.compile(r"et al\.|&"))
    expect(first.locator(".paper-meta")).to_contain_text(re.compile(r"Relevance \d\.\d\d"))
    preview = first.locator(".abstract-preview")
    expect(preview).to_be_visible()
    line = preview.evaluate("e => parseFloat(getComputedStyle(e).lineHeight)")
    assert preview.bounding_box()["height"] <= line + 2  # type: ignore[index]
    expect(first.locator('[data-field="abstract"]')).to_be_hidden()
    heights = [
        box["height"] for box in (_paper(page, i).bounding_box() for i in range(total)) if box
    ]
    assert max(heights) < 130, max(heights)  # three lines, a long title four

    # The keys are shown, and work: j / k move, r and i mark, Enter and Space open and
    # close the abstract; the paper in focus shows it.
    help_line = page.get_by_test_id("key-help")
    expect(help_line).to_contain_text("next / previous paper")
    # They work from anywhere on the page (here the heading, where the page put the
    # focus), not only once inside the list: j there goes to the first paper.
    review.get_by_role("heading", name="Review the results").focus()
    page.keyboard.press("j")
    expect(first).to_be_focused()
    outline = first.evaluate(
        "e => getComputedStyle(e).outlineStyle + ' ' + getComputedStyle(e).outlineWidth"
    )
    assert outline.startswith("solid") and not outline.endswith(" 0px"), outline
    page.keyboard.press("j")
    expect(_paper(page, 1)).to_be_focused()
    page.keyboard.press("k")
    expect(first).to_be_focused()
    page.keyboard.press("r")
    expect(first.get_by_role("button", name="Relevant", exact=True)).to_have_attribute(
        "aria-pressed", "true"
    )
    page.keyboard.press("j")
    page.keyboard.press("i")
    second = _paper(page, 1)
    expect(second.get_by_role("button", name="Not relevant", exact=True)).to_have_attribute(
        "aria-pressed", "true"
    )
    expect(page.get_by_test_id("mark-count")).to_have_text(
        "You marked 1 relevant and 1 not relevant."
    )
    # Each mark is kept as it is made: the run opened in another tab shows both.
    other = page.context.new_page()
    other.goto(page.url)
    expect(_paper(other, 0).get_by_role("button", name="Relevant", exact=True)).to_have_attribute(
        "aria-pressed", "true", timeout=RUN_WAIT_MS
    )
    expect(other.get_by_test_id("mark-count")).to_have_text(
        "You marked 1 relevant and 1 not relevant."
    )
    other.close()
    second.focus()
    page.keyboard.press("Enter")
    expect(second.locator('[data-field="abstract"]')).to_be_visible()
    expect(second.get_by_role("button", name="Abstract")).to_have_attribute("aria-expanded", "true")
    expect(second.locator('[data-field="reason"]')).to_be_visible()
    page.keyboard.press(" ")
    expect(second.locator('[data-field="abstract"]')).to_be_hidden()
    # Typing in the feedback box is typing, not marking.
    page.get_by_label("Feedback", exact=True).fill("")
    page.get_by_label("Feedback", exact=True).press_sequentially("rij")
    expect(page.get_by_test_id("mark-count")).to_have_text(
        "You marked 1 relevant and 1 not relevant."
    )
    # A filter hides papers: the keys move only through the papers shown.
    marked = review.get_by_role("combobox", name="Marked")
    marked.select_option(label="Not relevant")
    expect(_papers(page).filter(visible=True)).to_have_count(1)
    shown = _papers(page).filter(visible=True)
    shown.focus()
    page.keyboard.press("j")
    expect(shown).to_be_focused()
    marked.select_option(label="All")
    # A mark the browser cannot keep says so, instead of being lost on a reload.
    page.evaluate("() => { Storage.prototype.setItem = () => { throw new Error('full'); }; }")
    _paper(page, 2).get_by_role("button", name="Relevant", exact=True).click()
    expect(page.get_by_test_id("mark-problem")).to_contain_text("could not be saved")
    page.screenshot(path=str(SCREENSHOTS / "search-after-review.png"), full_page=True)

    # No serious or critical axe-core violation; every control reached by Tab, visibly.
    assert axe_violations(page, require_axe(), '[data-testid="review"]') == []
    assert keyboard_walk(page, '[data-testid="review"]') == []

    # On a phone: nothing wider than the screen.
    page.set_viewport_size(MOBILE)
    expect(first).to_be_visible()
    assert _overflow(page) == 0
    page.screenshot(path=str(SCREENSHOTS / "search-after-review-mobile.png"), full_page=True)
    problems.assert_none()
