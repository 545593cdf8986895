"""The research stream pages in a real browser: Debian's Chromium against a real uvicorn
server. A whole creation with the rule-based guide (no model configured) through every
kind of answer the page offers (a suggestion chip, option checkboxes with the guide's
proposed button, typed text, the skip button, an inline edit in the preview that travels
with the next answer, a refused answer, the review), then the new stream's page and an edit
of a retrieval query; an open draft listed on the streams page, reopened from there with its
chips, and deleted after a confirmation; and
a creation guided by a scripted model, whose message streams token by token; and the pages
at a phone's width, without horizontal scrolling."""

from __future__ import annotations

import asyncio
import re
import threading
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from playwright.sync_api import Locator, Page, Request, expect
from pydantic_ai.messages import ModelMessage
from pydantic_ai.models.function import AgentInfo, DeltaToolCalls

from tests.streams.script import GuideScript, Malformed, Step, answer
from tests.streams.test_api import quick_stream
from tests.web.live import LiveServer, NewPage, PageProblems, clean_settings, serve

pytestmark = pytest.mark.browser

SCREENSHOTS = Path("/tmp")
TURN_WAIT_MS = 15_000  # a turn takes well under a second; this only stops a hang
PURPOSE = (
    "I want to monitor Palatin Technologies melanocortin programs in obesity and sexual dysfunction"
)
TOPIC = "Palatin Technologies melanocortin programs in obesity and sexual dysfunction"
"""An opening that names a subject but no aim: the guide asks for the purpose."""
EDITED_OUTCOMES = "Go/no-go decisions on partnering"
UUID = r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"
PUBMED_QUERY = '("bremelanotide"[tiab] OR "setmelanotide"[tiab]) AND obesity[mh]'


# --- page helpers ---------------------------------------------------------------------------


def _guide(page: Page) -> Locator:
    return page.get_by_test_id("guide")


def _log(page: Page) -> Locator:
    return page.get_by_role("log", name="Conversation with the stream guide")


def _answer_box(page: Page) -> Locator:
    return page.get_by_label("Your answer")


def _offer(page: Page) -> Locator:
    return page.get_by_test_id("guide-offer")


def _preview(page: Page) -> Locator:
    return page.get_by_test_id("preview")


def _wait_for_turn(page: Page, step: str) -> None:
    """The turn ended (the answer box is usable again) with the workflow at ``step``."""
    expect(page.get_by_test_id("composer")).to_have_attribute(
        "aria-busy", "false", timeout=TURN_WAIT_MS
    )
    expect(page.get_by_test_id("streaming-message")).to_have_count(0)
    expect(page.get_by_test_id("turn-problem")).to_be_empty()
    current = page.get_by_test_id("steps").locator('[aria-current="step"]')
    expect(current).to_have_attribute("data-step", step)


def _type_answer(page: Page, text: str, step: str) -> None:
    _answer_box(page).fill(text)
    _answer_box(page).press("Enter")
    _wait_for_turn(page, step)
    expect(_answer_box(page)).to_have_value("")
    expect(_log(page).locator(".guide-msg.user").last).to_contain_text(text)


def _turn_bodies(requests: list[Request]) -> list[dict[str, Any]]:
    bodies: list[dict[str, Any]] = []
    for request in requests:
        if request.method == "POST" and request.url.endswith("/turns"):
            body = request.post_data_json
            assert isinstance(body, dict)
            bodies.append(body)
    return bodies


def _api(live: LiveServer, path: str) -> dict[str, Any]:
    response = httpx.get(live.url(path), timeout=10)
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


# --- a whole creation with the rule-based guide ---------------------------------------------


