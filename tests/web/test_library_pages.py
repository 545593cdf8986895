"""The Library and Trials pages in a real browser: Debian's Chromium against a real uvicorn
server. Library files are real exports; ClinicalTrials.gov answers are built from real
study bodies of its API v2 and served through a mock transport (no network)."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest
from playwright.sync_api import Dialog, Locator, Page, expect

from tests.conftest import SHARED_DATA
from tests.web._checks import WIDTHS, overflow
from tests.web.live import LiveServer, NewPage, PageProblems, SourceStub, clean_settings, serve

pytestmark = pytest.mark.browser

SCREENSHOTS = Path("/tmp")
SCOPUS = SHARED_DATA / "exports" / "asysd_testthat" / "scopus.ris"
FIRST_TITLE = (
    "Development and Validation of a Robust and Straightforward LC-MS Method for Measuring "
    "Taurine in Whole Blood and Plasma of Dogs and Reference Intervals Calculation"
)
FIRST_DOI = "10.3390/ani15010003"
REVIEW_DOI = "10.1016/j.tvjl.2024.106241"  # the file's one review (M3  - Review), of 2024
STUDIES_DIR = SHARED_DATA / "api_fixtures" / "clinicaltrials_v2_aact"
STUDIES_URL = "https://clinicaltrials.gov/api/v2/studies"

SCRIPT_TITLE = "<img src=x onerror=alert(1)>"
SCRIPT_ABSTRACT = "<img src=y onerror=\"window.__xss='abstract'\"><script>window.__xss='s'</script>"


def _span(first: int, last: int) -> str:
    """A range of a results count, "first to last" joined by an en dash."""
    return f"{first}\N{EN DASH}{last}"


def _ris_record_count(path: Path) -> int:
    return sum(1 for line in path.read_text(encoding="utf-8-sig").splitlines() if line[:2] == "ER")


def _ris_years(path: Path) -> list[int]:
    return [
        int(line[6:10])
        for line in path.read_text(encoding="utf-8-sig").splitlines()
        if line.startswith("PY  - ")
    ]


# --- page helpers --------------------------------------------------------------------


def _import(page: Page, path: Path) -> Locator:
    page.get_by_label("File", exact=True).set_input_files(path)
    page.get_by_role("button", name="Import", exact=True).click()
    return page.get_by_test_id("import-summary")


def _tally(summary: Locator, field: str) -> Locator:
    return summary.locator(f'[data-field="{field}"]')


def _results(page: Page) -> Locator:
    return page.get_by_test_id("results").get_by_role("listitem")


def _result_titles(page: Page) -> list[str]:
    return page.get_by_test_id("results").locator("h3").all_inner_texts()


def _detail(page: Page) -> Locator:
    return page.get_by_test_id("detail")


def _field(scope: Locator, name: str) -> Locator:
    return scope.locator(f'[data-field="{name}"]')


def _query(page: Page) -> dict[str, list[str]]:
    return parse_qs(urlsplit(page.url).query)


def _no_dialogs(page: Page) -> list[str]:
    seen: list[str] = []

    def record(dialog: Dialog) -> None:
        seen.append(dialog.message)
        dialog.dismiss()

    page.on("dialog", record)
    return seen


# --- Library ---------------------------------------------------------------------------


def test_library_import_search_detail_and_back(
    fresh_server: LiveServer, new_page: NewPage, problems: PageProblems
) -> None:
    total = _ris_record_count(SCOPUS)
    page = new_page(fresh_server)
    page.goto("/")
    page.get_by_role("navigation", name="Main").get_by_role("link", name="Library").click()
    expect(page).to_have_title("Library · ScholarStream")
    current = page.get_by_role("navigation", name="Main").locator("[aria-current=page]")
    expect(current).to_have_text("Library")
    expect(page.get_by_test_id("notice")).to_have_text(
        "Your library is empty. Import a file above to start."
    )
    # Nothing to search, export, select or tag yet: only the import and what to do.
    select_page = page.get_by_role("button", name="Select this page")
    expect(select_page).to_be_hidden()
    expect(page.get_by_role("search", name="Library")).to_be_hidden()
    # On a phone the file picker stays inside its card, and the page never scrolls sideways.
    page.set_viewport_size({"width": WIDTHS["mobile"][0], "height": WIDTHS["mobile"][1]})
    picker = page.get_by_label("File", exact=True).bounding_box()
    card = page.locator("section.panel", has=page.get_by_label("File", exact=True)).bounding_box()
    assert picker is not None and card is not None
    assert picker["x"] + picker["width"] <= card["x"] + card["width"]
    assert overflow(page) is None, overflow(page)
    page.set_viewport_size({"width": 1280, "height": 800})  # the tests' own window

    summary = _import(page, SCOPUS)
    expect(summary).to_contain_text("scopus.ris (read as RIS)")
    expect(select_page).to_be_visible()
    expect(_tally(summary, "imported")).to_have_text(str(total))
    expect(_tally(summary, "merged")).to_have_text("0")
    expect(_tally(summary, "in_file_duplicates")).to_have_text("0")
    expect(_tally(summary, "already_present")).to_have_text("0")
    expect(_tally(summary, "skipped")).to_have_text("0")
    expect(page.get_by_test_id("result-count")).to_have_text(f"{total} records")
    expect(_results(page)).to_have_count(total)

    # The same file again: everything is already there.
    summary = _import(page, SCOPUS)
    expect(_tally(summary, "already_present")).to_have_text(str(total))
    expect(_tally(summary, "merged")).to_have_text("0")
    expect(_tally(summary, "imported")).to_have_text("0")
    expect(page.get_by_test_id("result-count")).to_have_text(f"{total} records")

    page.get_by_label("Search words").fill("taurine")
    page.get_by_role("button", name="Search", exact=True).click()
    expect(page.get_by_test_id("result-count")).to_have_text("1 record")
    assert _query(page)["q"] == ["taurine"]
    item = _results(page).first
    expect(item.get_by_role("heading")).to_have_text(FIRST_TITLE)
    expect(item).to_contain_text("Furlanello, T.")
    expect(item).to_contain_text(f"doi:{FIRST_DOI}")

    item.get_by_role("link", name=FIRST_TITLE).click()
    detail = _detail(page)
    _check_first_record(detail)
    expect(page.get_by_test_id("results-section")).to_be_hidden()
    record_id = _query(page)["record"][0]
    assert _query(page)["q"] == ["taurine"]
    expect(page.get_by_role("heading", level=2, name=FIRST_TITLE)).to_be_focused()
    page.screenshot(path=str(SCREENSHOTS / "library-detail.png"), full_page=True)

    # The URL holds the open record: a reload shows it again.
    page.reload()
    _check_first_record(_detail(page))
    expect(page.get_by_label("Search words")).to_have_value("taurine")

    # "Back to the results" (from a reloaded record) and the browser's back button.
    _detail(page).get_by_role("button", name="Back to the results").click()
    expect(_results(page)).to_have_count(1)
    expect(_detail(page)).to_be_hidden()
    assert "record" not in _query(page)
    _results(page).first.get_by_role("link").click()
    expect(_field(_detail(page), "title")).to_have_text(FIRST_TITLE)
    page.go_back()
    expect(_detail(page)).to_be_hidden()
    expect(_results(page)).to_have_count(1)
    expect(page.get_by_label("Search words")).to_have_value("taurine")

    # A search with no match says so.
    page.get_by_label("Search words").fill("zebrafish")
    page.get_by_label("Search words").press("Enter")
    expect(page.get_by_test_id("notice")).to_contain_text("No records match this search.")
    expect(_results(page)).to_have_count(0)

    served = page.request.get(f"/api/v1/library/records/{record_id}")
    assert served.json()["record"]["title"] == FIRST_TITLE
    problems.assert_none()


def test_library_exports_a_search_or_the_records_ticked(
    fresh_server: LiveServer, new_page: NewPage, problems: PageProblems, tmp_path: Path
) -> None:
    page = new_page(fresh_server)
    page.goto("/library?limit=4")
    expect(_tally(_import(page, SCOPUS), "imported")).to_have_text(str(_ris_record_count(SCOPUS)))

    # The export follows the search words too: the taurine records, best first.
    page.get_by_label("Search words or a question").fill("taurine")
    page.get_by_role("button", name="Search", exact=True).click()
    expect(page.get_by_test_id("result-count")).to_have_text(re.compile(r"records?$"))
    found = page.request.get("/api/v1/library/records?q=taurine&limit=100").json()
    with page.expect_download() as download_info:
        page.get_by_test_id("export").get_by_role("link", name="RIS", exact=True).click()
    searched = tmp_path / "searched.ris"
    download_info.value.save_as(searched)
    assert len(re.findall(r"^TY  - ", searched.read_text(encoding="utf-8"), re.M)) == found["total"]

    # "Screen these", by keyboard: the Screening page's form filled in with this search.
    screen = page.get_by_test_id("screen-these").get_by_role("link", name="Screen these records")
    expect(screen).to_have_attribute("href", "/screening?query=taurine")
    screen.focus()
    page.keyboard.press("Enter")
    expect(page).to_have_url(re.compile(r"/screening\?query=taurine$"))
    expect(page.get_by_role("radio", name="From your library")).to_be_checked()
    expect(page.get_by_label("Library search words")).to_have_value("taurine")

    # Tick two records of the whole library, across two pages, and export just those.
    page.goto("/library?limit=4")
    expect(page.get_by_test_id("result-count")).to_contain_text(f"Showing {_span(1, 4)}")
    selection = page.get_by_test_id("export-selection")
    expect(selection.get_by_role("link", name="RIS", exact=True)).to_be_hidden()
    first = _result_titles(page)[0]
    organize = page.get_by_test_id("organize")
    expect(organize.get_by_role("radio", name=re.compile("of this search"))).to_be_checked()
    _results(page).first.get_by_role("checkbox").check()
    # "Collect or tag" follows the selection: the ticked records, then all results again.
    expect(organize.get_by_role("radio", name="the selected record")).to_be_checked()
    page.get_by_test_id("pager").get_by_role("button", name="Next page").click()
    expect(page.get_by_test_id("result-count")).to_contain_text(f"Showing {_span(5, 8)}")
    second = _result_titles(page)[1]
    _results(page).nth(1).get_by_role("checkbox").check()
    expect(selection).to_contain_text("Export the 2 selected records")
    with page.expect_download() as download_info:
        selection.get_by_role("link", name="RIS", exact=True).click()
    chosen = tmp_path / "chosen.ris"
    download_info.value.save_as(chosen)
    text = chosen.read_text(encoding="utf-8")
    assert len(re.findall(r"^TY  - ", text, re.M)) == 2
    assert first[:40] in text and second[:40] in text

    selection.get_by_role("button", name="Clear the selection").click()
    expect(selection.get_by_role("link", name="RIS", exact=True)).to_be_hidden()
    expect(_results(page).nth(1).get_by_role("checkbox")).not_to_be_checked()
    expect(organize.get_by_role("radio", name=re.compile("of this search"))).to_be_checked()


def _check_first_record(detail: Locator) -> None:
    expect(detail).to_be_visible()
    expect(_field(detail, "title")).to_have_text(FIRST_TITLE)
    authors = _field(detail, "authors")
    expect(authors).to_contain_text("Furlanello, T.; Masti, R.")
    expect(_field(detail, "venue")).to_have_text("Animals 15(1)")
    expect(_field(detail, "year")).to_have_text("2025")
    doi = detail.get_by_role("link", name=FIRST_DOI)
    expect(doi).to_have_attribute("href", f"https://doi.org/{FIRST_DOI}")
    expect(_field(detail, "ids")).to_contain_text(f"DOI {FIRST_DOI}")
    expect(detail.locator('[data-section="abstract"]')).to_contain_text(
        "Several studies have highlighted the essential role of taurine"
    )
    keywords = _field(detail, "keywords").get_by_role("listitem")
    expect(keywords.filter(has_text=re.compile(r"^taurine$"))).to_have_count(1)
    expect(_field(detail, "publication_types")).to_contain_text("Article")
    expect(_field(detail, "provenance")).to_contain_text("Imported from scopus.ris")
    expect(_field(detail, "provenance")).to_contain_text("Source: RIS")  # not its id, "ris"


def test_library_year_filter_paging_and_export(
    fresh_server: LiveServer, new_page: NewPage, problems: PageProblems, tmp_path: Path
) -> None:
    total = _ris_record_count(SCOPUS)
    years = _ris_years(SCOPUS)
    in_2025 = years.count(2025)
    assert 0 < in_2025 < total  # the filter must make a difference
    page = new_page(fresh_server)
    page.goto("/library?limit=4")
    expect(_tally(_import(page, SCOPUS), "imported")).to_have_text(str(total))

    # Paging, four a page.
    count = page.get_by_test_id("result-count")
    pager = page.get_by_test_id("pager")
    expect(count).to_have_text(f"Showing {_span(1, 4)} of {total} records")
    expect(pager.get_by_role("button", name="Previous page")).to_be_disabled()
    first_page = _result_titles(page)
    pager.get_by_role("button", name="Next page").click()
    expect(count).to_have_text(f"Showing {_span(5, 8)} of {total} records")
    assert _query(page)["offset"] == ["4"]
    second_page = _result_titles(page)
    assert len(second_page) == 4
    assert not set(first_page) & set(second_page)
    pager.get_by_role("button", name="Next page").click()
    expect(count).to_have_text(f"Showing {_span(9, total)} of {total} records")
    expect(pager.get_by_role("button", name="Next page")).to_be_disabled()
    expect(pager).to_contain_text(f"Page 3 of {-(-total // 4)}")
    pager.get_by_role("button", name="Previous page").click()
    expect(count).to_have_text(f"Showing {_span(5, 8)} of {total} records")
    assert _result_titles(page) == second_page
    page.go_back()  # back to page 3, then page 2
    expect(count).to_have_text(f"Showing {_span(9, total)} of {total} records")
    page.go_back()
    expect(count).to_have_text(f"Showing {_span(5, 8)} of {total} records")

    # A year filter, which also starts again at the first page.
    page.get_by_label("Year from").fill("2025")
    page.get_by_label("Year to").fill("2025")
    page.get_by_role("button", name="Search", exact=True).click()
    expect(count).to_have_text(
        f"{in_2025} records" if in_2025 <= 4 else f"Showing {_span(1, 4)} of {in_2025} records"
    )
    assert _query(page)["year_from"] == ["2025"]
    assert "offset" not in _query(page)
    listed = page.request.get("/api/v1/library/records?year_from=2025&year_to=2025&limit=100")
    assert {i["record"]["year"] for i in listed.json()["items"]} == {2025}
    expect(_results(page).first).to_contain_text("2025")
    page.screenshot(path=str(SCREENSHOTS / "library.png"), full_page=True)

    # Export honours the year filter: only the 2025 records are in the file.
    export = page.get_by_test_id("export")
    with page.expect_download() as download_info:
        export.get_by_role("link", name="RIS", exact=True).click()
    download = download_info.value
    assert download.suggested_filename == "scholarstream-library.ris"
    saved = tmp_path / download.suggested_filename
    download.save_as(saved)
    text = saved.read_text(encoding="utf-8")
    assert len(re.findall(r"^TY  - ", text, flags=re.MULTILINE)) == in_2025
    assert FIRST_DOI in text
    assert FIRST_TITLE in text
    assert REVIEW_DOI not in text  # a 2024 record of the file

    with page.expect_download() as download_info:
        export.get_by_role("link", name="BibTeX", exact=True).click()
    bibtex = tmp_path / "export.bib"
    download_info.value.save_as(bibtex)
    assert len(re.findall(r"^@\w+\{", bibtex.read_text(encoding="utf-8"), re.MULTILINE)) == in_2025

    # The publication type facet, counted over what the search finds, narrows it to the
    # one review; then an export of that one record.
    page.get_by_label("Year from").fill("")
    page.get_by_label("Year to").fill("")
    page.get_by_role("button", name="Search", exact=True).click()
    expect(count).to_contain_text(f"of {total} records")
    facets = page.get_by_test_id("facets")
    expect(facets.get_by_role("button", name=f"2025 ({in_2025})", exact=True)).to_be_visible()
    facets.get_by_role("button", name="Review (1)", exact=True).click()
    expect(count).to_have_text("1 record")
    expect(page.get_by_label("Publication type")).to_have_value("review")
    expect(_results(page).first).to_contain_text(REVIEW_DOI)
    assert _query(page) == {"publication_type": ["review"], "limit": ["4"]}
    with page.expect_download() as download_info:
        export.get_by_role("link", name="RIS", exact=True).click()
    reviews = tmp_path / "reviews.ris"
    download_info.value.save_as(reviews)
    text = reviews.read_text(encoding="utf-8")
    assert len(re.findall(r"^TY  - ", text, flags=re.MULTILINE)) == 1
    assert REVIEW_DOI in text

    # A reversed range is swapped in the page, which says so: never sent to be refused.
    page.get_by_label("Publication type").select_option("")
    page.get_by_label("Year from").fill("2025")
    page.get_by_label("Year to").fill("2024")
    page.get_by_role("button", name="Search", exact=True).click()
    notice = page.get_by_test_id("notice")
    expect(notice).to_contain_text(
        "The first year (2025) was after the last (2024): swapped them, 2024 to 2025."
    )
    expect(notice.get_by_role("alert")).to_have_count(0)
    expect(count).to_have_text(f"Showing {_span(1, 4)} of {total} records")
    expect(page.get_by_label("Year from")).to_have_value("2024")
    assert _query(page)["year_from"] == ["2024"] and _query(page)["year_to"] == ["2025"]
    problems.assert_none()  # no 422 in the console


def test_library_delete_asks_first(
    fresh_server: LiveServer, new_page: NewPage, problems: PageProblems
) -> None:
    total = _ris_record_count(SCOPUS)
    page = new_page(fresh_server)
    page.goto("/library")
    _import(page, SCOPUS)
    expect(_results(page)).to_have_count(total)

    page.get_by_label("Search words").fill("taurine")
    page.get_by_label("Search words").press("Enter")
    expect(page.get_by_test_id("result-count")).to_have_text("1 record")
    _results(page).get_by_role("link", name=FIRST_TITLE).click()
    record_id = _query(page)["record"][0]
    dialog = page.get_by_test_id("confirm-delete")

    page.get_by_role("button", name="Delete from library…").click()
    expect(dialog).to_be_visible()
    expect(dialog).to_contain_text(FIRST_TITLE)
    dialog.get_by_role("button", name="Cancel").click()
    expect(dialog).to_be_hidden()
    expect(_field(_detail(page), "title")).to_have_text(FIRST_TITLE)
    assert page.request.get(f"/api/v1/library/records/{record_id}").ok

    page.get_by_role("button", name="Delete from library…").click()
    page.screenshot(path=str(SCREENSHOTS / "library-delete.png"))
    dialog.get_by_role("button", name="Delete", exact=True).click()
    notice = page.get_by_test_id("notice")
    expect(notice.locator(".done")).to_have_text(f"Deleted “{FIRST_TITLE}” from your library.")
    # Back to the search it came from, which has nothing left.
    expect(notice.locator(".empty")).to_have_text(
        "No records match this search. Try fewer words or wider filters."
    )
    expect(_detail(page)).to_be_hidden()
    assert _query(page) == {"q": ["taurine"]}
    assert page.request.get(f"/api/v1/library/records/{record_id}").status == 404

    page.get_by_role("button", name="Clear").click()
    expect(page.get_by_test_id("result-count")).to_have_text(f"{total - 1} records")
    expect(page.get_by_label("Search words")).to_have_value("")
    assert FIRST_TITLE not in _result_titles(page)
    problems.assert_none()


def test_library_import_reports_skipped_records_and_refused_files(
    fresh_server: LiveServer, new_page: NewPage, problems: PageProblems, tmp_path: Path
) -> None:
    malformed = tmp_path / "malformed.ris"
    malformed.write_text(
        "TY  - JOUR\nTI  - Taurine in cats\nAU  - Smith, Jane\nPY  - 2021\nER  - \n\n"
        "TY  - JOUR\nAU  - Nobody, Titleless\nPY  - 2022\nER  - \n\n"
        "TY  - JOUR\nTI  - Taurine in dogs\nPY  - 2023\nER  - \n",
        encoding="utf-8",
    )
    page = new_page(fresh_server)
    page.goto("/library")
    summary = _import(page, malformed)
    expect(_tally(summary, "imported")).to_have_text("2")
    expect(_tally(summary, "skipped")).to_have_text("1")
    problem_items = summary.get_by_test_id("import-problems").get_by_role("listitem")
    expect(problem_items).to_have_count(1)
    expect(problem_items.first).to_contain_text(
        "Record 2 (line 7): the record has no title; skipped"
    )
    expect(_results(page)).to_have_count(2)
    page.screenshot(path=str(SCREENSHOTS / "library-import.png"), full_page=True)

    unknown = tmp_path / "notes.odt"
    unknown.write_text("Some notes, not a bibliography.\n", encoding="utf-8")
    page.get_by_label("File", exact=True).set_input_files(unknown)
    page.get_by_role("button", name="Import", exact=True).click()
    alert = page.get_by_test_id("import-status").get_by_role("alert")
    message = alert.locator(".problem-message")
    expect(message).to_contain_text("Not imported: notes.odt is in an unrecognised format")
    expect(message).to_contain_text("RIS (.ris, .txt)")
    assert message.inner_text().count("notes.odt") == 1  # the file is named once
    expect(alert.locator(".problem-hint")).to_contain_text("choose its format: BibTeX, CSV")
    expect(alert).to_have_attribute("data-code", "invalid_input")
    problems.expect_failed_loads(422)
    problems.assert_none()


def test_library_shows_script_like_text_as_text(
    fresh_server: LiveServer, new_page: NewPage, problems: PageProblems, tmp_path: Path
) -> None:
    hostile = tmp_path / "hostile.ris"
    hostile.write_text(
        f"TY  - JOUR\nTI  - {SCRIPT_TITLE}\nAU  - <b>Mallory</b>\nPY  - 2024\n"
        f"AB  - {SCRIPT_ABSTRACT}\nKW  - <script>window.__xss='kw'</script>\n"
        "UR  - javascript:window.__xss='link'\nER  - \n",
        encoding="utf-8",
    )
    page = new_page(fresh_server)
    dialogs = _no_dialogs(page)
    page.goto("/library")
    expect(_tally(_import(page, hostile), "imported")).to_have_text("1")

    expect(_results(page).first.get_by_role("heading")).to_have_text(SCRIPT_TITLE)
    _results(page).first.get_by_role("link").click()
    detail = _detail(page)
    expect(_field(detail, "title")).to_have_text(SCRIPT_TITLE)
    expect(_field(detail, "authors")).to_have_text("<b>Mallory</b>")
    expect(detail.locator('[data-section="abstract"] p')).to_have_text(SCRIPT_ABSTRACT)
    # No element was made of the record's text, no script ran, no link says javascript:.
    main = page.locator("main")
    expect(main.locator("img")).to_have_count(0)
    expect(main.locator("b")).to_have_count(0)
    expect(main.locator("script")).to_have_count(1)  # the page's own module
    expect(main.locator('a[href^="javascript:"]')).to_have_count(0)
    assert page.evaluate("() => window.__xss") is None
    assert dialogs == []
    problems.assert_none()


# --- Trials ----------------------------------------------------------------------------


def _studies() -> dict[str, object]:
    """The real study bodies by NCT id (two files of the set hold the same study)."""
    studies: dict[str, object] = {}
    for path in sorted(STUDIES_DIR.glob("NCT*.json")):
        body = json.loads(path.read_text(encoding="utf-8"))
        studies[body["protocolSection"]["identificationModule"]["nctId"]] = body
    return studies


STUDIES = _studies()
FIRST_PAGE = ["NCT02210780", "NCT03418623", "NCT00763412", "NCT02552212"]
SECOND_PAGE = ["NCT00973089", "NCT06171568"]
NEXT_TOKEN = "NF0g5JGBlPMuwQY"
PHASE2_CLAUSE = re.compile(r"AREA\[Phase\]\(?PHASE2\)?")


def _title(nct_id: str) -> str:
    body = STUDIES[nct_id]
    assert isinstance(body, dict)
    title: str = body["protocolSection"]["identificationModule"]["briefTitle"]
    return title


def _paged_studies(request: httpx.Request) -> httpx.Response:
    """ClinicalTrials.gov's /studies as two pages of real studies."""
    assert str(request.url).startswith(STUDIES_URL)
    token = request.url.params.get("pageToken")
    ids, next_token = (SECOND_PAGE, None) if token == NEXT_TOKEN else (FIRST_PAGE, NEXT_TOKEN)
    body: dict[str, object] = {
        "studies": [STUDIES[nct_id] for nct_id in ids],
        "totalCount": len(FIRST_PAGE) + len(SECOND_PAGE),
    }
    if next_token:
        body["nextPageToken"] = next_token
    return httpx.Response(200, json=body)


