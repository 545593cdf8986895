"""AI columns on the Library page in a real browser (Debian's Chromium against a real
uvicorn server): add columns, see each row's value with its reason, sort and filter by them,
get them from the cache after a reload, remove one. And the page's side of the chat: the
context it registers describes the rows on screen, its Accept handlers fill the search box,
apply filters and add AI columns. The model is scripted (a pydantic-ai ``FunctionModel``)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from playwright.sync_api import Locator, Page, expect

from scholarstream.chat.core import ChatContext
from tests.ai_columns.judge import Judge
from tests.conftest import SHARED_DATA
from tests.search.world import QUESTION, LiteratureWorld
from tests.web.live import LiveServer, NewPage, PageProblems, SourceStub, clean_settings, serve

pytestmark = pytest.mark.browser

SCOPUS = SHARED_DATA / "exports" / "asysd_testthat" / "scopus.ris"
STUDIES = [
    json.loads(path.read_text(encoding="utf-8"))
    for path in sorted((SHARED_DATA / "api_fixtures" / "clinicaltrials_v2_aact").glob("NCT*.json"))
]
SCREENSHOTS = Path("/tmp")
HOSTILE_REASON = "<img src=x onerror=\"window.__xss='reason'\"> <b>bold</b>"


def _titles_in_file(path: Path) -> list[str]:
    return [
        line[6:].strip()
        for line in path.read_text(encoding="utf-8-sig").splitlines()
        if line.startswith("TI  - ")
    ]


def about_dogs(title: str) -> bool:
    return re.search(r"\bdogs\b", title, re.I) is not None


def words(title: str) -> int:
    return len(title.split())


def scripted(criteria: str, title: str) -> tuple[Any, str]:
    """The model's answer per column: the criteria say which column is asking."""
    if "dogs" in criteria:
        verdict = about_dogs(title)
        return verdict, f"The title {'names' if verdict else 'does not name'} dogs."
    if "words" in criteria:
        return words(title), f"{words(title)} words. {HOSTILE_REASON}"
    if "placebo" in criteria:
        verdict = "placebo" in title.lower()
        return ("placebo" if verdict else "active or none"), "From the title."
    raise AssertionError(f"no script for {criteria!r}")


@pytest.fixture
def judge() -> Judge:
    return Judge(scripted)


@pytest.fixture
def judged_server(tmp_path: Path, judge: Judge) -> Iterator[LiveServer]:
    with serve(clean_settings(tmp_path / "data"), models={"default": judge.model()}) as live:
        yield live


# --- page helpers --------------------------------------------------------------------


def _import_scopus(page: Page) -> int:
    total = len(_titles_in_file(SCOPUS))
    page.get_by_label("File", exact=True).set_input_files(SCOPUS)
    page.get_by_role("button", name="Import", exact=True).click()
    expect(page.get_by_test_id("result-count")).to_have_text(f"{total} records")
    return total


def _rows(page: Page) -> Locator:
    return page.get_by_test_id("results").get_by_role("listitem")


def _titles(page: Page, *, visible_only: bool = False) -> list[str]:
    rows = _rows(page).filter(visible=True) if visible_only else _rows(page)
    return rows.locator("h3").all_inner_texts()


def _cells(page: Page, column: str) -> Locator:
    return page.get_by_test_id("results").locator(
        f'[data-testid="ai-cell"][data-column="{column}"]'
    )


def _column(page: Page, name: str) -> Locator:
    return page.get_by_test_id("ai-column").filter(
        has=page.locator(".ai-column-name", has_text=re.compile(f"^{re.escape(name)}$"))
    )


def _add_column(
    page: Page, name: str, criteria: str, output_type: str, categories: str = ""
) -> None:
    toolbar = page.get_by_test_id("ai-columns")
    add = toolbar.get_by_test_id("ai-column-add")
    if add.get_attribute("open") is None:
        add.locator("summary").click()
    add.get_by_label("Column name").fill(name)
    add.get_by_label("Criteria").fill(criteria)
    add.get_by_label("Output type").select_option(label=output_type)
    if categories:
        add.get_by_label("Categories").fill(categories)
    add.get_by_role("button", name="Add column").click()
    expect(_column(page, name)).to_have_count(1)