def test_a_whole_creation_with_the_rule_guide_then_the_stream_page(
    fresh_server: LiveServer, new_page: NewPage, problems: PageProblems
) -> None:
    page = new_page(fresh_server)
    requests: list[Request] = []
    page.on("request", lambda request: requests.append(request))

    page.goto("/streams")
    expect(page).to_have_title("Streams · ScholarStream")
    nav = page.get_by_role("navigation", name="Main")
    expect(nav.get_by_role("link", name="Streams")).to_have_attribute("aria-current", "page")
    expect(page.get_by_test_id("no-streams")).to_be_visible()
    page.get_by_role("link", name="New stream").click()

    # The creation starts and its page can be reloaded: /streams/new/<creation id>.
    expect(page).to_have_url(re.compile(rf"/streams/new/{UUID}$"))
    creation_id = page.url.rsplit("/", 1)[1]
    expect(_log(page)).to_contain_text("Let's set up a research stream.")
    expect(page.get_by_test_id("guide-kind")).to_contain_text("rule-based")
    expect(page.get_by_test_id("steps").locator("li")).to_have_count(10)
    # Opening "New stream" again, nothing said yet: the same draft, not a second one.
    page.goto("/streams/new")
    expect(page).to_have_url(re.compile(rf"/streams/new/{creation_id}$"))
    assert len(_api(fresh_server, "/api/v1/streams/creation")["creations"]) == 1

    # Typed text: what it says is filled in (focus areas, organisations); the purpose it
    # does not state is asked, with different aims for its subject.
    _type_answer(page, TOPIC, "purpose")
    expect(_preview(page).get_by_label("Focus areas")).to_have_value(
        "melanocortin\nobesity\nsexual dysfunction"
    )
    expect(_preview(page).get_by_label("Organisations")).to_have_value("Palatin Technologies")
    expect(_log(page).locator(".guide-msg.assistant").last).to_contain_text(
        "From what you wrote, I filled in the focus areas"
    )
    chips = _offer(page).get_by_role("group", name="Suggestions for purpose")
    aims = chips.get_by_role("button").all_inner_texts()
    assert len(aims) >= 3 and TOPIC not in aims, aims

    # A reload keeps the chips: the draft keeps the guide's offer on the server.
    page.evaluate("sessionStorage.clear()")
    page.reload()
    expect(chips.get_by_role("button")).to_have_text(aims)

    # A suggestion chip: option_selected.
    chips.get_by_role("button", name=aims[0]).click()
    _wait_for_turn(page, "business_goals")
    expect(_preview(page).get_by_label("Purpose")).to_have_value(aims[0])

    # Checkboxes and the guide's proposed button: options_selected (none ticked is refused).
    options = _offer(page).get_by_role("group", name="Goals: tick the ones that apply")
    proceed = options.get_by_role("button", name="Continue with these goals")
    proceed.click()
    expect(options.get_by_role("alert")).to_contain_text("Tick at least one option")
    offered_goals = options.locator("label").all_inner_texts()
    assert "Find evidence for a review, a grant or a guideline" in offered_goals, offered_goals
    goals = [offered_goals[0], offered_goals[-1]]
    for goal in goals:
        options.get_by_role("checkbox", name=goal).check()
    proceed.click()
    _wait_for_turn(page, "expected_outcomes")
    expect(_preview(page).get_by_label("Goals")).to_have_value("\n".join(goals))
    expect(_log(page).locator(".guide-msg.user").last).to_have_text(
        f"Selected \u201c{goals[0]}\u201d, \u201c{goals[1]}\u201d for goals."
    )

    # Typed text with the Send button.
    _answer_box(page).fill("Decide whether to start our own program")
    _guide(page).get_by_role("button", name="Send").click()
    _wait_for_turn(page, "stream_name")

    # An inline edit in the preview stays local until the next answer carries it.
    sent_before = len(_turn_bodies(requests))
    outcomes = _preview(page).get_by_label("Expected outcomes")
    expect(outcomes).to_have_value("Decide whether to start our own program")
    outcomes.fill(EDITED_OUTCOMES)
    expect(page.get_by_test_id("edits-note")).to_have_text(
        "1 changed field: sent with your next answer."
    )
    expect(_preview(page).locator('[data-field="expected_outcomes"] .edited-tag')).to_be_visible()
    assert len(_turn_bodies(requests)) == sent_before  # nothing sent for an edit
    stored = _api(fresh_server, f"/api/v1/streams/creation/{creation_id}")
    assert stored["config"]["expected_outcomes"] == "Decide whether to start our own program"

    # A reload resumes the creation: the unsent edit, a half-typed answer and the chips stay.
    _answer_box(page).fill("half-typed")
    page.reload()
    expect(_log(page)).to_contain_text("What should the stream be called?")
    expect(_preview(page).get_by_label("Expected outcomes")).to_have_value(EDITED_OUTCOMES)
    expect(page.get_by_test_id("edits-note")).to_contain_text("1 changed field")
    expect(_answer_box(page)).to_have_value("half-typed")
    _answer_box(page).fill("")

    name_chip = _offer(page).get_by_role("group", name="Suggestions for stream name")
    name = name_chip.get_by_role("button").first.inner_text()
    name_chip.get_by_role("button", name=name, exact=True).click()
    _wait_for_turn(page, "stream_type")
    carried = _turn_bodies(requests)[-1]
    assert carried["action"] == {
        "type": "option_selected",
        "target_field": "stream_name",
        "selected_value": name,
    }
    assert carried["edits"] == {"expected_outcomes": EDITED_OUTCOMES}
    stored = _api(fresh_server, f"/api/v1/streams/creation/{creation_id}")
    assert stored["config"]["expected_outcomes"] == EDITED_OUTCOMES
    assert stored["config"]["stream_name"] == name
    expect(page.get_by_test_id("edits-note")).to_be_empty()
    expect(_preview(page).locator('[data-field="expected_outcomes"] .edited-tag')).to_be_hidden()

    # The stream type: its six choices as chips, in words (the value is what is sent).
    types = _offer(page).get_by_role("group", name="Suggestions for stream type")
    expect(types.get_by_role("button")).to_have_count(6)
    expect(types.get_by_role("button", name="Scientific research")).to_be_visible()
    types.get_by_role("button", name="Organisations and competitors", exact=True).click()
    _wait_for_turn(page, "keywords")  # the focus areas were filled in from the opening
    assert _turn_bodies(requests)[-1]["action"]["selected_value"] == "competitive"
    expect(_log(page).locator(".guide-msg.user").last).to_have_text(
        "Selected \u201cOrganisations and competitors\u201d for stream type."
    )
    expect(_log(page)).not_to_contain_text("stream_type")

    # A turn the guide refuses (an inline edit it cannot take) is answered with one error
    # event, shown above the answer box with the refused field marked; the typed answer and
    # the edit stay, and nothing is saved.
    keywords = "bremelanotide, setmelanotide, melanocortin"
    preview_name = _preview(page).get_by_label("Stream name")
    preview_name.fill("x" * 130)
    _answer_box(page).fill(keywords)
    with page.expect_response(lambda r: r.url.endswith("/turns")) as refused_turn:
        _answer_box(page).press("Enter")
    assert refused_turn.value.status == 200
    assert refused_turn.value.headers["content-type"].startswith("text/event-stream")
    refused = page.get_by_test_id("turn-problem").get_by_role("alert")
    expect(refused).to_contain_text("Not sent. Invalid stream name")
    expect(refused).to_have_attribute("data-code", "invalid_input")
    expect(preview_name).to_have_attribute("aria-invalid", "true")
    expect(_answer_box(page)).to_have_value(keywords)
    expect(preview_name).to_have_value("x" * 130)
    expect(_log(page).locator(".guide-msg.user").last).not_to_contain_text(keywords)
    assert _api(fresh_server, f"/api/v1/streams/creation/{creation_id}")["step"] == "keywords"
    assert problems.console_errors == []  # an answer, not a failed load
    _preview(page).get_by_role("button", name="Undo my changes").click()
    expect(preview_name).to_have_value(name)
    expect(preview_name).not_to_have_attribute("aria-invalid", "true")

    # The organisations filled in from the opening, cleared in the panel: the step is
    # asked again with the answer, and it is optional.
    _preview(page).get_by_label("Organisations").fill("")
    _type_answer(page, keywords, "competitors")

    # The optional step has a skip button: skip_step.
    expect(_offer(page).get_by_text("This step is optional.")).to_be_visible()
    _offer(page).get_by_role("button", name="Skip organisations").click()
    _wait_for_turn(page, "report_frequency")
    expect(page.get_by_test_id("steps").locator('[data-step="competitors"]')).to_have_class(
        "skipped"
    )
    expect(_offer(page).get_by_role("button", name=re.compile("^Skip"))).to_have_count(0)

    frequencies = _offer(page).get_by_role("group", name="Suggestions for report frequency")
    expect(frequencies.get_by_role("button")).to_have_text(
        ["Daily", "Weekly", "Every two weeks", "Monthly"]
    )
    frequencies.get_by_role("button", name="Weekly", exact=True).click()
    _wait_for_turn(page, "review")

    # The review: the summary, in the user's words, then create.
    summary = _log(page).locator(".guide-msg.assistant").last
    expect(summary).to_contain_text("Here is the stream:")
    expect(summary).to_contain_text("Stream type: Organisations and competitors")
    expect(summary).to_contain_text("Report frequency: Weekly")
    review = page.get_by_test_id("review")
    expect(review).to_be_visible()
    log_text = _log(page).inner_text()
    assert re.search(r"\b[a-z]+_[a-z_]+\b", log_text) is None, log_text  # no field names
    page.screenshot(path=str(SCREENSHOTS / "stream-creation.png"), full_page=True)
    assert [b.get("action", {}).get("type") for b in _turn_bodies(requests)] == [
        "text_input",
        "option_selected",
        "options_selected",
        "text_input",
        "option_selected",
        "option_selected",
        "text_input",  # refused (an error event)
        "text_input",
        "skip_step",
        "option_selected",
    ]
    review.get_by_role("button", name="Create the stream").click()

    # The new stream's page: what it is for first (Run now, when it runs, its reports),
    # then what it follows, then its sources, each collapsed.
    expect(page).to_have_url(re.compile(rf"/streams/{UUID}$"), timeout=TURN_WAIT_MS)
    stream_id = page.url.rsplit("/", 1)[1]
    # The guide's address of a created stream opens the stream's own page.
    page.goto(f"/streams/new/{creation_id}")
    expect(page).to_have_url(re.compile(rf"/streams/{stream_id}$"), timeout=TURN_WAIT_MS)
    expect(page.get_by_role("heading", level=1)).to_have_text(name)
    expect(page).to_have_title(f"{name} · ScholarStream")
    headings = page.get_by_role("heading", level=2).all_inner_texts()
    assert headings[:3] == ["Reports", "What it follows", "Sources and queries"], headings
    reports = page.get_by_test_id("reports")
    expect(reports.get_by_role("button", name="Run now")).to_be_in_viewport()
    expect(page.get_by_test_id("schedule")).to_have_text(
        "Runs on its own every week. Its first run starts within minutes, or now with Run now."
    )
    expect(page.get_by_test_id("run-schedule")).to_contain_text(
        "runs on its own every report period (its report frequency)"
    )
    expect(page.get_by_test_id("stream-meta")).to_contain_text("Organisations and competitors")
    summary_list = page.get_by_test_id("summary")
    expect(summary_list.locator('[data-field="keywords"]')).to_have_text(
        "bremelanotide, setmelanotide, melanocortin"
    )
    expect(reports).not_to_contain_text("not available")

    config = page.get_by_test_id("config")
    expect(config.get_by_label("Stream name")).to_be_hidden()  # collapsed until asked for
    config.get_by_text("Edit the stream's settings").click()
    expect(config.get_by_label("Stream name")).to_have_value(name)
    expect(config.get_by_label("Purpose")).to_have_value(aims[0])
    expect(config.get_by_label("Goals")).to_have_value("\n".join(goals))
    expect(config.get_by_label("Expected outcomes")).to_have_value(EDITED_OUTCOMES)
    expect(config.get_by_label("Stream type")).to_have_value("competitive")
    expect(config.get_by_label("Focus areas")).to_have_value(
        "melanocortin\nobesity\nsexual dysfunction"
    )
    expect(config.get_by_label("Keywords")).to_have_value(
        "bremelanotide\nsetmelanotide\nmelanocortin"
    )
    expect(config.get_by_label("Organisations")).to_have_value("")
    expect(config.get_by_label("Report frequency")).to_have_value("weekly")
    expect(config.get_by_label("Chat instructions")).to_have_value(
        re.compile(f"^This research stream is '{re.escape(name)}'")
    )

    # The sources, collapsed: each says whether it is on; Google Scholar (no SerpAPI key
    # here) is off from the start, says why and how to enable it, and cannot be turned on.
    retrieval = page.get_by_test_id("retrieval")
    scholar = retrieval.locator('details[data-source="google_scholar"]')
    expect(scholar.get_by_test_id("source-state")).to_have_text("Not available here")
    pubmed_state = retrieval.locator('details[data-source="pubmed"]').get_by_test_id("source-state")
    expect(pubmed_state).to_have_text("On")
    expect(retrieval.locator("details.query-editor[open]")).to_have_count(0)
    scholar.locator(":scope > summary").focus()
    page.keyboard.press("Enter")  # a summary opens with the keyboard
    expect(scholar).to_have_attribute("open", "")
    expect(scholar.get_by_test_id("unavailable")).to_contain_text("No SerpAPI key")
    expect(scholar.get_by_test_id("unavailable")).to_contain_text(
        "SCHOLARSTREAM_SOURCES__SERPAPI_API_KEY"
    )
    expect(scholar.get_by_label("Search this source")).to_be_disabled()
    expect(page.get_by_test_id("sources-note")).to_be_empty()

    # The chat tray sends the stream's id, so the stream's chat instructions apply.
    context = page.evaluate(
        "import('/static/app/chat/page-context.js').then((m) => m.collectContext())"
    )
    assert context["current_page"] == "stream"
    assert context["stream_id"] == stream_id
    assert context["stream"]["stream_name"] == name
    assert "google_scholar" not in context["stream"]["sources_searched"]
    page.get_by_role("button", name="Assistant", exact=True).click()
    tray = page.get_by_role("complementary", name="Assistant")
    expect(tray.get_by_test_id("chat-offline")).to_be_visible()  # the page's chat config loaded
    tray.get_by_role("button", name="Close the assistant").click()

    # A retrieval query, opened, edited and saved.
    retrieval.locator('details[data-source="pubmed"] > summary').click()
    pubmed = page.get_by_role("form", name="PubMed query")
    pubmed.get_by_label("Query").fill(PUBMED_QUERY)
    expect(pubmed).to_have_class(re.compile(r"\bis-edited\b"))
    pubmed.get_by_role("button", name="Save the PubMed query").click()
    expect(pubmed.get_by_role("status")).to_have_text("Saved.")
    stream = _api(fresh_server, f"/api/v1/streams/{stream_id}")
    assert stream["retrieval"]["queries"]["pubmed"]["query"] == PUBMED_QUERY
    assert stream["retrieval"]["queries"]["pubmed"]["limit"] == 50
    assert stream["retrieval"]["queries"]["arxiv"]["query"].startswith("(all:bremelanotide")
    assert stream["retrieval"]["queries"]["google_scholar"]["enabled"] is False

    # A refused edit is shown next to the form, and what the user typed stays.
    config.get_by_label("Stream name").fill("")
    config.get_by_label("Report frequency").select_option("monthly")
    config.get_by_role("button", name="Save changes").click()
    expect(page.get_by_test_id("config-problem")).to_contain_text("cannot be cleared")
    expect(config.get_by_label("Stream name")).to_have_value("")
    expect(config.get_by_label("Report frequency")).to_have_value("monthly")
    assert _api(fresh_server, f"/api/v1/streams/{stream_id}")["report_frequency"] == "weekly"
    problems.expect_failed_loads(422)

    config.get_by_label("Stream name").fill("Palatin Watch")
    config.get_by_role("button", name="Save changes").click()
    expect(page.get_by_test_id("config-status")).to_have_text("Saved.")
    expect(page.get_by_role("heading", level=1)).to_have_text("Palatin Watch")
    expect(page.get_by_test_id("schedule")).to_contain_text("Runs on its own every month.")
    stream = _api(fresh_server, f"/api/v1/streams/{stream_id}")
    assert (stream["stream_name"], stream["report_frequency"]) == ("Palatin Watch", "monthly")
    # The query the user edited was kept.
    assert stream["retrieval"]["queries"]["pubmed"]["query"] == PUBMED_QUERY
    page.screenshot(path=str(SCREENSHOTS / "stream-page.png"), full_page=True)

    page.get_by_role("link", name="← All streams").click()
    listed = page.locator(f'[data-stream-id="{stream_id}"]')
    expect(listed).to_contain_text("Palatin Watch")
    expect(listed).to_contain_text("Organisations and competitors")
    expect(listed).to_contain_text("Reports: monthly")
    problems.assert_none()