def _trial_results(page: Page) -> list[str]:
    return page.get_by_test_id("results").locator('[data-field="nct_id"]').all_inner_texts()


def _search_trials(page: Page, **fields: str) -> None:
    for label, value in fields.items():
        control = page.get_by_label(label.capitalize())
        if control.evaluate("el => el.tagName") == "SELECT":
            control.select_option(label=value)
        else:
            control.fill(value)
    page.get_by_role("button", name="Search trials").click()


def test_trials_search_sends_the_filters_and_shows_real_studies(
    stubbed_server: LiveServer,
    source_stub: SourceStub,
    new_page: NewPage,
    problems: PageProblems,
) -> None:
    source_stub.handler = _paged_studies
    page = new_page(stubbed_server)
    page.goto("/trials")
    expect(page).to_have_title("Trials · ScholarStream")
    expect(page.get_by_role("navigation", name="Main").locator("[aria-current=page]")).to_have_text(
        "Trials"
    )
    _search_trials(
        page,
        condition="atopic dermatitis",
        intervention="dupilumab",
        phase="Phase 2",
        status="Completed",
        sponsor="Regeneron",
    )
    count = page.get_by_test_id("result-count")
    expect(count).to_have_text(f"Showing {_span(1, 4)} of 6 studies")
    assert _trial_results(page) == FIRST_PAGE

    sent = source_stub.sent()
    assert len(sent) == 1
    params = sent[0].url.params
    assert str(sent[0].url).startswith(STUDIES_URL)
    assert params["query.cond"] == "atopic dermatitis"
    assert params["query.intr"] == "dupilumab"
    assert params["query.spons"] == "Regeneron"
    assert params["filter.overallStatus"] == "COMPLETED"
    assert PHASE2_CLAUSE.fullmatch(params["filter.advanced"])
    assert "pageToken" not in params
    assert _query(page) == {
        "condition": ["atopic dermatitis"],
        "intervention": ["dupilumab"],
        "sponsor": ["Regeneron"],
        "phase": ["PHASE2"],
        "status": ["COMPLETED"],
    }

    first = page.get_by_test_id("results").get_by_role("listitem").first
    expect(first.get_by_role("heading")).to_have_text(_title("NCT02210780"))
    expect(first).to_contain_text("Completed")
    expect(first).to_contain_text("Phase 2")
    expect(first).to_contain_text("Conditions: Atopic Dermatitis")
    expect(first).to_contain_text("Sponsor: Regeneron Pharmaceuticals")
    expect(first).to_contain_text("Start: 2014-08-05")
    page.screenshot(path=str(SCREENSHOTS / "trials.png"), full_page=True)

    # The study's detail, from the page already fetched.
    first.get_by_role("link", name=_title("NCT02210780")).click()
    detail = _detail(page)
    expect(_field(detail, "title")).to_have_text(_title("NCT02210780"))
    expect(_field(detail, "interventions")).to_contain_text("Drug: Dupilumab")
    expect(_field(detail, "primary_outcomes")).to_contain_text(
        "Percentage of Participants With a Positive Response (≥4-Fold Increase) to Tetanus Toxoid"
    )
    expect(_field(detail, "primary_outcomes")).to_contain_text("time frame: Week 16")
    expect(_field(detail, "enrollment")).to_have_text("194")
    expect(_field(detail, "start_date")).to_have_text("2014-08-05")
    expect(_field(detail, "completion_date")).to_have_text("2015-09-15")
    expect(_field(detail, "collaborators")).to_have_text("Sanofi")
    expect(_field(detail, "sponsor")).to_have_text("Regeneron Pharmaceuticals")
    expect(detail.get_by_role("link", name="NCT02210780 on ClinicalTrials.gov")).to_have_attribute(
        "href", "https://clinicaltrials.gov/study/NCT02210780"
    )
    expect(detail.locator('[data-section="mesh_terms"]')).to_contain_text("Dermatitis, Atopic")
    assert _query(page)["study"] == ["NCT02210780"]
    page.screenshot(path=str(SCREENSHOTS / "trials-detail.png"), full_page=True)
    assert len(source_stub.sent()) == 1
    detail.get_by_role("button", name="Back to the results").click()
    expect(detail).to_be_hidden()
    assert _trial_results(page) == FIRST_PAGE
    assert len(source_stub.sent()) == 1  # reading a study and coming back asks nothing

    # The next page goes by the source's cursor.
    pager = page.get_by_test_id("pager")
    pager.get_by_role("button", name="Next page").click()
    expect(count).to_have_text(f"Showing {_span(5, 6)} of 6 studies")
    assert _trial_results(page) == SECOND_PAGE
    expect(pager).to_contain_text("Page 2")
    expect(pager.get_by_role("button", name="Next page")).to_be_disabled()
    second = source_stub.sent()[-1].url.params
    assert second["pageToken"] == NEXT_TOKEN
    assert second["query.cond"] == "atopic dermatitis"
    assert PHASE2_CLAUSE.fullmatch(second["filter.advanced"])
    assert _query(page)["page_token"] == [NEXT_TOKEN]

    # Reload keeps the search and the page; "Previous page" goes back to the first.
    page.reload()
    expect(count).to_have_text(f"Showing {_span(5, 6)} of 6 studies")
    expect(page.get_by_label("Condition")).to_have_value("atopic dermatitis")
    expect(page.get_by_label("Phase")).to_have_value("PHASE2")
    pager.get_by_role("button", name="Previous page").click()
    expect(count).to_have_text(f"Showing {_span(1, 4)} of 6 studies")
    assert _trial_results(page) == FIRST_PAGE
    assert "pageToken" not in source_stub.sent()[-1].url.params
    problems.assert_none()


