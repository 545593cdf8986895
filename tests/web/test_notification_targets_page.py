"""Notification targets in a real browser (Debian's Chromium against a live server): on the
Settings page a ``json://`` target pointing at a webhook on loopback is added, listed with
its masked preview, tested (the hook receives the POST, the page says it was sent; a hook
answering 500 says why it failed), and deleted after a confirmation; a URL apprise cannot
send to is refused next to the form with the hint, and what was typed stays. A URL's
password never reaches the page. The stream page manages that stream's targets."""

from __future__ import annotations

import re
from collections.abc import Iterator

import httpx
import pytest
from playwright.sync_api import Locator, Page, expect

from tests.notify.hooks import HookServer, hook_server
from tests.streams.test_runs_api import new_stream
from tests.web.live import LiveServer, NewPage, PageProblems

pytestmark = pytest.mark.browser

MINE = "/api/v1/me/notifications"
PASSWORD = "s3cret-Hook-pw"


@pytest.fixture
def hooks() -> Iterator[HookServer]:
    with hook_server() as server:
        yield server


def _section(page: Page) -> Locator:
    return page.get_by_test_id("my-notify-targets")


def _add(section: Locator, url: str, label: str = "") -> None:
    section.get_by_label("Notification URL").fill(url)
    section.get_by_label("Label").fill(label)
    section.get_by_role("button", name="Add target").click()


def test_add_test_refuse_and_delete_a_target(
    fresh_server: LiveServer, hooks: HookServer, new_page: NewPage, problems: PageProblems
) -> None:
    page = new_page(fresh_server)
    page.goto("/settings")
    section = _section(page)
    expect(section.get_by_role("heading", name="Notifications", exact=True)).to_be_visible()
    expect(section).to_contain_text("new stream reports")
    expect(section.get_by_test_id("no-targets")).to_have_text("No notification targets yet.")
    help_text = section.get_by_test_id("url-help")
    for example in (
        "ntfy://my-topic",
        "mailto://user:password@example.com",
        "json://hooks.example.com/path",
    ):
        expect(help_text).to_contain_text(example)
    url_input = section.get_by_label("Notification URL")
    expect(url_input).to_have_accessible_description(re.compile("ntfy://my-topic"))

    # Added, listed with its preview; the form is emptied once the URL is stored.
    _add(section, hooks.url("/hook"), "Lab webhook")
    targets = section.get_by_test_id("target")
    expect(targets).to_have_count(1)
    target = targets.filter(has_text="Lab webhook")
    expect(target.get_by_test_id("target-label")).to_have_text("Lab webhook")
    expect(target.get_by_test_id("target-preview")).to_have_text(hooks.url("/hook"))
    expect(section.get_by_test_id("no-targets")).to_be_hidden()
    expect(url_input).to_have_value("")
    expect(section.get_by_label("Label")).to_have_value("")

    # Send test: the hook receives the POST and the row says it was sent.
    target.get_by_role("button", name="Send test").click()
    expect(target.get_by_test_id("test-outcome")).to_have_text(re.compile(r"\bsent\b", re.I))
    expect(target.get_by_test_id("test-outcome")).to_have_attribute("data-ok", "true")
    posted = hooks.received()
    assert [p.path for p in posted] == ["/hook"]
    assert posted[0].body["title"] == "ScholarStream test notification"

    # A hook that answers 500: the row says it failed, and why.
    _add(section, hooks.url("/broken"))
    expect(targets).to_have_count(2)
    expect(target.get_by_test_id("test-outcome")).to_have_text(re.compile(r"\bsent\b", re.I))
    broken = targets.filter(has_text="/broken")
    expect(broken.get_by_test_id("target-label")).to_have_text("JSON")
    broken.get_by_role("button", name="Send test").click()
    outcome = broken.get_by_test_id("test-outcome")
    expect(outcome).to_have_text(re.compile(r"^Failed: \S"))
    expect(outcome).to_have_attribute("data-ok", "false")

    # Refused: the problem and its hint next to the form; what was typed stays.
    _add(section, "nope://x", "Mine")
    problem = section.get_by_test_id("add-problem")
    expect(problem.get_by_role("alert")).to_contain_text("The target was not added.")
    expect(problem.locator(".problem-hint")).to_contain_text("ntfy://topic")
    expect(url_input).to_have_value("nope://x")
    expect(section.get_by_label("Label")).to_have_value("Mine")
    expect(url_input).to_have_attribute("aria-invalid", "true")
    expect(url_input).to_be_focused()
    expect(targets).to_have_count(2)
    problems.expect_failed_loads(422)
    # Typing again clears the mark, and a good URL then goes through.
    url_input.fill("ntfy://my-topic")
    expect(url_input).not_to_have_attribute("aria-invalid", "true")
    section.get_by_role("button", name="Add target").click()
    expect(targets).to_have_count(3)
    expect(problem).to_be_empty()

    # Kept across a reload.
    page.reload()
    section = _section(page)
    targets = section.get_by_test_id("target")
    expect(targets).to_have_count(3)
    expect(targets.filter(has_text="Lab webhook")).to_have_count(1)

    # Delete asks first: Cancel keeps the target, Delete removes it.
    dialog = section.get_by_test_id("confirm-target-delete")
    lab = targets.filter(has_text="Lab webhook")
    lab.get_by_role("button", name="Delete").click()
    expect(dialog).to_be_visible()
    expect(dialog).to_contain_text("Lab webhook")
    dialog.get_by_role("button", name="Cancel").click()
    expect(dialog).to_be_hidden()
    expect(targets).to_have_count(3)
    for left in (2, 1, 0):
        targets.first.get_by_role("button", name="Delete").click()
        dialog.get_by_role("button", name="Delete").click()
        expect(dialog).to_be_hidden()
        expect(targets).to_have_count(left)
    expect(section.get_by_test_id("no-targets")).to_be_visible()
    expect(url_input).to_be_focused()  # where the last row was

    page.reload()
    expect(_section(page).get_by_test_id("no-targets")).to_be_visible()
    assert page.request.get(MINE).json() == {"targets": []}
    problems.assert_none()