# --- drafts in progress --------------------------------------------------------------------


def test_an_open_draft_is_listed_on_the_streams_page_and_its_link_reopens_it(
    fresh_server: LiveServer, new_page: NewPage, problems: PageProblems
) -> None:
    page = new_page(fresh_server)
    page.goto("/streams/new")
    expect(page).to_have_url(re.compile(rf"/streams/new/{UUID}$"))
    creation_id = page.url.rsplit("/", 1)[1]
    _preview(page).get_by_label("Stream name").fill("Palatin Watch")
    _type_answer(page, TOPIC, "purpose")
    aims = _offer(page).get_by_role("group", name="Suggestions for purpose")
    offered = aims.get_by_role("button").all_inner_texts()

    # "New stream" again: a new draft (the first has a conversation), left empty.
    page.get_by_role("link", name="← All streams").click()
    page.get_by_role("link", name="New stream").click()
    expect(page).to_have_url(re.compile(rf"/streams/new/{UUID}$"))
    empty_id = page.url.rsplit("/", 1)[1]
    assert empty_id != creation_id
    expect(_log(page)).to_contain_text("Let's set up a research stream.")

    page.get_by_role("link", name="Streams", exact=True).click()
    expect(page).to_have_url(re.compile(r"/streams$"))
    expect(page.get_by_test_id("no-streams")).to_be_visible()
    drafts = page.get_by_role("region", name="Drafts in progress")
    expect(drafts).to_be_visible()
    # Only the draft something was said in: the empty one is not a draft worth listing.
    expect(drafts.locator("li")).to_have_count(1)
    draft = drafts.locator(f'[data-creation-id="{creation_id}"]')
    expect(draft).to_contain_text("Step: purpose")
    draft.get_by_role("link", name="Palatin Watch").click()

    # The draft reopens where it was left: the conversation, the configuration, the step,
    # and the chips the guide offered.
    expect(page).to_have_url(re.compile(rf"/streams/new/{creation_id}$"))
    expect(_log(page).locator(".guide-msg.user")).to_have_text([TOPIC])
    expect(_preview(page).get_by_label("Stream name")).to_have_value("Palatin Watch")
    current = page.get_by_test_id("steps").locator('[aria-current="step"]')
    expect(current).to_have_attribute("data-step", "purpose")
    expect(aims.get_by_role("button")).to_have_text(offered)

    # A draft is deleted from the list, after a confirmation (cancelled once).
    page.goto("/streams")
    delete = draft.get_by_role("button", name="Delete the draft Palatin Watch")
    delete.click()
    dialog = page.get_by_test_id("confirm-draft-delete")
    expect(dialog).to_be_visible()
    expect(dialog).to_contain_text("Palatin Watch")
    dialog.get_by_role("button", name="Cancel").click()
    expect(dialog).to_be_hidden()
    expect(delete).to_be_focused()
    expect(draft).to_be_visible()
    delete.press("Enter")  # the keyboard opens it too
    dialog.get_by_role("button", name="Delete the draft").click()
    expect(drafts).to_be_hidden()
    expect(page.get_by_test_id("drafts-status")).to_have_text(
        "The draft \u201cPalatin Watch\u201d was deleted."
    )
    gone = httpx.get(fresh_server.url(f"/api/v1/streams/creation/{creation_id}"), timeout=10)
    assert gone.status_code == 404
    # An abandoned draft is not listed either.
    abandoned = httpx.post(
        fresh_server.url(f"/api/v1/streams/creation/{empty_id}/abandon"), timeout=10
    )
    assert abandoned.status_code == 200, abandoned.text
    page.reload()
    expect(page.get_by_test_id("no-streams")).to_be_visible()
    expect(drafts).to_be_hidden()
    problems.assert_none()


