"""Follow-up continuity in the chat tray (seed 004), in a real browser: what each answer
searched, the follow-up note, and the conversation's objectives, edited in the tray.

No model is configured (offline mode): the server's own retrieval answers, against the real
source responses of tests/search/world.py."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
from playwright.sync_api import Locator, Page, expect

from tests.search.world import LiteratureWorld
from tests.web.live import LiveServer, NewPage, PageProblems, clean_settings, serve

pytestmark = pytest.mark.browser

SCREENSHOTS = Path("/tmp")
ANSWER_WAIT_MS = 15_000  # an offline answer takes about a second; this only stops a hang

SOURCES = ["pubmed", "openalex", "library"]
FIRST = "What are the income criteria for Florida Medicaid?"
FOLLOW_UP = "can you search the web for it"
TOPIC = "income criteria Florida Medicaid"
ADDED = "Compare with Georgia"
EDITED = "Compare with Georgia and Alabama"
GONE = "Check Texas too"

Server = Callable[[LiteratureWorld], AbstractContextManager[LiveServer]]


@pytest.fixture
def offline_server(tmp_path: Path) -> Server:
    """Serves the app offline, its sources answered by the given world."""

    @contextmanager
    def start(world: LiteratureWorld) -> Iterator[LiveServer]:
        settings = clean_settings(tmp_path / "data", search={"default_sources": SOURCES})
        with serve(settings, source_transport=world.transport()) as live:
            yield live

    return start


# --- page helpers ---------------------------------------------------------------------------


def _tray(page: Page) -> Locator:
    return page.get_by_role("complementary", name="Assistant")


def _open_tray(page: Page) -> Locator:
    page.get_by_role("button", name="Assistant", exact=True).click()
    tray = _tray(page)
    expect(tray.get_by_label("Message to the assistant")).to_be_focused()
    return tray


def _ask(tray: Locator, text: str) -> Locator:
    """Sends ``text`` and waits for its answer to complete."""
    answers = _answers(tray)
    count = answers.count()
    box = tray.get_by_label("Message to the assistant")
    box.fill(text)
    box.press("Enter")
    expect(answers).to_have_count(count + 1)
    answer = answers.nth(count)
    expect(answer).to_have_attribute("data-status", "complete", timeout=ANSWER_WAIT_MS)
    return answer


def _answers(tray: Locator) -> Locator:
    return tray.get_by_role("log", name="Conversation with the assistant").locator(
        '[data-role="assistant"]'
    )


def _objectives(tray: Locator) -> Locator:
    return tray.get_by_role("region", name="Objectives")


def _open_objectives(tray: Locator) -> None:
    """The panel is one line until opened (the tray keeps its height for the log)."""
    toggle = _objectives(tray).get_by_role("button", name=re.compile("^Objectives"))
    if toggle.get_attribute("aria-expanded") == "false":
        toggle.click()
    expect(toggle).to_have_attribute("aria-expanded", "true")


def _objective_items(tray: Locator) -> Locator:
    return _objectives(tray).locator("li[data-objective-id]")


def _objective(tray: Locator, text: str) -> Locator:
    return _objective_items(tray).filter(has=tray.page.get_by_text(text, exact=True))


def _pinned(item: Locator) -> Locator:
    """``item`` found by its objective's id: it stays found while its text is being edited."""
    expect(item).to_have_count(1)
    objective_id = item.get_attribute("data-objective-id")
    return item.page.locator(f'[data-objective-id="{objective_id}"]')


def _searched_lines(answer: Locator) -> Locator:
    return answer.get_by_role("list", name="Searched").get_by_role("listitem")


def _thread(live: LiveServer, conversation_id: str) -> dict[str, Any]:
    response = httpx.get(live.url(f"/api/v1/chat/conversations/{conversation_id}/thread"))
    assert response.status_code == 200, response.text
    thread: dict[str, Any] = response.json()
    return thread


def _conversation_id(page: Page) -> str:
    value = page.evaluate("sessionStorage.getItem('scholarstream.chat.conversation')")
    assert isinstance(value, str) and value, value
    return value


def _expect_searched(answer: Locator) -> None:
    lines = _searched_lines(answer)
    # search_library and search_literature both searched the library: one line says so.
    expect(lines).to_have_count(3)
    expect(lines.nth(0)).to_have_text(f"Searched your library for “{TOPIC}” — 0 results")
    expect(lines.nth(1)).to_have_text(
        re.compile(rf"^Searched PubMed for “{TOPIC}” — [\d,]+ results$")
    )
    expect(lines.nth(2)).to_have_text(
        re.compile(rf"^Searched OpenAlex for “{TOPIC}” — [\d,]+ results$")
    )