def test_a_url_password_never_reaches_the_page(
    fresh_server: LiveServer, hooks: HookServer, new_page: NewPage, problems: PageProblems
) -> None:
    url = f"json://user:{PASSWORD}@127.0.0.1:{hooks.port}/hook"
    page = new_page(fresh_server)
    page.goto("/settings")
    section = _section(page)
    _add(section, url, "Secret hook")

    target = section.get_by_test_id("target")
    expect(target).to_have_count(1)
    expect(target.get_by_test_id("target-preview")).to_have_text(
        f"json://***@127.0.0.1:{hooks.port}/hook"
    )
    expect(section.get_by_label("Notification URL")).to_have_value("")
    target.get_by_role("button", name="Send test").click()
    expect(target.get_by_test_id("test-outcome")).to_contain_text("sent")
    assert hooks.received()

    for html in (page.content(), page.request.get("/settings").text()):
        assert PASSWORD not in html
        assert url not in html
    assert PASSWORD not in page.request.get(MINE).text()
    page.reload()
    expect(_section(page).get_by_test_id("target-preview")).to_have_count(1)
    assert PASSWORD not in page.content()
    problems.assert_none()


def test_the_stream_page_manages_the_streams_targets(
    fresh_server: LiveServer, new_page: NewPage, problems: PageProblems
) -> None:
    with httpx.Client(base_url=fresh_server.base_url, timeout=30) as client:
        stream_id = str(new_stream(client)["id"])
    base = f"/api/v1/streams/{stream_id}/notifications"
    page = new_page(fresh_server)
    page.goto(f"/streams/{stream_id}")
    box = page.get_by_test_id("stream-notify-targets")
    expect(box).to_contain_text("Where this stream's new reports are announced.")
    expect(box.get_by_test_id("no-targets")).to_be_visible()
    _add(box, "ntfy://my-topic", "Team topic")
    expect(box.get_by_test_id("target")).to_have_count(1)
    expect(box.get_by_test_id("target-preview")).to_have_text("ntfy://my-topic")

    listed = page.request.get(base).json()["targets"]
    assert [(t["label"], t["stream_id"]) for t in listed] == [("Team topic", stream_id)]
    assert page.request.get(MINE).json() == {"targets": []}
    page.goto("/settings")
    expect(_section(page).get_by_test_id("no-targets")).to_be_visible()
    problems.assert_none()
