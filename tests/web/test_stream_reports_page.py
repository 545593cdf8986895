"""A stream's reports in a real browser (Debian's Chromium against a live server with the
durable engine, whose sources answer from recorded responses): "Run now" on the stream page
(the run is started at once and the page reads its report until it has finished), the
report in the list, and the report's page — counts, each source's outcome, the timeline as
an SVG bar chart with its table, the ranked items with their reasons, the view by focus
area and organisation, the RIS export; a first report says what the first run found, and
one with nothing in it says why and offers no export; a failing source flags the report as
partial; items judged relevant or not stay judged, and the page's chat sees the stream and
the report."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import rispy
from playwright.sync_api import Page, expect

from tests.search.world import LiteratureWorld
from tests.streams.test_runs_api import RECORDED, new_stream
from tests.web.live import LiveServer, NewPage, PageProblems, clean_settings, serve

pytestmark = pytest.mark.browser

RUN_WAIT_MS = 30_000  # a run over recorded responses takes a few seconds; this stops a hang
UUID = r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"


def _server(tmp_path: Path, world: LiteratureWorld) -> Iterator[LiveServer]:
    # No scheduled runs: a stream never run is due, and a run the schedule starts at its
    # 5-minute slot would race the test's own "Run now".
    settings = clean_settings(tmp_path / "data", streams={"scheduler_enabled": False})
    with serve(settings, source_transport=world.transport(), engine=True) as live:
        yield live


@pytest.fixture
def world_server(tmp_path: Path) -> Iterator[LiveServer]:
    yield from _server(tmp_path, LiteratureWorld())


@pytest.fixture
def failing_server(tmp_path: Path) -> Iterator[LiveServer]:
    yield from _server(tmp_path, LiteratureWorld(failing=("openalex",)))


def _stream_id(live: LiveServer) -> str:
    with httpx.Client(base_url=live.base_url, timeout=30) as client:
        return str(new_stream(client)["id"])


def _run_now(page: Page) -> None:
    reports = page.get_by_test_id("reports")
    expect(reports.get_by_test_id("no-reports")).to_be_visible()
    with page.expect_response(re.compile(r"/runs$"), timeout=RUN_WAIT_MS) as started:
        reports.get_by_role("button", name="Run now").click()
        expect(reports.get_by_test_id("run-status")).to_contain_text("Running")
    assert started.value.status == 202
    expect(reports.get_by_test_id("run-status")).to_contain_text(
        re.compile(r"items? found \(first run\)|new items?"), timeout=RUN_WAIT_MS
    )
    expect(reports.get_by_role("button", name="Run now")).to_be_enabled()


def test_run_now_then_read_the_report_and_export_it(
    world_server: LiveServer, new_page: NewPage, problems: PageProblems
) -> None:
    stream_id = _stream_id(world_server)
    page = new_page(world_server)
    page.goto(f"/streams/{stream_id}")
    expect(page.get_by_test_id("stream-meta")).to_contain_text("Never run")
    _run_now(page)

    reports = page.get_by_test_id("reports")
    rows = reports.locator(".report-row")
    expect(rows).to_have_count(1)
    expect(rows.first).to_have_attribute("data-status", "complete")
    expect(rows.first).to_contain_text("Complete")
    new_text = rows.first.locator('[data-field="new"]').inner_text()
    assert new_text.endswith("items found (first run)"), new_text
    new_count = int(new_text.split()[0])
    assert new_count > 0
    expect(page.get_by_test_id("stream-meta")).to_contain_text("Last run")
    rows.first.get_by_role("link").click()

    expect(page).to_have_url(re.compile(rf"/streams/{stream_id}/reports/{UUID}$"))
    expect(page.get_by_test_id("report-title")).to_contain_text("Report of")
    expect(page.get_by_test_id("report-status")).to_have_text("Complete")
    expect(page.get_by_test_id("partial-flag")).to_have_count(0)

    # A first report says what the first run found, not what is new since a last run.
    expect(page.get_by_test_id("report-meta")).to_contain_text("First run: what the sources")
    expect(page.get_by_role("heading", name="Found by the first run")).to_be_visible()
    counts = page.get_by_test_id("counts")
    expect(counts.locator('[data-count="Items found"]')).to_have_text(str(new_count))
    expect(counts.locator('[data-count="Records found"]')).to_have_text("200")
    outcomes = page.get_by_test_id("source-outcomes").locator("tbody tr")
    expect(outcomes).to_have_count(5)
    expect(page.get_by_test_id("source-outcomes").locator("tr.source-failed")).to_have_count(0)

    chart = page.get_by_test_id("timeline-chart")
    expect(chart).to_be_visible()
    expect(chart).to_have_attribute("role", "img")
    bars = chart.locator("rect.bar")
    assert bars.count() >= 1
    expect(chart).to_have_accessible_name(re.compile(r"^New items by publication (year|month)"))
    table = page.get_by_test_id("timeline-table")
    expect(table).to_be_visible()
    expect(table.locator("tbody tr")).to_have_count(bars.count())
    first_period = bars.first.get_attribute("data-period")
    expect(table.locator("tbody tr").first.locator("th")).to_have_text(first_period or "")

    ranked = page.get_by_test_id("ranked-items").get_by_test_id("report-item")
    # The first 50 are drawn; the rest on request, so a long report stays a page.
    expect(ranked).to_have_count(min(new_count, 50))
    show_all = page.get_by_test_id("ranked-items").get_by_role("button", name="Show all")
    if new_count > 50:
        expect(show_all).to_have_text(f"Show all {new_count} items")
        show_all.click()
        expect(ranked).to_have_count(new_count)
        expect(ranked.nth(50).locator("h3")).to_contain_text("51.")
    expect(show_all).to_have_count(0)
    top = ranked.first
    expect(top.get_by_test_id("item-reason")).to_have_text(re.compile(r"\S"))
    expect(top.locator("h3 a")).to_have_attribute("href", re.compile(r"^https?://"))
    expect(top.locator(".badge.source").first).to_be_visible()

    page.get_by_label("By focus area and organisation").check()
    expect(page.get_by_test_id("ranked-items")).to_be_hidden()
    groups = page.get_by_test_id("item-groups").get_by_test_id("report-group")
    expect(groups.first).to_be_visible()
    assert groups.count() >= 3
    competitor = page.locator('[data-testid="report-group"][data-kind="competitor"]').first
    expect(competitor.get_by_role("heading").first).to_contain_text("Organisation:")
    focus = page.locator('[data-testid="report-group"][data-kind="focus_area"]').first
    expect(focus.get_by_role("heading").first).to_contain_text("Focus area:")
    with_items = groups.filter(has=page.get_by_test_id("report-item")).first
    expect(with_items.get_by_test_id("item-reason").first).to_have_text(re.compile(r"\S"))
    page.get_by_label("Ranked list").check()
    expect(page.get_by_test_id("ranked-items")).to_be_visible()

    ris_link = page.get_by_test_id("exports").get_by_role("link", name="RIS")
    href = ris_link.get_attribute("href")
    assert href and href.endswith("/export?format=ris")
    for name in ("BibTeX", "CSV"):
        expect(page.get_by_test_id("exports").get_by_role("link", name=name)).to_be_visible()
    response = page.request.get(href)
    assert response.status == 200, response.text()
    assert response.headers["content-disposition"].endswith('.ris"')
    assert len(rispy.loads(response.text())) == new_count
    with page.expect_download() as download:
        ris_link.click()
    assert download.value.suggested_filename.endswith(".ris")

    page.get_by_test_id("back-to-stream").click()
    expect(page.get_by_test_id("reports").locator(".report-row")).to_have_count(1)
    problems.assert_none()


@pytest.fixture
def empty_server(tmp_path: Path) -> Iterator[LiveServer]:
    yield from _server(tmp_path, LiteratureWorld(empty=RECORDED))


def test_a_report_with_nothing_in_it_says_why_and_offers_no_export(
    empty_server: LiveServer, new_page: NewPage, problems: PageProblems
) -> None:
    stream_id = _stream_id(empty_server)
    page = new_page(empty_server)
    page.goto(f"/streams/{stream_id}")
    _run_now(page)
    reports = page.get_by_test_id("reports")
    expect(reports.get_by_test_id("run-status")).to_have_text(
        "Run complete: 0 items found (first run)."
    )
    row = reports.locator(".report-row").first
    expect(row.locator('[data-field="new"]')).to_have_text("0 items found (first run)")
    row.get_by_role("link").click()

    # The first report: what its first run looked for, not "nothing new since the last run".
    empty = page.get_by_test_id("no-items")
    expect(empty).to_contain_text("The stream's first run found nothing added to its sources")
    expect(page.get_by_test_id("items")).not_to_contain_text("since the last run")
    # Nothing to export: no export link, and the reason instead.
    exports = page.get_by_test_id("exports")
    expect(exports.get_by_role("link")).to_have_count(0)
    expect(exports.get_by_test_id("no-export")).to_have_text(
        "Nothing to export: this report lists no items."
    )
    expect(page.get_by_label("By focus area and organisation")).to_be_hidden()

    # A later report with nothing in it: nothing new since the last run.
    page.get_by_test_id("back-to-stream").click()
    with page.expect_response(re.compile(r"/runs$"), timeout=RUN_WAIT_MS):
        reports.get_by_role("button", name="Run now").click()
    expect(reports.get_by_test_id("run-status")).to_have_text(
        "Run complete: 0 new items.", timeout=RUN_WAIT_MS
    )
    reports.locator(".report-row").first.get_by_role("link").click()
    expect(page.get_by_test_id("no-items")).to_contain_text("Nothing new since the last run")
    expect(page.get_by_role("heading", name="New items")).to_be_visible()
    expect(page.get_by_test_id("exports").get_by_role("link")).to_have_count(0)
    problems.assert_none()


def test_a_failing_source_flags_the_report_as_partial(
    failing_server: LiveServer, new_page: NewPage, problems: PageProblems
) -> None:
    stream_id = _stream_id(failing_server)
    page = new_page(failing_server)
    page.goto(f"/streams/{stream_id}")
    _run_now(page)
    row = page.get_by_test_id("reports").locator(".report-row").first
    expect(row).to_have_attribute("data-status", "partial")
    expect(row).to_contain_text("failed: OpenAlex")  # the source's name, not its id
    row.get_by_role("link").click()

    expect(page.get_by_test_id("report-status")).to_have_text("Partial")
    expect(page.get_by_test_id("partial-flag")).to_contain_text("Partial report")
    failed = page.get_by_test_id("source-outcomes").locator("tr.source-failed")
    expect(failed).to_have_count(1)
    expect(failed).to_have_attribute("data-source", "openalex")
    expect(failed.locator(".source-error")).to_have_text(re.compile(r"\S"))
    expect(page.get_by_test_id("ranked-items").get_by_test_id("report-item").first).to_be_visible()
    problems.assert_none()


def test_a_run_in_progress_is_shown_inline(
    world_server: LiveServer, new_page: NewPage, problems: PageProblems
) -> None:
    stream_id = _stream_id(world_server)
    page = new_page(world_server)
    conflict = {
        "code": "conflict",
        "message": "A run of this stream is in progress.",
        "hint": "Wait for it to finish.",
    }
    page.route(
        re.compile(r"/runs$"),
        lambda route: route.fulfill(status=409, json=conflict),
    )
    page.goto(f"/streams/{stream_id}")
    reports = page.get_by_test_id("reports")
    expect(reports.get_by_test_id("no-reports")).to_be_visible()
    reports.get_by_role("button", name="Run now").click()
    alert = reports.get_by_test_id("run-problem").get_by_role("alert")
    expect(alert).to_contain_text("A run of this stream is in progress.")
    expect(alert).to_contain_text("Wait for it to finish.")
    expect(reports.get_by_test_id("run-status")).to_have_text("")
    expect(reports.get_by_role("button", name="Run now")).to_be_enabled()
    problems.expect_failed_loads(409)
    problems.assert_none()


def _judge(item: object, name: str) -> None:
    from playwright.sync_api import Locator

    assert isinstance(item, Locator)
    with item.page.expect_response(re.compile(r"/feedback$")) as saved:
        item.get_by_role("button", name=name, exact=True).click()
    assert saved.value.status == 200, saved.value.text()


def test_judged_items_stay_judged_and_the_chat_sees_the_report(
    world_server: LiveServer, new_page: NewPage, problems: PageProblems
) -> None:
    stream_id = _stream_id(world_server)
    page = new_page(world_server)
    page.goto(f"/streams/{stream_id}")
    _run_now(page)
    page.get_by_test_id("reports").locator(".report-row").first.get_by_role("link").click()
    expect(page.get_by_test_id("report-scorer")).to_have_text("Relevance scored offline")
    note = page.get_by_test_id("feedback-note")
    expect(note).to_contain_text("next runs rank new items by what you marked")

    items = page.get_by_test_id("ranked-items").get_by_test_id("report-item")
    first, second = items.nth(0), items.nth(1)
    _judge(first, "Relevant")
    _judge(second, "Not relevant")
    expect(first.get_by_role("button", name="Relevant", exact=True)).to_have_attribute(
        "aria-pressed", "true"
    )
    expect(second).to_have_attribute("data-judgement", "irrelevant")
    expect(note).to_contain_text("2 items of this report judged")
    expect(note).to_contain_text("your 2 judgements")
    # The same item in the grouped view shows the same judgement.
    key = first.get_attribute("data-key")
    page.get_by_label("By focus area and organisation").check()
    grouped = page.get_by_test_id("item-groups").locator(f'[data-key="{key}"]').first
    expect(grouped).to_have_attribute("data-judgement", "relevant")
    page.get_by_label("Ranked list").check()

    page.reload()
    expect(first).to_have_attribute("data-judgement", "relevant")
    expect(second).to_have_attribute("data-judgement", "irrelevant")
    # Pressed again: the judgement is taken back.
    _judge(first, "Relevant")
    expect(first).to_have_attribute("data-judgement", "")
    expect(note).to_contain_text("1 item of this report judged")

    # The page's chat gets the stream and the report as its context.
    page.get_by_role("button", name="Assistant", exact=True).click()
    tray = page.get_by_role("complementary", name="Assistant")
    box = tray.get_by_label("Message to the assistant")
    box.fill("/compare")
    with page.expect_request(re.compile(r"/api/v1/chat/messages$")) as sent:
        box.press("Enter")
    context = json.loads(sent.value.post_data or "{}")["context"]
    assert context["current_page"] == "stream_report"
    assert context["stream_id"] == stream_id
    report_id = page.url.rsplit("/", 1)[1]
    assert context["report_id"] == report_id
    assert context["viewer"] == {
        "kind": "stream_report",
        "id": report_id,
        "title": "Palatin Pipeline Tracker",
    }
    assert context["report"]["status"] == "complete"
    # The whole report, though the page draws its first 50 items until asked for all.
    assert context["report"]["counts"]["new"] >= items.count() == 50
    answer = tray.get_by_role("log", name="Conversation with the assistant").locator(
        '[data-role="assistant"]'
    )
    expect(answer.first).to_have_attribute("data-status", "complete", timeout=RUN_WAIT_MS)
    # The first report has no earlier one to compare with, and the answer says so.
    expect(answer.first).to_contain_text(re.compile(r"first report|previous"))
    problems.assert_none()