def test_trials_open_study_from_the_url(
    stubbed_server: LiveServer,
    source_stub: SourceStub,
    new_page: NewPage,
    problems: PageProblems,
) -> None:
    source_stub.handler = _paged_studies
    page = new_page(stubbed_server)
    page.goto("/trials?q=certolizumab&status=COMPLETED&study=NCT02552212")
    detail = _detail(page)
    expect(_field(detail, "title")).to_have_text(_title("NCT02552212"))
    expect(_field(detail, "phases")).to_have_text("Phase 3")
    expect(_field(detail, "enrollment")).to_have_text("317")
    expect(_field(detail, "interventions")).to_contain_text("Biological: Certolizumab Pegol")
    expect(_field(detail, "primary_outcomes").get_by_role("listitem")).to_have_count(11)
    params = source_stub.sent()[0].url.params
    assert params["query.term"] == "certolizumab"
    assert params["filter.overallStatus"] == "COMPLETED"
    expect(page.get_by_label("Other terms")).to_have_value("certolizumab")
    problems.assert_none()


@pytest.mark.parametrize(
    ("answer", "status", "code", "upstream"),
    [
        (
            lambda _: httpx.Response(503, headers={"Retry-After": "3600"}, text="down"),
            503,
            "source_unavailable",
            "HTTP 503",
        ),
        (lambda _: httpx.Response(401, text="no"), 502, "source_credentials", "HTTP 401"),
    ],
    ids=["unavailable", "refused"],
)
def test_trials_show_the_source_error(
    stubbed_server: LiveServer,
    source_stub: SourceStub,
    new_page: NewPage,
    problems: PageProblems,
    answer: Callable[[httpx.Request], httpx.Response],
    status: int,
    code: str,
    upstream: str,
) -> None:
    source_stub.handler = answer
    page = new_page(stubbed_server)
    page.goto("/trials")
    _search_trials(page, condition="asthma")
    alert = page.get_by_test_id("notice").get_by_role("alert")
    expect(alert).to_have_attribute("data-code", code)
    expect(page.get_by_test_id("results").get_by_role("listitem")).to_have_count(0)
    assert len(source_stub.sent()) == 1

    # What the page shows is the API's own message and hint.
    error = page.request.get(
        "/api/v1/sources/clinicaltrials/search?q=asthma&filter=condition:asthma"
    )
    assert error.status == status
    body = error.json()
    assert body["code"] == code
    assert upstream in body["message"]
    assert body["hint"]
    expect(alert.locator(".problem-message")).to_have_text(f"The search failed. {body['message']}")
    expect(alert.locator(".problem-hint")).to_have_text(body["hint"])
    expect(alert.locator(".problem-id")).to_contain_text("Request id: ")
    if code == "source_unavailable":
        page.screenshot(path=str(SCREENSHOTS / "trials-error.png"), full_page=True)
    problems.expect_failed_loads(status)
    problems.assert_none()


