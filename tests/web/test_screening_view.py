"""Screening in a real browser: a project created on the Screening page from the library,
the focused view screened with the keyboard (include, exclude with a reason from the
criteria, maybe, skip, undo, accepting the offline stand-in suggestion), the progress and
the stopping aid, then the project page's full-text stage and PRISMA 2020 diagram with its
SVG, PNG and CSV downloads. Screenshots of the view and the diagram go to /tmp."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import httpx
import pytest
from playwright.sync_api import Page, expect

from tests.helpers import assert_plain
from tests.screening.world import EXCLUSION, INCLUSION, KEYWORDS, svg_words, triptans
from tests.web._checks import WIDTHS, overflow
from tests.web.live import LiveServer, NewPage, PageProblems

pytestmark = pytest.mark.browser

VIEW_SHOT = Path("/tmp/screening-view.png")
PRISMA_SHOT = Path("/tmp/prisma.png")


def _tally(page: Page, text: str) -> None:
    expect(page.get_by_test_id("tally")).to_contain_text(text)


def _title(page: Page) -> str:
    title = page.get_by_test_id("record-title")
    expect(title).not_to_be_empty()
    return title.inner_text()


def _create_project(page: Page) -> None:
    page.goto("/screening")
    expect(page.get_by_test_id("no-projects")).to_be_visible()
    form = page.get_by_test_id("new-project")
    form.get_by_label("Name").fill("Triptans for acute migraine")
    form.get_by_label("Keywords, one per line").fill("\n".join(KEYWORDS))
    form.get_by_label("Inclusion criteria, one per line").fill("\n".join(INCLUSION))
    form.get_by_label("Exclusion criteria, one per line").fill("\n".join(EXCLUSION))
    expect(form.get_by_label("From your library")).to_be_checked()
    form.get_by_role("button", name="Create the project").click()
    expect(page.get_by_test_id("project-name")).to_have_text("Triptans for acute migraine")
    expect(page.get_by_test_id("project-origin")).to_contain_text("40 records")


def test_screen_with_the_keyboard_then_read_the_prisma_flow(
    fresh_server: LiveServer, new_page: NewPage, problems: PageProblems
) -> None:
    with httpx.Client(base_url=fresh_server.base_url) as client:
        response = client.post(
            "/api/v1/library/imports",
            files={"file": ("triptans.csv", triptans().csv_bytes)},
            headers={"Origin": fresh_server.base_url},
        )
        assert response.status_code == 201, response.text
    page = new_page(fresh_server)
    _create_project(page)
    expect(page.get_by_test_id("criteria")).to_contain_text(EXCLUSION[1])
    page.get_by_test_id("start-screening").click()

    # The focused view: one record, keywords marked, the keys on the page.
    first = _title(page)
    expect(page.get_by_test_id("abstract").locator("mark").first).to_be_visible()
    expect(page.get_by_test_id("keywords-found")).to_contain_text("Keywords found:")
    expect(page.get_by_test_id("keys")).to_contain_text("Undo your last decision")
    _tally(page, "0 of 40 screened")
    expect(page.get_by_test_id("basis")).to_contain_text("Keyword relevance")

    page.keyboard.press("i")
    _tally(page, "1 of 40 screened")
    expect(page.get_by_test_id("included-count")).to_have_text("1")
    expect(page.get_by_test_id("message")).to_contain_text(f"Include: {first[:30]}")

    second = _title(page)
    assert second != first
    page.keyboard.press("e")
    reasons = page.get_by_test_id("reasons")
    expect(reasons).to_be_visible()
    expect(reasons.get_by_role("button")).to_have_count(len(EXCLUSION))
    page.keyboard.press("Escape")
    expect(reasons).to_be_hidden()
    _tally(page, "0 excluded")
    page.keyboard.press("e")
    page.keyboard.press("2")
    _tally(page, "2 of 40 screened")
    _tally(page, "1 excluded")
    expect(page.get_by_test_id("message")).to_contain_text(f"Exclude ({EXCLUSION[1]})")

    third = _title(page)
    page.keyboard.press("m")
    _tally(page, "1 maybe")

    # Undo brings the record back, with nothing recorded for it.
    page.keyboard.press("u")
    expect(page.get_by_test_id("message")).to_contain_text("Undone: Maybe of")
    _tally(page, "2 of 40 screened")
    _tally(page, "0 maybe")
    expect(page.get_by_test_id("record-title")).to_have_text(third)
    expect(page.get_by_test_id("your-decision")).to_be_hidden()

    # n passes the record over for now: another comes, nothing is decided.
    page.keyboard.press("n")
    expect(page.get_by_test_id("record-title")).not_to_have_text(third)
    _tally(page, "2 of 40 screened")

    # Offline, the ranker's score stands in for a model's suggestion; a accepts it.
    suggestion = page.get_by_test_id("suggestion")
    expect(suggestion.get_by_test_id("suggestion-note")).to_contain_text(
        "No model is configured (offline mode): the ranker's score stands in."
    )
    label = suggestion.get_by_test_id("suggested-label").inner_text().split(" ·")[0].strip()
    page.keyboard.press("a")
    if label == "Exclude":  # no exclusion criterion named: the reviewer picks the reason
        page.keyboard.press("1")
    _tally(page, "3 of 40 screened")

    # The progress chart and the stopping aid.
    chart = page.get_by_test_id("progress-chart").locator("polyline")
    expect(chart).to_have_attribute("data-points", "4")
    # The axis spans the records screened (ten at least), the legend the project's 40.
    expect(page.get_by_test_id("progress-chart").locator("svg")).to_have_attribute(
        "data-span", "10"
    )
    expect(page.get_by_test_id("progress-chart")).to_contain_text(
        "3 of 40 records screened · 37 left"
    )
    expect(page.get_by_test_id("since-last-include")).not_to_be_empty()
    expect(page.get_by_test_id("relevant-left")).to_have_text("not yet known")
    expect(page.get_by_test_id("estimate")).to_contain_text("at least 10")
    page.screenshot(path=str(VIEW_SHOT), full_page=True)

    # The project page: full-text stage, then the PRISMA flow and its downloads.
    page.get_by_test_id("back-to-project").click()
    fulltext = page.get_by_test_id("fulltext")
    row = fulltext.locator("tr[data-record-id]").filter(has_text=first[:40])
    expect(row).to_have_count(1)
    row.get_by_label(f"Full-text decision on {first}").select_option("not_retrieved")
    row.get_by_role("button", name="Save").click()
    expect(row).to_contain_text("Saved.")
    # On a phone the full-text stage fits the screen: no sideways page, Save in reach.
    page.set_viewport_size({"width": WIDTHS["mobile"][0], "height": WIDTHS["mobile"][1]})
    assert overflow(page) is None, overflow(page)
    save = row.get_by_role("button", name="Save").bounding_box()
    assert save is not None and save["x"] + save["width"] <= WIDTHS["mobile"][0]
    page.set_viewport_size({"width": 1280, "height": 800})  # the tests' own window

    prisma = page.get_by_test_id("prisma")
    image = prisma.get_by_test_id("prisma-diagram")
    expect(image).to_be_visible()
    page.wait_for_function("el => el.complete && el.naturalWidth > 0", arg=image.element_handle())
    image.screenshot(path=str(PRISMA_SHOT))

    with page.expect_download() as svg_download:
        prisma.get_by_role("link", name="SVG").click()
    svg = Path(svg_download.value.path()).read_text(encoding="utf-8")
    words = svg_words(svg)
    assert "Records screened (n = 3)" in words
    assert f"{EXCLUSION[1]} (n = 1)" in words
    assert "Reports not retrieved (n = 1)" in words
    # Downloads are named after the project, not its id.
    assert svg_download.value.suggested_filename == "triptans-for-acute-migraine-prisma.svg"

    with page.expect_download() as png_download:
        prisma.get_by_role("link", name="PNG").click()
    assert Path(png_download.value.path()).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert png_download.value.suggested_filename == "triptans-for-acute-migraine-prisma.png"

    with page.expect_download() as csv_download:
        prisma.get_by_role("link", name="CSV of counts").click()
    table = Path(csv_download.value.path()).read_text(encoding="utf-8-sig")
    rows = list(csv.reader(io.StringIO(table)))
    assert ["screening", "Records screened", "3"] in rows
    assert ["screening", "Reports not retrieved", "1"] in rows

    # Numbers the project cannot know are entered, and the diagram shows them.
    prisma.get_by_text("Enter the numbers the project does not record").click()
    prisma.get_by_label("Duplicate records removed").fill("5")
    prisma.get_by_role("button", name="Save the numbers").click()
    expect(prisma).to_contain_text("Saved.")
    with page.expect_download() as again:
        prisma.get_by_role("link", name="SVG").click()
    assert "Duplicate records removed (n = 5)" in svg_words(
        Path(again.value.path()).read_text(encoding="utf-8")
    )

    with page.expect_download() as export:
        page.get_by_test_id("exports").get_by_role("link", name="CSV").click()
    assert export.value.suggested_filename == "triptans-for-acute-migraine-screening.csv"
    records = list(
        csv.DictReader(io.StringIO(Path(export.value.path()).read_text(encoding="utf-8-sig")))
    )
    assert len(records) == 40
    assert [r["reason"] for r in records if r["decision"] == "exclude"][:1] == [EXCLUSION[1]]
    problems.assert_none()


def test_a_project_name_you_use_already_is_refused_on_the_forms(
    fresh_server: LiveServer, new_page: NewPage, problems: PageProblems
) -> None:
    with httpx.Client(
        base_url=fresh_server.base_url, headers={"Origin": fresh_server.base_url}
    ) as client:
        imported = client.post(
            "/api/v1/library/imports", files={"file": ("triptans.csv", triptans().csv_bytes)}
        )
        assert imported.status_code == 201, imported.text
        for name in ("Triptans for acute migraine", "Eletriptan"):
            made = client.post(
                "/api/v1/screening/projects", json={"name": name, "source": {"kind": "library"}}
            )
            assert made.status_code == 201, made.text
        other = made.json()["id"]
    taken = "You already have a screening project named “Triptans for acute migraine”"
    page = new_page(fresh_server)
    page.goto("/screening")
    form = page.get_by_test_id("new-project")
    form.get_by_label("Name").fill("  triptans FOR acute migraine")
    with page.expect_response(lambda r: r.url.endswith("/api/v1/screening/projects")) as sent:
        form.get_by_role("button", name="Create the project").click()
    assert sent.value.status == 409
    alert = form.get_by_role("alert")
    expect(alert).to_contain_text(f"The project was not created. {taken}")
    expect(alert).to_contain_text("Choose another name, or open “Triptans for acute migraine”")
    assert_plain(alert.inner_text())
    expect(form.get_by_role("button", name="Create the project")).to_be_enabled()
    expect(page.get_by_test_id("projects").locator(".project-item")).to_have_count(2)

    # Renaming another project to it: refused on the project page too, nothing changed.
    page.goto(f"/screening/{other}")
    page.get_by_text("Edit the criteria and keywords").click()
    edit = page.locator('form[data-role="edit-project"]')
    edit.get_by_label("Name").fill("TRIPTANS for acute migraine")
    with page.expect_response(lambda r: r.request.method == "PATCH") as patched:
        edit.get_by_role("button", name="Save").click()
    assert patched.value.status == 409
    expect(edit.get_by_role("alert")).to_contain_text(f"Nothing was changed. {taken}")
    expect(page.get_by_test_id("project-name")).to_have_text("Eletriptan")
    problems.expect_failed_loads(409)
    problems.assert_none()


def test_the_new_project_form_says_what_is_wrong_with_its_years(
    fresh_server: LiveServer, new_page: NewPage, problems: PageProblems
) -> None:
    """Years the library search would refuse are refused in its words, on the form; a
    year that is no number is refused too, never dropped as if the field were empty."""
    with httpx.Client(
        base_url=fresh_server.base_url, headers={"Origin": fresh_server.base_url}
    ) as client:
        imported = client.post(
            "/api/v1/library/imports", files={"file": ("triptans.csv", triptans().csv_bytes)}
        )
        assert imported.status_code == 201, imported.text
    page = new_page(fresh_server)
    page.goto("/screening?query=triptan&year_from=2030&year_to=2000")
    form = page.get_by_test_id("new-project")
    form.get_by_label("Name").fill("Years")
    create = form.get_by_role("button", name="Create the project")
    with page.expect_response(lambda r: r.url.endswith("/api/v1/screening/projects")) as sent:
        create.click()
    assert sent.value.status == 422
    alert = form.get_by_role("alert")
    expect(alert).to_contain_text(
        "The project was not created. The request is not valid: source: the first year "
        "(2030) is after the last (2000): give the earlier year first."
    )
    assert_plain(alert.inner_text())

    form.get_by_label("From year").fill("20x0")
    form.get_by_label("To year").fill("")
    with page.expect_response(lambda r: r.url.endswith("/api/v1/screening/projects")) as sent:
        create.click()
    assert sent.value.status == 422
    expect(alert).to_contain_text("year_from must be a whole number")
    with httpx.Client(base_url=fresh_server.base_url) as client:
        assert client.get("/api/v1/screening/projects").json() == {"projects": []}
    problems.expect_failed_loads(422)
    problems.assert_none()