def _wait_done(page: Page, column: str, count: int) -> None:
    expect(_cells(page, column)).to_have_count(count)
    expect(_cells(page, column).and_(page.locator('[data-state="done"]'))).to_have_count(count)


def _chat(page: Page, expression: str) -> Any:
    """Runs ``expression`` with ``chat`` bound to the page's chat registry module."""
    return page.evaluate(
        "async (expression) => {"
        " const chat = await import('/static/app/chat/page-context.js');"
        " return await new Function('chat', `return (${expression});`)(chat); }",
        expression,
    )


# --- tests -----------------------------------------------------------------------------


def test_library_ai_columns_values_reasons_sort_filter_cache(
    judged_server: LiveServer, judge: Judge, new_page: NewPage, problems: PageProblems
) -> None:
    page = new_page(judged_server)
    page.goto("/library")
    total = _import_scopus(page)
    titles = _titles(page)
    dog_titles = [t for t in titles if about_dogs(t)]
    assert 0 < len(dog_titles) < total

    toolbar = page.get_by_test_id("ai-columns")
    expect(toolbar).to_be_visible()
    expect(toolbar.get_by_test_id("ai-column")).to_have_count(0)

    # A yes/no column: one cell per row, each with the model's value and reason.
    _add_column(page, "Dogs", "Is this study about dogs?", "Yes / no")
    _wait_done(page, "Dogs", total)
    for row, title in zip(_rows(page).all(), titles, strict=True):
        cell = row.locator('[data-testid="ai-cell"][data-column="Dogs"]')
        expect(cell.locator('[data-role="value"]')).to_have_text(
            "Yes" if about_dogs(title) else "No"
        )
        expect(cell).to_have_attribute("data-cached", "false")
    first = _cells(page, "Dogs").first
    reason = first.locator('[data-role="reason"]')
    expected_reason = scripted("dogs", titles[0])[1]
    expect(first).to_have_attribute("title", expected_reason)
    expect(reason).to_be_hidden()
    first.focus()
    expect(reason).to_be_visible()
    expect(reason).to_have_text(expected_reason)
    assert sorted(judge.titles) == sorted(titles), "each row was judged once"

    # A number column whose reasons carry markup: shown as text, never run.
    _add_column(page, "Words", "How many words are in the title?", "Number")
    _wait_done(page, "Words", total)
    words_reason = _cells(page, "Words").first.locator('[data-role="reason"]')
    expect(words_reason).to_have_text(f"{words(titles[0])} words. {HOSTILE_REASON}")
    expect(page.locator("main img")).to_have_count(0)
    expect(page.locator("main b")).to_have_count(0)
    assert page.evaluate("() => window.__xss") is None

    # Sort by a column, both ways (ties keep the page's order), then back to the page order.
    words_column = _column(page, "Words")
    words_column.get_by_role("button", name="Sort by Words, descending").click()
    expect(words_column.get_by_role("button", name="Sort by Words, descending")).to_have_attribute(
        "aria-pressed", "true"
    )
    assert _titles(page) == sorted(titles, key=lambda t: -words(t))
    words_column.get_by_role("button", name="Sort by Words, ascending").click()
    assert _titles(page) == sorted(titles, key=words)
    words_column.get_by_role("button", name="Sort by Words, ascending").click()
    assert _titles(page) == titles

    # Filter by a value: yes/no, then a minimum as well.
    dogs_filter = _column(page, "Dogs").get_by_role("combobox")
    dogs_filter.select_option(label="Yes")
    expect(_rows(page).filter(visible=True)).to_have_count(len(dog_titles))
    assert _titles(page, visible_only=True) == dog_titles
    expect(page.get_by_test_id("ai-filter-count")).to_have_text(
        f"AI column filters: {len(dog_titles)} of {total} rows match."
    )
    least = sorted(words(t) for t in dog_titles)[len(dog_titles) // 2]
    _column(page, "Words").get_by_role("spinbutton").fill(str(least))
    long_dogs = [t for t in dog_titles if words(t) >= least]
    expect(_rows(page).filter(visible=True)).to_have_count(len(long_dogs))
    dogs_filter.select_option(label="No")
    expect(_rows(page).filter(visible=True)).to_have_count(
        len([t for t in titles if not about_dogs(t) and words(t) >= least])
    )
    dogs_filter.select_option(label="Any")
    _column(page, "Words").get_by_role("spinbutton").fill("")
    expect(_rows(page).filter(visible=True)).to_have_count(total)
    expect(page.get_by_test_id("ai-filter-count")).to_be_hidden()
    page.screenshot(path=str(SCREENSHOTS / "library-ai-columns.png"), full_page=True)

    # A reload: the columns are still there, the values come from the cache.
    judge.reset()
    page.reload()
    _wait_done(page, "Dogs", total)
    _wait_done(page, "Words", total)
    expect(_cells(page, "Dogs").and_(page.locator('[data-cached="true"]'))).to_have_count(total)
    assert judge.titles == []

    # Remove a column: its cells and controls go.
    _column(page, "Words").get_by_role("button", name="Remove Words").click()
    expect(_column(page, "Words")).to_have_count(0)
    expect(_cells(page, "Words")).to_have_count(0)
    expect(_cells(page, "Dogs")).to_have_count(total)

    # A duplicate name is refused with the server's reason, in the form.
    _add_column_refused(page, "Dogs")
    problems.expect_failed_loads(409)
    problems.assert_none()


def _add_column_refused(page: Page, name: str) -> None:
    add = page.get_by_test_id("ai-column-add")
    if add.get_attribute("open") is None:
        add.locator("summary").click()
    add.get_by_label("Column name").fill(name)
    add.get_by_label("Criteria").fill("Is this study about dogs?")
    add.get_by_role("button", name="Add column").click()
    expect(add.get_by_role("alert")).to_contain_text(
        f"The column was not added. The library table already has an AI column named '{name}'."
    )


def test_library_chat_context_and_accept_handlers(
    judged_server: LiveServer, judge: Judge, new_page: NewPage, problems: PageProblems
) -> None:
    page = new_page(judged_server)
    page.goto("/library")
    total = _import_scopus(page)
    titles = _titles(page)
    ids = _rows(page).evaluate_all("rows => rows.map((row) => row.dataset.recordId)")

    # An AI column suggested by the chat: Accept creates it and fills the table.
    message = _chat(
        page,
        "chat.acceptPayload('ai_column_suggestion', {name: 'Dogs', criteria: 'About dogs?',"
        " output_type: 'yes_no', categories: null})",
    )
    assert message == "Added the AI column “Dogs” to the library's results."
    _wait_done(page, "Dogs", total)

    context = _chat(page, "chat.collectContext()")
    ChatContext.model_validate(context)  # what the chat's server side accepts
    summaries = context["item_summaries"]
    assert [s["id"] for s in summaries] == ids
    assert [s["title"] for s in summaries] == titles
    assert {s["kind"] for s in summaries} == {"library_record"}
    first = summaries[0]["fields"]
    assert first["Dogs"] == ("yes" if about_dogs(titles[0]) else "no")
    assert isinstance(first["year"], int) and first["authors"]
    assert context["results"] == {
        "total": total,
        "loaded": total,
        "filtered": total,
        "visible": total,
    }
    assert context["pagination"] == {"page": 1, "page_size": 20}
    assert context["search_form"]["q"] == "" and context["viewer"] is None
    assert context["sort"] == {"column": "date_added", "direction": "desc"}
    assert [c["name"] for c in context["ai_columns"]] == ["Dogs"]

    # The user sorts and filters by the column: the context says so, and lists only the rows
    # still shown.
    _column(page, "Dogs").get_by_role("button", name="Sort by Dogs, descending").click()
    _column(page, "Dogs").get_by_role("combobox").select_option(label="Yes")
    dogs = [t for t in titles if about_dogs(t)]
    context = _chat(page, "chat.collectContext()")
    assert context["sort"] == {"column": "Dogs", "direction": "desc"}
    assert context["filters"]["ai_columns"] == {"Dogs": "yes"}
    assert [s["title"] for s in context["item_summaries"]] == dogs
    assert context["results"]["filtered"] == len(dogs)

    # A query suggestion fills the search box and focuses it; nothing is searched yet.
    url = page.url
    message = _chat(
        page,
        "chat.acceptPayload('query_suggestion', {query: 'taurine dogs', target: 'library',"
        " explanation: 'Both words.'})",
    )
    assert message == "The suggested query is in the search box: press Search to run it."
    search_box = page.get_by_label("Search words")
    expect(search_box).to_have_value("taurine dogs")
    expect(search_box).to_be_focused()
    assert page.url == url
    expect(page.get_by_test_id("result-count")).to_have_text(f"{total} records")
    assert _chat(page, "chat.collectContext()")["search_form"]["q"] == "taurine dogs"

    # A filter suggestion: the year filter is applied (and the results re-rendered); the
    # page says which filters it does not have.
    message = _chat(
        page,
        "chat.acceptPayload('filter_suggestion', {filters: {year: '2024-2025', phase: 'Phase 3'},"
        " explanation: 'Recent only.'})",
    )
    assert message == "Applied the year filter. The library has no phase filter."
    expect(page.get_by_label("Year from")).to_have_value("2024")
    expect(page.get_by_label("Year to")).to_have_value("2025")
    expect(page).to_have_url(re.compile(r"year_from=2024&year_to=2025"))
    context = _chat(page, "chat.collectContext()")
    assert context["filters"]["year_from"] == "2024"
    assert all(s["fields"]["year"] in (2024, 2025) for s in context["item_summaries"])
    problems.assert_none()


# --- Trials ----------------------------------------------------------------------------


def _all_studies(request: httpx.Request) -> httpx.Response:
    """ClinicalTrials.gov's /studies: every study of the fixture set on one page."""
    unique = {s["protocolSection"]["identificationModule"]["nctId"]: s for s in STUDIES}
    return httpx.Response(200, json={"studies": list(unique.values()), "totalCount": len(unique)})


@pytest.fixture
def trials_server(tmp_path: Path, judge: Judge) -> Iterator[tuple[LiveServer, SourceStub]]:
    stub = SourceStub()
    stub.handler = _all_studies
    settings = clean_settings(tmp_path / "data")
    with serve(
        settings, source_transport=stub.transport(), models={"default": judge.model()}
    ) as live:
        yield live, stub


def test_trials_ai_column_chat_context_and_trial_search_suggestion(
    trials_server: tuple[LiveServer, SourceStub], new_page: NewPage, problems: PageProblems
) -> None:
    live, stub = trials_server
    page = new_page(live)
    page.goto("/trials?condition=atopic+dermatitis")
    rows = page.get_by_test_id("results").get_by_role("listitem")
    expect(rows.first).to_be_visible()
    total = rows.count()
    nct_ids = rows.locator('[data-field="nct_id"]').all_inner_texts()
    titles = rows.locator("h3").all_inner_texts()

    # A category column, added through the chat's Accept.
    message = _chat(
        page,
        "chat.acceptPayload('ai_column_suggestion', {name: 'Comparator', criteria:"
        " 'Is the comparator a placebo?', output_type: 'category',"
        " categories: ['placebo', 'active or none']})",
    )
    assert message == "Added the AI column “Comparator” to the trial results."
    _wait_done(page, "Comparator", total)
    placebo = ["placebo" in t.lower() for t in titles]
    values = _cells(page, "Comparator").locator('[data-role="value"]').all_inner_texts()
    assert values == ["placebo" if p else "active or none" for p in placebo]

    context = _chat(page, "chat.collectContext()")
    ChatContext.model_validate(context)
    summaries = context["item_summaries"]
    assert [s["id"] for s in summaries] == nct_ids
    assert {s["kind"] for s in summaries} == {"trial"}
    by_id = {s["id"]: s["fields"] for s in summaries}
    first = by_id["NCT02210780"] if "NCT02210780" in by_id else summaries[0]["fields"]
    assert set(first) >= {"phase", "status", "conditions", "enrollment", "sponsor", "start_date"}
    assert first["Comparator"] in ("placebo", "active or none")
    phases = [f["phase"] for f in by_id.values() if f["phase"]]
    assert phases and all(
        re.fullmatch(r"((Early p|P)hase \d|Not applicable)(, .*)?", p) for p in phases
    )
    assert context["search_form"]["condition"] == "atopic dermatitis"
    assert context["results"]["loaded"] == total

    # A trial search suggestion fills the form, and does not search.
    sent = len(stub.sent())
    message = _chat(
        page,
        "chat.acceptPayload('trial_search_suggestion', {condition: 'psoriasis',"
        " intervention: 'secukinumab', terms: 'children', phases: ['Phase 3', 'PHASE4'],"
        " statuses: ['RECRUITING'], sponsor: 'Novartis'})",
    )
    assert message == (
        "The trial search form is filled in: press Search trials to run it. "
        "Note: the form takes one phase: Phase 3 was chosen."
    )
    expect(page.get_by_label("Condition")).to_have_value("psoriasis")
    expect(page.get_by_label("Condition")).to_be_focused()
    expect(page.get_by_label("Intervention")).to_have_value("secukinumab")
    expect(page.get_by_label("Other terms")).to_have_value("children")
    expect(page.get_by_label("Sponsor")).to_have_value("Novartis")
    expect(page.get_by_label("Phase")).to_have_value("PHASE3")
    expect(page.get_by_label("Status")).to_have_value("RECRUITING")
    assert len(stub.sent()) == sent

    # A filter suggestion: phase applied (a new search), the AI column filtered too.
    message = _chat(
        page,
        "chat.acceptPayload('filter_suggestion', {filters: {phase: 'Phase 2',"
        " Comparator: 'placebo', year: 2020}, explanation: 'x'})",
    )
    assert message == "Applied the phase, Comparator filters. Not applied here: year."
    expect(page).to_have_url(re.compile(r"phase=PHASE2"))
    expect(page.get_by_test_id("ai-filter-count")).to_contain_text("AI column filters:")
    context = _chat(page, "chat.collectContext()")
    assert context["filters"]["phase"] == "PHASE2"
    assert context["filters"]["ai_columns"] == {"Comparator": "placebo"}
    assert sum(placebo) >= 1
    assert len(context["item_summaries"]) == sum(placebo)
    assert all(s["fields"]["Comparator"] == "placebo" for s in context["item_summaries"])
    problems.assert_none()


# --- Search ----------------------------------------------------------------------------

RUN_WAIT_MS = 20_000


@pytest.fixture
def offline_search_server(tmp_path: Path) -> Iterator[LiveServer]:
    """No model configured (deterministic search skills); the sources answer with the real
    responses of tests/search/world.py."""
    settings = clean_settings(tmp_path / "data")
    with serve(settings, source_transport=LiteratureWorld().transport(), engine=True) as live:
        yield live


def test_search_chat_context_accept_handlers_and_offline_ai_columns(
    offline_search_server: LiveServer, new_page: NewPage, problems: PageProblems
) -> None:
    page = new_page(offline_search_server)
    page.goto("/search")
    question = page.get_by_label("Your question")
    question.fill(QUESTION)
    expect(page.get_by_role("checkbox", name="PubMed", exact=True)).to_be_checked()
    context = _chat(page, "chat.collectContext()")
    assert "active_tab" not in context and context["search_run_id"] is None
    assert context["search_form"]["question"] == QUESTION
    assert "pubmed" in context["search_form"]["sources"]
    page.get_by_role("button", name="Start", exact=True).click()

    # The strategy checkpoint: its tab, its queries; a query suggestion for PubMed goes into
    # PubMed's query box.
    expect(page.get_by_test_id("strategy")).to_be_visible(timeout=RUN_WAIT_MS)
    context = _chat(page, "chat.collectContext()")
    ChatContext.model_validate(context)
    assert context["active_tab"] == "strategy"
    run_id = context["search_run_id"]
    assert run_id and run_id in page.url
    queries = context["search_form"]["strategy"]["queries"]
    assert "pubmed" in [q["source"] for q in queries]
    message = _chat(
        page,
        "chat.acceptPayload('query_suggestion', {query: 'taurine[tiab] AND dogs[tiab]',"
        " target: 'pubmed', explanation: 'x'})",
    )
    assert (
        message == "The suggested query is in the PubMed query: search with your edits to use it."
    )
    pubmed = page.get_by_role("textbox", name="PubMed query", exact=True)
    expect(pubmed).to_have_value("taurine[tiab] AND dogs[tiab]")
    expect(pubmed).to_be_focused()
    expect(page.get_by_role("button", name="Search with my edits")).to_be_enabled()
    page.get_by_role("button", name="Undo my edits").click()
    page.get_by_role("button", name="Approve", exact=True).click()

    # The result review: its tab and the papers shown, as search results.
    review = page.get_by_test_id("review")
    expect(review).to_be_visible(timeout=RUN_WAIT_MS)
    papers = page.get_by_test_id("papers").get_by_role("listitem")
    total = papers.count()
    ids = papers.evaluate_all("items => items.map((item) => item.dataset.paperId)")
    papers.nth(0).get_by_role("button", name="Relevant", exact=True).click()
    context = _chat(page, "chat.collectContext()")
    ChatContext.model_validate(context)
    assert context["active_tab"] == "results"
    assert context["search_run_id"] == run_id
    assert [s["id"] for s in context["item_summaries"]] == ids
    assert {s["kind"] for s in context["item_summaries"]} == {"search_result"}
    first = context["item_summaries"][0]["fields"]
    assert first["mark"] == "relevant" and 0 <= first["score"] <= 1 and first["sources"]
    assert context["selection"] == [ids[0]]
    assert context["search_form"]["marked_relevant"] == [ids[0]]
    assert context["results"] == {
        "total": total,
        "loaded": total,
        "filtered": total,
        "visible": total,
    }
    assert context["sort"] == {"column": "score", "direction": "desc"}

    # A filter suggestion: the papers marked relevant only; a filter the page lacks is named.
    message = _chat(
        page,
        "chat.acceptPayload('filter_suggestion', {filters: {label: 'relevant', phase: 'Phase 3'},"
        " explanation: 'x'})",
    )
    assert message == "Applied the label filter. Not applied here: phase."
    expect(papers.filter(visible=True)).to_have_count(1)
    expect(review.get_by_role("combobox", name="Marked")).to_have_value("relevant")
    context = _chat(page, "chat.collectContext()")
    assert [s["id"] for s in context["item_summaries"]] == [ids[0]]
    assert context["filters"]["label"] == "relevant"
    review.get_by_role("combobox", name="Marked").select_option(label="All")
    expect(papers.filter(visible=True)).to_have_count(total)

    # An AI column in offline mode: it is created, and its cells say why they stay empty.
    message = _chat(
        page,
        "chat.acceptPayload('ai_column_suggestion', {name: 'Dogs', criteria: 'About dogs?',"
        " output_type: 'yes_no'})",
    )
    assert message == "Added the AI column “Dogs” to the search results."
    cells = page.get_by_test_id("papers").locator('[data-testid="ai-cell"][data-column="Dogs"]')
    expect(cells).to_have_count(total)
    expect(cells.and_(page.locator('[data-state="unavailable"]'))).to_have_count(total)
    expect(page.get_by_test_id("ai-status")).to_contain_text("offline mode")

    # A query suggestion with no strategy shown starts a new search with it.
    message = _chat(
        page,
        "chat.acceptPayload('query_suggestion', {query: 'taurine in dogs', target: 'search',"
        " explanation: 'x'})",
    )
    assert message == "The suggested query is in the question field: press Start to search."
    expect(page.get_by_label("Your question")).to_have_value("taurine in dogs")
    expect(page.get_by_label("Your question")).to_be_focused()
    expect(page).to_have_url(re.compile(r"/search$"))
    problems.assert_none()