def test_trials_need_a_term_before_asking_the_source(
    stubbed_server: LiveServer,
    source_stub: SourceStub,
    new_page: NewPage,
    problems: PageProblems,
) -> None:
    page = new_page(stubbed_server)
    page.goto("/trials")
    notice = page.get_by_test_id("notice")
    expect(notice).to_contain_text("Search by condition, intervention, sponsor or any terms")
    _search_trials(page, phase="Phase 3")
    expect(notice).to_contain_text(
        "Enter a condition, an intervention, a sponsor or other terms to search with."
    )
    assert source_stub.sent() == []
    problems.assert_none()


@pytest.mark.parametrize("path", ["/library", "/trials"])
def test_pages_need_a_login_in_multi_user_mode(
    multi_user_server: LiveServer, new_page: NewPage, problems: PageProblems, path: str
) -> None:
    page = new_page(multi_user_server)
    page.goto(f"{path}?q=taurine")
    expect(page).to_have_url(re.compile(rf"/login\?next={re.escape(path)}%3Fq%3Dtaurine$"))
    expect(page.get_by_label("Username")).to_be_visible()
    problems.assert_none()


def test_library_page_shows_the_semantic_index_and_finds_by_meaning(
    tmp_path: Path, new_page: NewPage, problems: PageProblems
) -> None:
    settings = clean_settings(tmp_path / "data", semantic={"enabled": True})
    with serve(settings) as server:
        page = new_page(server)
        page.goto("/library")
        expect(_import(page, SCOPUS)).to_contain_text("scopus.ris")
        status = page.get_by_test_id("semantic-status")
        expect(status).to_have_text(
            "Search ranks by words and meaning (10 of 10 records indexed).", timeout=30_000
        )

        page.get_by_label("Search words or a question").fill("young dogs with viral gut infection")
        page.get_by_role("button", name="Search", exact=True).click()
        expect(_results(page).first).to_contain_text("puppies with parvoviral enteritis")

        # Records without the words are listed after those with them, marked, and taken by
        # an export only when asked.
        page.get_by_label("Search words or a question").fill("sepsis in pups")
        page.get_by_role("button", name="Search", exact=True).click()
        count = page.get_by_test_id("result-count")
        expect(count).to_have_text(
            "4 records: 1 has one or more of your words, 3 related by meaning after them"
        )
        expect(_results(page).first).to_contain_text("puppies with parvoviral enteritis")
        related = page.get_by_test_id("results").locator('[data-match="meaning"]')
        expect(related).to_have_count(3)
        expect(related.first.get_by_test_id("related-heading")).to_have_text(
            "Related by meaning: these records do not have your search words."
        )
        expect(related.locator(".related-badge")).to_have_count(3)
        export = page.get_by_test_id("export")
        expect(export).to_contain_text("Export the 1 record with your words, best first:")
        export.get_by_label("and the 3 records related by meaning").check()
        expect(export).to_contain_text("Export the 4 records of this search, best first:")
        with page.expect_download() as download_info:
            export.get_by_role("link", name="RIS", exact=True).click()
        saved = tmp_path / "related.ris"
        download_info.value.save_as(saved)
        assert len(re.findall(r"^TY  - ", saved.read_text(encoding="utf-8"), re.M)) == 4
    problems.assert_none()


def test_library_year_facet_says_what_it_does_not_show(
    fresh_server: LiveServer, new_page: NewPage, problems: PageProblems, tmp_path: Path
) -> None:
    years = range(2008, 2023)  # 15 years, more than the row shows at first
    spread = tmp_path / "spread.ris"
    spread.write_text(
        "".join(
            f"TY  - JOUR\nTI  - Syringomyelia in dogs, a study of {year}\nAU  - Doe, J.\n"
            f"PY  - {year}\nER  - \n\n"
            for year in years
        ),
        encoding="utf-8",
    )
    page = new_page(fresh_server)
    page.goto("/library")
    expect(_tally(_import(page, spread), "imported")).to_have_text(str(len(years)))
    row = page.get_by_test_id("facets").locator('[data-role="years"]')
    chips = row.get_by_role("button", name=re.compile(r"^\d{4} \(1\)$"))
    expect(chips).to_have_count(12)
    more = row.get_by_role("button", name="show 3 more years")
    more.click()
    expect(chips).to_have_count(len(years))
    expect(more).to_have_count(0)
    problems.assert_none()