# --- a follow-up, then the objectives edited in the tray -------------------------------------


def test_follow_ups_show_what_was_searched_and_objectives_are_edited(
    offline_server: Server, new_page: NewPage, problems: PageProblems
) -> None:
    with offline_server(LiteratureWorld()) as live:
        page = new_page(live)
        page.goto("/")
        tray = _open_tray(page)
        expect(_objectives(tray)).to_be_hidden()  # no conversation yet

        first = _ask(tray, FIRST)
        _expect_searched(first)
        expect(first.get_by_test_id("chat-followup")).to_have_count(0)

        # The follow-up was read with the topic: it says so, and what it searched.
        second = _ask(tray, FOLLOW_UP)
        note = second.get_by_test_id("chat-followup")
        expect(note).to_have_text(f"Follow-up: read with the conversation's topic as “{TOPIC}”")
        _expect_searched(second)
        conversation = _conversation_id(page)

        # The objective the first question opened, in progress, with its evidence on demand.
        objectives = _objectives(tray)
        expect(objectives).to_be_visible()
        _open_objectives(tray)
        expect(_objective_items(tray)).to_have_count(1)
        objective = _objective(tray, FIRST)
        status = objective.get_by_role("combobox", name="Status")
        expect(status).to_have_value("in_progress")
        expect(status.locator("option:checked")).to_have_text("in progress")
        expect(status).to_have_accessible_description(FIRST)
        evidence = objective.get_by_role("group").filter(has_text="Evidence")
        objective.get_by_text(re.compile(r"^Evidence \(\d+\)$")).click()
        expect(evidence.get_by_role("listitem").first).to_contain_text(f"for '{TOPIC}'")
        # "Search the web" has no web search to run: the assistant asks for a link.
        expect(objective.get_by_test_id("chat-objective-ask")).to_contain_text(
            "I need its address: do you have the link?"
        )

        # The status, changed in the select, is saved.
        status.select_option("achieved")
        expect(evidence.get_by_role("listitem").last).to_have_text("Marked achieved by the user")
        expect(status).to_be_enabled()
        assert [(o["text"], o["status"]) for o in _thread(live, conversation)["objectives"]] == [
            (FIRST, "achieved")
        ]

        # An objective of the user's own: added, edited inline (Escape cancels, Enter saves),
        # deleted.
        add = objectives.get_by_label("Add objective")
        add.fill(ADDED)
        add.press("Enter")
        added = _pinned(_objective(tray, ADDED))
        expect(added).to_be_visible()
        expect(add).to_have_value("")
        expect(added.get_by_role("combobox", name="Status")).to_have_value("open")
        edit = added.get_by_role("button", name="Edit")
        edit.click()
        editor = added.get_by_label("Objective text")
        expect(editor).to_be_focused()
        editor.fill("never saved")
        editor.press("Escape")
        expect(editor).to_have_count(0)
        expect(edit).to_be_focused()
        expect(tray).to_be_visible()  # Escape left the edit, not the tray
        edit.press("Enter")
        editor.fill(EDITED)
        editor.press("Enter")
        edited = _objective(tray, EDITED)
        expect(edited).to_be_visible()
        expect(edited.get_by_role("button", name="Edit")).to_be_focused()
        edited.get_by_role("button", name="Delete").click()
        expect(_objective_items(tray)).to_have_count(1)
        assert [o["text"] for o in _thread(live, conversation)["objectives"]] == [FIRST]

        # An edit the server refuses (the objective was deleted elsewhere): its message and
        # hint show inline, and what the user typed stays.
        add.fill(GONE)
        add.press("Enter")
        gone = _pinned(_objective(tray, GONE))
        expect(gone).to_be_visible()
        gone_id = next(
            o["id"] for o in _thread(live, conversation)["objectives"] if o["text"] == GONE
        )
        removed = httpx.delete(
            live.url(f"/api/v1/chat/conversations/{conversation}/objectives/{gone_id}")
        )
        assert removed.status_code == 204, removed.text
        gone.get_by_role("button", name="Edit").click()
        editor = gone.get_by_label("Objective text")
        editor.fill("Check Texas and Georgia")
        editor.press("Enter")
        problem = gone.get_by_role("alert")
        expect(problem).to_contain_text(f"Objective {gone_id} was not found")
        expect(problem).to_contain_text("Read the conversation's thread")
        expect(editor).to_have_value("Check Texas and Georgia")
        problems.expect_failed_loads(404)
        page.screenshot(path=str(SCREENSHOTS / "chat-objectives.png"))

        # A reload shows the conversation from the server: what was searched, the objectives.
        page.reload()
        tray = _tray(page)
        expect(_answers(tray)).to_have_count(2)
        expect(_objective_items(tray)).to_have_count(1)
        expect(_objective(tray, FIRST).get_by_role("combobox", name="Status")).to_have_value(
            "achieved"
        )

        # A new conversation has none; the first one, opened from the list, has them again.
        tray.get_by_role("button", name="New", exact=True).click()
        expect(_objectives(tray)).to_be_hidden()
        tray.get_by_role("button", name="Conversations").click()
        tray.get_by_role("region", name="Your conversations").get_by_role(
            "button", name=FIRST, exact=True
        ).click()
        expect(_answers(tray)).to_have_count(2)
        _expect_searched(_answers(tray).first)
        _expect_searched(_answers(tray).nth(1))
        expect(_answers(tray).nth(1).get_by_test_id("chat-followup")).to_contain_text(TOPIC)
        expect(_answers(tray).first.get_by_test_id("chat-followup")).to_have_count(0)
        objective = _objective(tray, FIRST)
        expect(objective.get_by_role("combobox", name="Status")).to_have_value("achieved")
        expect(_objective_items(tray)).to_have_count(1)

        # The panel collapses, and stays collapsed.
        toggle = _objectives(tray).get_by_role("button", name=re.compile("^Objectives"))
        expect(toggle).to_have_attribute("aria-expanded", "true")
        toggle.click()
        expect(toggle).to_have_attribute("aria-expanded", "false")
        expect(objective).to_be_hidden()
        page.reload()
        toggle = _objectives(_tray(page)).get_by_role("button", name=re.compile("^Objectives"))
        expect(toggle).to_have_attribute("aria-expanded", "false")
        toggle.press("Enter")
        expect(_objective(_tray(page), FIRST)).to_be_visible()
        problems.assert_none()


