"""Each page's context builder tells the model what the user sees: every form value,
filter, pagination, sort, selection, open viewer, result counts and the item summaries."""

from __future__ import annotations

from typing import Any

import pytest

import scholarstream.chat  # noqa: F401  (registers the built-ins)
from scholarstream.chat.core import ChatContext
from scholarstream.chat.pages import get_page, pages


def build(page: str, **state: Any) -> str:
    builder = get_page(page).context_builder
    assert builder is not None
    return builder(ChatContext.model_validate({"current_page": page, **state}))


TRIALS = [
    {
        "id": "NCT02210780",
        "kind": "trial",
        "title": "Study of Dupilumab in Adults With Atopic Dermatitis",
        "fields": {
            "phase": "Phase 3",
            "status": "COMPLETED",
            "conditions": ["Atopic Dermatitis", "Eczema"],
            "enrollment": 671,
            "sponsor": "Regeneron Pharmaceuticals",
            "start_date": "2014-10-01",
        },
    },
    {
        "id": "NCT03418623",
        "kind": "trial",
        "title": "Dupilumab | children",
        "fields": {"phase": "Phase 2", "status": "RECRUITING", "enrollment": None},
    },
]

COMMON: dict[str, Any] = {
    "pagination": {"page": 2, "page_size": 20},
    "sort": {"column": "start_date", "direction": "desc"},
    "results": {"total": 137, "loaded": 20, "filtered": 12, "visible": 2},
    "selection": ["NCT03418623"],
    "viewer": {"kind": "trial", "id": "NCT02210780"},
    "item_summaries": TRIALS,
}


def assert_common_state(text: str) -> None:
    assert "Pagination: page 2, 20 per page." in text
    assert "Sort: by start_date, descending." in text
    assert "Results: 137 in total, 20 loaded, 12 after filters, 2 visible." in text
    assert "Selection: 1 selected: NCT03418623 (Dupilumab / children)." in text
    assert "Open detail view: kind = trial; id = NCT02210780." in text
    assert "2 trials on the page" in text or "2 results on the page" in text
    assert "| NCT02210780 | Study of Dupilumab in Adults With Atopic Dermatitis | Phase 3 |" in text
    assert "Atopic Dermatitis, Eczema" in text
    assert "retrieve_items" in text and "analyze_items" in text


def test_trials_context_has_the_form_filters_state_and_items() -> None:
    text = build(
        "trials",
        search_form={
            "condition": "atopic dermatitis",
            "intervention": "dupilumab",
            "q": "",
            "sponsor": "",
            "phase": "PHASE3",
            "status": "",
            "date_from": "2014-01-01",
            "date_to": "",
        },
        **COMMON,
    )
    assert "The user is on the Trials page." in text
    assert "condition = atopic dermatitis; intervention = dupilumab; q = (empty)" in text
    assert "phase = PHASE3" in text and "date_from = 2014-01-01" in text
    assert (
        "| id | title | phase | status | conditions | enrollment | sponsor | start_date |" in text
    )
    assert "| NCT03418623 | Dupilumab / children | Phase 2 | RECRUITING | (empty) |" in text
    assert "TRIAL_SEARCH_SUGGESTION" in text
    assert_common_state(text)


def test_library_context() -> None:
    text = build(
        "library",
        search_form={"q": "taurine dogs", "year_from": 2010, "year_to": None, "limit": 20},
        filters={"publication_type": "Review"},
        import_status={"file": "wos.ris", "imported": 50, "duplicates": 0},
        **{**COMMON, "item_summaries": [{**t, "kind": "library_record"} for t in TRIALS]},
    )
    assert "Library search form (q = search words): q = taurine dogs; year_from = 2010;" in text
    assert "year_to = (empty); limit = 20." in text
    assert "Filters: publication_type = Review." in text
    assert 'Last import: {"file": "wos.ris", "imported": 50, "duplicates": 0}' in text
    assert "2 library records on the page" in text
    assert 'target "library"' in text
    assert_common_state(text.replace("library records on the page", "trials on the page"))