# --- a scripted model: the message streams, chips and options follow ------------------------


class HeldScript(GuideScript):
    """A ``GuideScript`` whose answer to request ``hold_request`` stops after ``hold_after``
    chunks until the test releases it, so the page can be seen half-way through."""

    def __init__(self, *steps: Step, hold_request: int, hold_after: int) -> None:
        super().__init__(*steps)
        self.hold_request = hold_request
        self.hold_after = hold_after
        self.reached = threading.Event()
        self.release = threading.Event()

    async def stream(
        self, messages: list[ModelMessage], info: AgentInfo
    ) -> AsyncIterator[str | DeltaToolCalls]:
        request = len(self.instructions)
        sent = 0
        async for chunk in super().stream(messages, info):
            if request == self.hold_request and sent == self.hold_after:
                self.reached.set()
                await asyncio.to_thread(self.release.wait, TURN_WAIT_MS / 1000)
            yield chunk
            sent += 1


FIRST_ANSWER = (
    "Palatin's melanocortin programs are a classic competitive watch. Which type of stream "
    "should this be?"
)


@pytest.fixture
def script() -> HeldScript:
    return HeldScript(
        Malformed('{"mode": "question", "message": "Let me'),
        Malformed('{"mode": "quest'),
        answer(
            FIRST_ANSWER,
            mode="suggestion",
            target_field="stream_type",
            suggestions=["competitive", "clinical"],
            extracted_data={"purpose": PURPOSE},
            next_step="stream_type",
        ),
        answer(
            "Which search terms should it look for?",
            mode="suggestion",
            target_field="keywords",
            options=["bremelanotide", "setmelanotide"],
            proposed_message="Continue with these terms",
            next_step="keywords",
        ),
        hold_request=2,
        hold_after=14,
    )