# --- stuck: the assistant asks for leverage ---------------------------------------------------


def test_a_blocked_objective_shows_the_assistants_ask_and_the_failed_source(
    offline_server: Server, new_page: NewPage, problems: PageProblems
) -> None:
    question = "Sunshine Health dental coverage for adults"
    sent = "Sunshine Health dental coverage adults"
    with offline_server(LiteratureWorld(empty=("pubmed",), failing=("openalex",))) as live:
        page = new_page(live)
        page.goto("/")
        tray = _open_tray(page)
        answer = _ask(tray, question)
        lines = _searched_lines(answer)
        expect(lines.filter(has_text="PubMed")).to_have_text(
            f"Searched PubMed for “{sent}” — 0 results"
        )
        failed = lines.filter(has_text="OpenAlex")
        expect(failed).to_have_text(f"Searched OpenAlex for “{sent}” — failed")
        expect(failed).to_have_attribute("data-state", "failed")

        _open_objectives(tray)
        objective = _objective(tray, question)
        expect(objective.get_by_role("combobox", name="Status")).to_have_value("blocked")
        ask = objective.get_by_test_id("chat-objective-ask")
        expect(ask).to_be_visible()
        expect(ask).to_contain_text("The assistant asks: I'm stuck on")
        expect(ask).to_contain_text("Do you have a link, a document, a name")
        problems.assert_none()


def test_a_date_follow_up_is_a_filter_the_answer_shows(
    offline_server: Server, new_page: NewPage, problems: PageProblems
) -> None:
    with offline_server(LiteratureWorld()) as live:
        page = new_page(live)
        page.goto("/")
        tray = _open_tray(page)
        _ask(tray, FIRST)
        dated = _ask(tray, "only since 2020")
        expect(dated.get_by_test_id("chat-followup")).to_have_text(
            f"Follow-up: read with the conversation's topic as “{TOPIC}”, published since 2020"
        )
        # The year is the sources' filter, not a word of the query.
        lines = _searched_lines(dated)
        expect(lines.first).to_contain_text(f"“{TOPIC}” (published 2020\u2013)")
        expect(lines.filter(has_text="2020”")).to_have_count(0)