def test_search_results_context_knows_the_run_strategy_and_groups() -> None:
    text = build(
        "search",
        active_tab="results",
        search_run_id="5b0c31c1-0e41-4c0e-9a53-2d7f3c1f4a10",
        search_form={"question": "dupilumab in atopic dermatitis", "strategy_checkpoint": True},
        filters={"theme": "Efficacy", "label": None},
        run={"status": "waiting", "stage": "waiting", "iteration": 1},
        strategy={
            "queries": [{"source": "pubmed", "query": "dupilumab[tiab]", "filters": {}}],
            "rationale": "Drug name only.",
        },
        groupings={"theme": [{"key": "efficacy", "label": "Efficacy", "count": 12}]},
        **{**COMMON, "item_summaries": [{**t, "kind": "search_result"} for t in TRIALS]},
    )
    assert "The user is on the Search page, tab 'results'." in text
    assert "Search run: 5b0c31c1-0e41-4c0e-9a53-2d7f3c1f4a10" in text
    assert "Run state: status = waiting; stage = waiting; iteration = 1" in text
    assert "Strategy query for pubmed: dupilumab[tiab]" in text
    assert "Strategy: rationale = Drug name only." in text
    assert "Results can be filtered by theme:" in text and '"label": "Efficacy"' in text
    assert "question = dupilumab in atopic dermatitis; strategy_checkpoint = yes" in text
    assert "Filters: theme = Efficacy; label = (empty)." in text
    assert "Checkpoint 2" in text and "FILTER_SUGGESTION" in text
    assert "Other page state" not in text  # every key it sent is described in its place
    assert_common_state(text)


@pytest.mark.parametrize(
    ("tab", "phrase"), [(None, "starting a search"), ("strategy", "Checkpoint 1")]
)
def test_search_context_guides_by_tab(tab: str | None, phrase: str) -> None:
    text = build("search", active_tab=tab, search_form={"question": ""})
    assert phrase in text
    assert "question = (empty)" in text
    assert "Selection: nothing selected." in text


START = ["Import a file", "Search papers", "Create a stream", "Start research"]
DASHBOARD: dict[str, Any] = {
    "first_run": False,
    "start_actions": START,
    "streams": [
        {
            "name": "GLP-1 agonists",
            "schedule": "Reports weekly",
            "last_report": {
                "status": "Partial",
                "running": False,
                "when": "12/05/2025, 09:30:00",
                "first": False,
                "new": 4,
                "failed_sources": 1,
                "best": ["Semaglutide and kidney outcomes", "Tirzepatide in obesity"],
            },
        },
        {
            "name": "Untitled stream",
            "schedule": "Paused: no scheduled reports",
            "last_report": None,
        },
    ],
    "stream_count": 7,
    "searches": [
        {"question": "statins in older adults", "status": "Waiting for you", "when": "yesterday"}
    ],
    "research": [],
    "library": {"records": 1234, "when": "11/05/2025, 08:00:00", "file": "scopus.ris"},
}


def test_home_describes_the_dashboard_it_shows() -> None:
    home = build("home", dashboard=DASHBOARD)
    assert "The user is on the Home page." in home and "dashboard" in home
    assert "Start something new: Import a file, Search papers, Create a stream, Start " in home
    assert "Your streams: 2 shown of 7, the latest run first." in home
    assert (
        "Stream “GLP-1 agonists”: Reports weekly; last report (Partial, 12/05/2025, 09:30:00): "
        "4 new, 1 source failed; its best new items: “Semaglutide and kidney outcomes”; "
        "“Tirzepatide in obesity”." in home
    )
    assert "Stream “Untitled stream”: Paused: no scheduled reports; not run yet" in home
    assert "Recent search “statins in older adults”: Waiting for you, yesterday." in home
    assert "Research: none yet." in home
    assert "Library: 1,234 records, the last added 11/05/2025, 08:00:00 from the file " in home
    assert "Other page state" not in home  # the dashboard is described, not dumped
    # Nothing of the old health panel.
    assert "Server status" not in home and "database" not in home.lower()
    assert "workers" not in home.lower()
    assert 'target "search"' in home

    first = build("home", dashboard={**DASHBOARD, "first_run": True})
    assert "Nothing of the user's own yet" in first and "Start here: Import a file" in first
    assert "Your streams" not in first

    report = DASHBOARD["streams"][0]["last_report"]
    runs = {
        "first": {**report, "first": True, "new": 1, "failed_sources": 0, "best": []},
        "failed": {**report, "status": "Failed", "new": None, "best": []},
        "running": {**report, "status": "Running", "running": True, "new": None, "best": []},
        "nothing": {**report, "new": 0, "failed_sources": 0, "best": []},
    }
    said = {
        name: build(
            "home",
            dashboard={**DASHBOARD, "streams": [{**DASHBOARD["streams"][0], "last_report": r}]},
        )
        for name, r in runs.items()
    }
    assert "first report (Partial, 12/05/2025, 09:30:00): 1 item." in said["first"]
    assert "(it failed: no source answered)." in said["failed"]
    assert "source failed" not in said["failed"]
    assert "last report: Running, 12/05/2025, 09:30:00 (searching now)." in said["running"]
    assert "): nothing new." in said["nothing"]