@pytest.fixture
def model_server(tmp_path: Path, script: HeldScript) -> Iterator[LiveServer]:
    with serve(clean_settings(tmp_path / "data"), models={"default": script.model()}) as live:
        yield live


def test_a_model_guide_streams_its_message_then_offers_chips_and_options(
    model_server: LiveServer, script: HeldScript, new_page: NewPage, problems: PageProblems
) -> None:
    page = new_page(model_server)
    requests: list[Request] = []
    page.on("request", lambda request: requests.append(request))
    page.goto("/streams/new")
    expect(page).to_have_url(re.compile(rf"/streams/new/{UUID}$"))
    expect(page.get_by_test_id("guide-kind")).to_have_text("(a language model)")

    # The model fails twice (its answer is not valid JSON): the offline guide answers the
    # turn instead (issue 22), and the page says so in plain words.
    _answer_box(page).fill(PURPOSE)
    _answer_box(page).press("Enter")
    notice = page.get_by_test_id("guide-fallback")
    expect(notice).to_contain_text("could not be used", timeout=TURN_WAIT_MS)
    expect(notice).to_contain_text("the offline guide answered this turn")
    expect(_log(page).locator(".guide-msg.user")).to_have_count(1)
    creation_id = page.url.rsplit("/", 1)[1]
    assert _api(model_server, f"/api/v1/streams/creation/{creation_id}")["revision"] == 1

    # Sent again, the model is asked again: the message streams in, token by token.
    _answer_box(page).fill(PURPOSE)
    _guide(page).get_by_role("button", name="Send").click()
    assert script.reached.wait(TURN_WAIT_MS / 1000), "the model was not asked again"
    streaming = page.get_by_test_id("streaming-message")
    expect(streaming).to_have_attribute("aria-busy", "true")
    expect(streaming.locator(".guide-text")).to_contain_text("Palatin's")
    partial = streaming.locator(".guide-text").inner_text()
    assert FIRST_ANSWER.startswith(partial) and len(partial) < len(FIRST_ANSWER), partial
    expect(page.get_by_test_id("turn-problem")).to_be_empty()
    expect(_answer_box(page)).to_have_value(PURPOSE)  # kept until the turn succeeds
    script.release.set()

    _wait_for_turn(page, "stream_type")
    expect(_log(page).locator(".guide-msg.assistant").last).to_have_text(FIRST_ANSWER)
    expect(_answer_box(page)).to_have_value("")
    expect(_preview(page).get_by_label("Purpose")).to_have_value(PURPOSE)
    chips = _offer(page).get_by_role("group", name="Suggestions for stream type")
    expect(chips.get_by_role("button")).to_have_text(
        ["Organisations and competitors", "Clinical research"]
    )

    chips.get_by_role("button", name="Organisations and competitors").click()
    _wait_for_turn(page, "keywords")
    assert _turn_bodies(requests)[-1]["action"] == {
        "type": "option_selected",
        "target_field": "stream_type",
        "selected_value": "competitive",
    }
    # What the user did, in their words: never the field's name or the stored value.
    expect(_log(page).locator(".guide-msg.user").last).to_have_text(
        "Selected \u201cOrganisations and competitors\u201d for stream type."
    )
    expect(_preview(page).get_by_label("Stream type")).to_have_value("competitive")
    options = _offer(page).get_by_role("group", name="Keywords: tick the ones that apply")
    expect(options.get_by_role("checkbox")).to_have_count(2)
    expect(options.get_by_role("button", name="Continue with these terms")).to_be_visible()
    assert "Current Step: stream_type" in script.system_prompt
    page.screenshot(path=str(SCREENSHOTS / "stream-creation-model.png"), full_page=True)
    problems.assert_none()


