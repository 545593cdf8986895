"""Merged duplicates on the Library page in a real browser: an import's summary says what
was merged, the merges are listed with what matched, Split undoes one, and Find duplicates
reports what it did; two records of one work are merged by hand from the selection."""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from tests.library.copies import BIBTEX, RIS
from tests.web.live import LiveServer, NewPage, PageProblems

pytestmark = pytest.mark.browser


def _import(page: Page, path: Path) -> None:
    page.get_by_label("File", exact=True).set_input_files(path)
    page.get_by_role("button", name="Import", exact=True).click()
    expect(page.get_by_test_id("import-summary")).to_contain_text(path.name)


def _tally(page: Page, field: str) -> str:
    return page.get_by_test_id("import-summary").locator(f'[data-field="{field}"]').inner_text()


def test_library_merges_split_and_find_duplicates(
    fresh_server: LiveServer, new_page: NewPage, problems: PageProblems, tmp_path: Path
) -> None:
    ris = tmp_path / "zotero.ris"
    ris.write_text(RIS, encoding="utf-8")
    bib = tmp_path / "zotero.bib"
    bib.write_text(BIBTEX, encoding="utf-8")
    page = new_page(fresh_server)
    page.goto("/library")
    duplicates = page.get_by_test_id("duplicates")
    expect(duplicates.get_by_test_id("merge-count")).to_have_text("No merged duplicates.")

    _import(page, ris)
    expect(page.get_by_test_id("result-count")).to_have_text("4 records")
    _import(page, bib)
    summary = page.get_by_test_id("import-summary")
    expect(summary.locator('[data-field="merged"]')).to_have_text("4")
    expect(summary.locator('[data-field="imported"]')).to_have_text("0")
    expect(summary).to_contain_text("Merged into records already in your library")
    expect(page.get_by_test_id("result-count")).to_have_text("4 records")

    merges = duplicates.get_by_test_id("merges").get_by_role("listitem")
    expect(merges).to_have_count(4)
    expect(duplicates.get_by_test_id("merge-count")).to_have_text("4 merged duplicates.")
    canagliflozin = merges.filter(has_text="Canagliflozin")
    expect(canagliflozin).to_contain_text("Matched on: same DOI")
    expect(canagliflozin).to_contain_text("from zotero.bib")

    canagliflozin.get_by_role("button", name="Split").click()
    expect(duplicates.get_by_test_id("duplicates-status")).to_contain_text(
        "is its own record again"
    )
    expect(merges).to_have_count(3)
    expect(page.get_by_test_id("result-count")).to_have_text("5 records")

    duplicates.get_by_role("button", name="Find duplicates in my library").click()
    expect(duplicates.get_by_test_id("duplicates-status")).to_have_text(
        "Compared 5 records: no duplicates found."
    )
    expect(page.get_by_test_id("result-count")).to_have_text("5 records")

    # The split pair is two records again: merged by hand, choosing the one to keep.
    merge_button = duplicates.get_by_role("button", name="Merge the selected records…")
    merge_button.click()
    expect(duplicates.get_by_test_id("duplicates-status")).to_contain_text(
        "Select two or more records of one work"
    )
    results = page.get_by_test_id("results")
    for box in results.get_by_role("checkbox", name="Canagliflozin", exact=False).all():
        box.check()
    merge_button.click()
    dialog = page.get_by_test_id("confirm-merge")
    expect(dialog).to_be_visible()
    expect(dialog.get_by_role("radio")).to_have_count(2)
    dialog.get_by_role("radio").nth(1).check()
    dialog.get_by_role("button", name="Merge", exact=True).click()
    expect(duplicates.get_by_test_id("duplicates-status")).to_contain_text("Merged 1 record into “")
    expect(page.get_by_test_id("result-count")).to_have_text("4 records")
    expect(merges).to_have_count(4)
    expect(merges.filter(has_text="Canagliflozin")).to_contain_text("Matched on: merged by hand")
    problems.assert_none()