@pytest.mark.parametrize(
    "dashboard",
    [
        {"streams": [{"last_report": {"new": "many", "best": "x", "failed_sources": True}}]},
        {"streams": "none", "searches": [1, None], "library": {"records": "1,234"}},
        {"first_run": True, "start_actions": "Import"},
        {"stream_count": "7", "streams": [{"name": None}], "research": [{}]},
    ],
)
def test_a_dashboard_sent_wrong_is_still_described(dashboard: dict[str, Any]) -> None:
    text = build("home", dashboard=dashboard)  # the context is the client's: never a crash
    assert "The user is on the Home page." in text


def test_settings_describes_what_it_shows() -> None:

    settings = build(
        "settings",
        search_form={"provider": "openai", "api_key": ""},
        roles=[{"role": "default", "model": None, "ready": False, "problem": "not set"}],
        user_keys=["anthropic"],
    )
    assert "API key form: provider = openai; api_key = (empty)." in settings
    assert '"role": "default"' in settings and "user_keys: anthropic" in settings
    assert "Never ask the user to paste a key" in settings


def test_unknown_page_state_is_still_shown() -> None:
    text = build("trials", column_widths={"title": 300})
    assert 'Other page state: column_widths = {"title": 300}.' in text
    assert "No trials are loaded on the page." in text


PHARMA_ONLY = (
    "business goal",
    "business_goals",
    "competitor",
    "go/no-go",
    "pipeline",
    "therapeutic class",
)
"""Words of the old pharma-only stream guide; the guide now speaks to academics and industry
alike ("Goals", "Organisations")."""


def test_the_stream_pages_speak_as_the_guide_does() -> None:
    stream = build(
        "stream",
        stream_id="s1",
        stream={
            "stream_name": "CRISPR delivery",
            "stream_type": "scientific",
            "report_frequency": "biweekly",
            "focus_areas": ["lipid nanoparticles"],
            "competitors": ["Broad Institute", "Intellia"],
            "unsaved_changes": ["competitors"],
        },
    )
    assert "organisations = Broad Institute, Intellia" in stream
    assert "stream type = Scientific research" in stream  # a choice by its label
    assert "report frequency = Every two weeks" in stream
    assert "unsaved_changes = organisations" in stream

    creation = build(
        "stream_new",
        stream_creation={
            "step": "competitors",
            "guide": "rules",
            "config": {"purpose": "Follow CRISPR delivery", "business_goals": ["Plan a grant"]},
            "skipped_steps": ["competitors"],
        },
    )
    assert "step = organisations" in creation
    assert '"goals": ["Plan a grant"]' in creation
    assert "skipped_steps = organisations" in creation

    for page in ("streams", "stream", "stream_new", "stream_report"):
        text = {"streams": build("streams"), "stream": stream, "stream_new": creation}.get(
            page
        ) or build(page)
        assert not [word for word in PHARMA_ONLY if word in text.lower()], (page, text)


@pytest.mark.parametrize("page", sorted(config.page for config in pages()))
def test_no_page_speaks_only_to_pharma(page: str) -> None:
    builder = get_page(page).context_builder
    if builder is None:
        return
    text = builder(ChatContext(current_page=page)).lower()
    assert not [word for word in PHARMA_ONLY if word in text], text