# --- a phone's width -------------------------------------------------------------------------


def _overflow(page: Page) -> int:
    """How many pixels the page is wider than the window (0: no horizontal scrolling)."""
    width: int = page.evaluate(
        "document.documentElement.scrollWidth - document.documentElement.clientWidth"
    )
    return width


def test_the_stream_pages_fit_a_phone(
    fresh_server: LiveServer, new_page: NewPage, problems: PageProblems
) -> None:
    with httpx.Client(base_url=fresh_server.base_url, timeout=20) as client:
        _, stream = quick_stream(client)
    page = new_page(fresh_server)
    page.set_viewport_size({"width": 390, "height": 844})

    page.goto(f"/streams/{stream['id']}")
    expect(page.get_by_test_id("stream-name")).to_have_text(stream["stream_name"])
    expect(page.get_by_test_id("source-state").first).to_be_visible()
    reports = page.get_by_test_id("reports")
    expect(reports.get_by_role("button", name="Run now")).to_be_in_viewport()
    assert _overflow(page) == 0
    page.get_by_test_id("config").get_by_text("Edit the stream's settings").click()
    page.locator('details[data-source="pubmed"] > summary').click()
    expect(page.get_by_role("form", name="PubMed query")).to_be_visible()
    assert _overflow(page) == 0

    page.goto("/streams/new")
    _type_answer(page, TOPIC, "purpose")
    expect(_offer(page).get_by_role("group", name="Suggestions for purpose")).to_be_visible()
    assert _overflow(page) == 0
    page.goto("/streams")
    expect(page.get_by_role("region", name="Drafts in progress")).to_be_visible()
    assert _overflow(page) == 0
    problems.assert_none()
