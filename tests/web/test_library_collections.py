"""Collections, tags and notes on the Library page in a real browser (Debian's Chromium,
a real server): the records ticked across pages or every result of a search go into a
collection, get tags; the facets count them and filter by them; the open record shows its
collections, tags and note; a collection is renamed, exported and deleted without its
records."""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest
from playwright.sync_api import Locator, Page, expect

from tests.conftest import SHARED_DATA
from tests.web._axe import axe_violations, keyboard_walk, require_axe
from tests.web.live import LiveServer, NewPage, PageProblems

pytestmark = pytest.mark.browser

SCOPUS = SHARED_DATA / "exports" / "asysd_testthat" / "scopus.ris"
TOTAL = 10
TAURINE_TITLE = (
    "Development and Validation of a Robust and Straightforward LC-MS Method for Measuring "
    "Taurine in Whole Blood and Plasma of Dogs and Reference Intervals Calculation"
)
FINAL_SCREENSHOT = Path("/tmp/library-final.png")


def _results(page: Page) -> Locator:
    return page.get_by_test_id("results").get_by_role("listitem")


def _query(page: Page) -> dict[str, list[str]]:
    return parse_qs(urlsplit(page.url).query)


def _import(page: Page) -> None:
    page.get_by_label("File", exact=True).set_input_files(SCOPUS)
    page.get_by_role("button", name="Import", exact=True).click()
    expect(page.get_by_test_id("import-summary").locator('[data-field="imported"]')).to_have_text(
        str(TOTAL)
    )


def _search(page: Page, words: str) -> None:
    page.get_by_label("Search words or a question").fill(words)
    page.get_by_role("button", name="Search", exact=True).click()


def test_collect_tag_and_note_records_then_filter_by_them(
    fresh_server: LiveServer, new_page: NewPage, problems: PageProblems, tmp_path: Path
) -> None:
    page = new_page(fresh_server)
    page.goto("/library?limit=4")
    _import(page)
    organize = page.get_by_test_id("organize")
    status = organize.get_by_test_id("organize-status")
    count = page.get_by_test_id("result-count")

    # Two records ticked on two pages go into a new collection.
    expect(count).to_contain_text("Showing 1\N{EN DASH}4 of 10 records")
    first = page.get_by_test_id("results").locator("h3").first.inner_text()
    _results(page).first.get_by_role("checkbox").check()
    page.get_by_test_id("pager").get_by_role("button", name="Next page").click()
    expect(count).to_contain_text("Showing 5\N{EN DASH}8 of 10 records")
    second = page.get_by_test_id("results").locator("h3").first.inner_text()
    _results(page).first.get_by_role("checkbox").check()
    organize.get_by_label("the 2 selected records").check()
    organize.get_by_label("Collection").fill("Included studies")
    organize.get_by_role("button", name="Add to collection").click()
    expect(status).to_have_text("Made the collection “Included studies” with 2 records.")
    panel = page.get_by_test_id("collections")
    expect(panel.get_by_role("listitem")).to_have_text(re.compile(r"Included studies\s*2 records"))

    # Every result of a search goes in too (the name in another case is the same collection).
    _search(page, "taurine")
    expect(count).to_have_text("1 record")
    expect(organize.get_by_label("all 1 record of this search")).to_be_checked()
    organize.get_by_label("Collection").fill("included STUDIES")
    organize.get_by_role("button", name="Add to collection").click()
    expect(status).to_contain_text("Added 1 record to “Included studies”")
    expect(panel.get_by_role("listitem")).to_contain_text("3 records")
    expect(_results(page).first.locator('[data-role="labels"]')).to_have_text(
        "In: Included studies"
    )

    # Tags, several at once, on every result of the search.
    organize.get_by_label("Tags").fill("include, RCT")
    organize.get_by_role("button", name="Add tags").click()
    expect(status).to_have_text("Tagged 1 record with “include”, “RCT” (2 tags added).")
    expect(_results(page).first.locator('[data-role="labels"]')).to_have_text(
        "In: Included studies · Tags: include, RCT"
    )

    # The facets count them over the whole library, and filter by them.
    page.get_by_role("button", name="Clear", exact=True).click()
    expect(count).to_have_text("10 records")
    facets = page.get_by_test_id("facets")
    facets.get_by_role("button", name="Included studies (3)").click()
    expect(count).to_have_text("3 records")
    assert "collection" in _query(page)
    form = page.get_by_role("search", name="Library")
    expect(form.locator('select[name="collection"]')).to_have_value(_query(page)["collection"][0])
    screen = page.get_by_test_id("screen-these").get_by_role("link", name="Screen this collection")
    expect(screen).to_have_attribute(
        "href", f"/screening?collection={_query(page)['collection'][0]}"
    )
    titles = page.get_by_test_id("results").locator("h3").all_inner_texts()
    assert {first, second, TAURINE_TITLE} == set(titles)
    facets.get_by_role("button", name="RCT (1)").click()
    expect(count).to_have_text("1 record")
    assert _query(page)["tag"] == ["RCT"]

    # The open record: its collections and tags, a tag added and one taken off, a note.
    _results(page).first.get_by_role("link", name=TAURINE_TITLE).click()
    labels = page.get_by_test_id("record-labels")
    expect(labels.get_by_role("list", name="Collections").get_by_role("listitem")).to_have_text(
        ["Included studies\N{MULTIPLICATION SIGN}"]
    )
    labels.get_by_label("Add tags").fill("key paper")
    labels.get_by_role("button", name="Add", exact=True).last.click()
    expect(labels.get_by_test_id("record-labels-status")).to_have_text("Tagged with “key paper”.")
    tags = labels.get_by_role("list", name="Tags").get_by_role("listitem")
    expect(tags).to_have_count(3)
    labels.get_by_role("button", name="Remove the tag “include”").click()
    expect(labels.get_by_test_id("record-labels-status")).to_have_text("Removed the tag “include”.")
    expect(tags).to_have_count(2)
    note = labels.get_by_role("textbox", name="Note")
    note.fill("Reference intervals for Cavaliers; compare with our cohort.")
    labels.get_by_role("button", name="Save the note").click()
    expect(labels.get_by_test_id("record-labels-status")).to_have_text("Saved the note.")
    page.reload()
    expect(page.get_by_test_id("record-labels").get_by_role("textbox", name="Note")).to_have_value(
        "Reference intervals for Cavaliers; compare with our cohort."
    )
    axe = require_axe()
    assert axe_violations(page, axe) == []
    assert keyboard_walk(page, '[data-testid="detail"]') == []
    page.get_by_role("button", name="Back to the results").click()
    expect(_results(page).first.locator('[data-role="labels"]')).to_contain_text(
        "Tags: key paper, RCT · Note: Reference intervals for Cavaliers"
    )
    form.locator('select[name="has_note"]').select_option("With a note")
    form.get_by_label("Tag", exact=True).fill("")
    page.get_by_role("button", name="Search", exact=True).click()
    expect(count).to_have_text("1 record")
    assert _query(page)["has_note"] == ["true"]
    assert axe_violations(page, axe) == []
    assert keyboard_walk(page, ".library") == []

    # The collection: exported, renamed, deleted; its records stay.
    item = panel.get_by_role("listitem")
    with page.expect_download() as download_info:
        item.get_by_role("link", name="Export “Included studies” as RIS").click()
    saved = tmp_path / "collection.ris"
    download_info.value.save_as(saved)
    assert len(re.findall(r"^TY  - ", saved.read_text(encoding="utf-8"), re.M)) == 3
    item.get_by_role("button", name="Rename “Included studies”").click()
    item.get_by_label("New name for “Included studies”").fill("Screened")
    item.get_by_role("button", name="Save").click()
    expect(panel.get_by_test_id("collections-status")).to_have_text("Renamed to “Screened”.")
    expect(panel.get_by_role("listitem")).to_contain_text("Screened")

    page.goto("/library")
    expect(count).to_have_text("10 records")
    expect(page.get_by_test_id("facets")).to_contain_text("Screened (3)")
    page.screenshot(path=str(FINAL_SCREENSHOT), full_page=True)
    panel.get_by_role("button", name="Delete the collection “Screened”").click()
    dialog = page.get_by_test_id("confirm-delete-collection")
    expect(dialog).to_contain_text("“Screened” (3 records)")
    dialog.get_by_role("button", name="Delete the collection").click()
    expect(panel.get_by_test_id("collections-status")).to_have_text(
        "Deleted the collection “Screened”; its records stay in your library."
    )
    expect(panel.get_by_role("listitem")).to_have_count(0)
    expect(count).to_have_text("10 records")
    problems.assert_none()


def test_what_matches_nothing_offers_nothing_to_export(
    fresh_server: LiveServer, new_page: NewPage, problems: PageProblems
) -> None:
    page = new_page(fresh_server)
    page.goto("/library")
    _import(page)
    _search(page, "zebrafish")
    export = page.get_by_test_id("export")
    expect(export).to_contain_text("Nothing to export: no record matches this search.")
    expect(export.get_by_role("link", name="RIS", exact=True)).to_be_hidden()
    expect(page.get_by_test_id("screen-these")).to_be_hidden()  # nothing to screen either
    expect(
        page.get_by_test_id("organize").get_by_role("radio", name=re.compile("all"))
    ).to_be_disabled()

    # The publication type is a choice among those the library holds, with their counts.
    page.get_by_label("Search words or a question").fill("")
    types = page.get_by_label("Publication type")
    expect(types.locator("option")).to_have_text(
        ["Any", "Journal article (10)", "Article (9)", "Review (1)"]
    )
    types.select_option(label="Review (1)")
    page.get_by_role("button", name="Search", exact=True).click()
    expect(page.get_by_test_id("result-count")).to_have_text("1 record")

    # A type no record has (an old link): the search is not run, which is no failure, and
    # the export line says nothing of a search that was not made.
    page.goto("/library?publication_type=Reveiw")
    alert = page.get_by_test_id("notice").get_by_role("alert")
    expect(alert).to_contain_text("No record in your library has the publication type “Reveiw”.")
    expect(alert).to_contain_text("The types it holds: Review (1)")
    expect(alert).not_to_contain_text("failed")
    expect(export).to_be_hidden()
    problems.expect_failed_loads(422)
    problems.assert_none()
