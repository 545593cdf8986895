"""“Screen these” (issue 25): a finished search run (the Search page) and the Library page's
search or collection open the Screening page's New project form filled in with them. Over
HTTP (no browser): the Screening page fills in what a link names, says so when the run or
the collection is not one it can offer, and the form's values make a project of exactly the
records the Library lists; the Library page carries the link, hidden until its script finds
something to screen; the Search page's script offers it for a finished run with papers.
The links working in the browser are checked by the Search and Library pages' browser tests."""

from __future__ import annotations

import asyncio
import datetime as dt
import re
import uuid
from collections.abc import Iterator
from html.parser import HTMLParser
from typing import Any

import httpx
import pytest

from scholarstream.accounts import ensure_local_user
from scholarstream.db import upgrade
from scholarstream.search import SearchRequest, SearchRunStore
from scholarstream.search.core import (
    Checkpoint,
    CheckpointKind,
    ParsedIntent,
    SearchStrategy,
    SourceQuery,
    StrategyPayload,
)
from scholarstream.settings import Settings
from scholarstream.web import STATIC_DIR
from tests.helpers import make_runtime
from tests.screening.api import API, client_for, import_review
from tests.web.live import clean_settings

QUESTION = "triptans for acute migraine"
UUID = r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"


class _Form(HTMLParser):
    """The New project form as a browser would submit it: each named input's value, the
    checked radio, each select's selected option; and the form's notice."""

    def __init__(self) -> None:
        super().__init__()
        self.values: dict[str, str] = {}
        self.source = ""
        self.selected: dict[str, str] = {}
        self.problem: str | None = None
        self._select: str | None = None
        self._in_problem = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if tag == "input" and a.get("type") == "radio" and a.get("name") == "source":
            if "checked" in a:
                self.source = a.get("value") or ""
        elif tag == "input" and a.get("name"):
            self.values[a["name"] or ""] = a.get("value") or ""
        elif tag == "select":
            self._select = a.get("name")
        elif tag == "option" and self._select and "selected" in a:
            self.selected[self._select] = a.get("value") or ""
        elif a.get("data-testid") == "prefill-problem":
            self._in_problem, self.problem = True, ""

    def handle_endtag(self, tag: str) -> None:
        if tag == "select":
            self._select = None
        if tag == "p":
            self._in_problem = False

    def handle_data(self, data: str) -> None:
        if self._in_problem and self.problem is not None:
            self.problem += data


def _form(client: httpx.Client, query: str) -> _Form:
    page = client.get(f"/screening{query}")
    assert page.status_code == 200, page.text
    form = _Form()
    form.feed(page.text)
    return form


async def _waiting_run(settings: Settings) -> str:
    """A search run of the local user's, waiting at a checkpoint (so the form offers it)."""
    runtime = make_runtime(settings)
    try:
        async with runtime.database.session(write=True) as session:
            owner = await ensure_local_user(session)
        store = SearchRunStore(runtime.database)
        run = await store.create(owner.id, SearchRequest(question=QUESTION))
        payload = StrategyPayload(
            intent=ParsedIntent(question=QUESTION, topic=QUESTION),
            strategy=SearchStrategy(queries=[SourceQuery(source="library", query="triptan")]),
            iteration=0,
        )
        await store.set_pending(
            run.id,
            Checkpoint(
                kind=CheckpointKind.STRATEGY_CONFIRMATION,
                payload=payload,
                run_id=str(run.id),
                iteration=0,
                timestamp=dt.datetime(2026, 1, 5, 9, 0, tzinfo=dt.UTC).isoformat(),
            ),
        )
        return str(run.id)
    finally:
        await runtime.close()


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[httpx.Client, dict[str, Any]]]:
    settings = clean_settings(tmp_path_factory.mktemp("screen-these"))
    upgrade(settings.app_database_url)
    run_id = asyncio.run(_waiting_run(settings))
    with client_for(settings) as (_, client):
        import_review(client)
        made = client.post(
            "/api/v1/library/collections",
            json={"name": "Sumatriptan", "search": {"q": "sumatriptan"}},
        )
        assert made.status_code == 201, made.text
        collection = made.json()["collection"]
        tagged = client.post(
            "/api/v1/library/tags", json={"add": ["include"], "search": {"q": "naratriptan"}}
        )
        assert tagged.status_code == 200, tagged.text
        yield client, {"run": run_id, "collection": collection}


def test_the_library_page_carries_the_link_hidden_until_there_is_something_to_screen(
    site: tuple[httpx.Client, dict[str, Any]],
) -> None:
    client, _ = site
    html = client.get("/library").text
    found = re.search(
        r'<p class="export screen-these" data-testid="screen-these" hidden>(.*?)</p>', html, re.S
    )
    assert found, "no Screen these on the Library page"
    assert '<a href="/screening" data-role="screen-link">Screen these records</a>' in found.group(1)
    # Its script points it at what the search lists: the collection, else the words and the
    # filters a project takes; hidden when nothing matches.
    script = (STATIC_DIR / "library" / "library.js").read_text(encoding="utf-8")
    assert 'params.set("collection", state.collection)' in script
    assert 'if (state.q) params.set("query", state.q);' in script
    assert 'const SCREENED_FILTERS = ["year_from", "year_to", "publication_type", "tag"];' in script
    assert "screenThese.hidden = matching === 0;" in script


def test_the_search_page_offers_it_for_a_finished_run_with_papers() -> None:
    views = (STATIC_DIR / "search" / "search-views.js").read_text(encoding="utf-8")
    assert 'if (run.status !== "completed" || count === 0) return null;' in views
    assert "`/screening?${new URLSearchParams({ run: run.id })}`" in views
    search = (STATIC_DIR / "search" / "search.js").read_text(encoding="utf-8")
    assert "    exportLinks(run),\n    screenLink(run)," in search


def test_a_library_search_fills_in_the_form_and_makes_that_project(
    site: tuple[httpx.Client, dict[str, Any]],
) -> None:
    client, _ = site
    form = _form(
        client, "?query=migraine&year_from=1990&year_to=2010&publication_type=&tag=include"
    )
    assert form.source == "library" and form.problem is None
    assert form.values["library_query"] == "migraine"
    assert (form.values["year_from"], form.values["year_to"]) == ("1990", "2010")
    assert form.values["tag"] == "include" and form.values["publication_type"] == ""

    # As the form sends it (static/screening/new-project.js): the records the Library lists
    # for the same search, no more.
    listed = client.get(
        "/api/v1/library/records",
        params={"q": "migraine", "year_from": 1990, "year_to": 2010, "tag": "include"},
    ).json()
    assert listed["total"] > 0
    project = client.post(
        API,
        json={
            "name": "Naratriptan",
            "source": {
                "kind": "library",
                "query": form.values["library_query"],
                "year_from": int(form.values["year_from"]),
                "year_to": int(form.values["year_to"]),
                "publication_type": None,
                "tag": form.values["tag"],
            },
        },
    )
    assert project.status_code == 201, project.text
    assert project.json()["record_count"] == listed.get("matching", listed["total"])


def test_a_collection_and_a_run_are_chosen_in_the_form(
    site: tuple[httpx.Client, dict[str, Any]],
) -> None:
    client, made = site
    collection = made["collection"]
    form = _form(client, f"?collection={collection['id']}")
    assert form.source == "collection" and form.problem is None
    assert form.selected["collection_id"] == collection["id"]

    form = _form(client, f"?run={made['run']}")
    assert form.source == "search_run" and form.problem is None
    assert form.selected["run_id"] == made["run"]


@pytest.mark.parametrize("name", ["run", "collection"])
def test_a_run_or_a_collection_it_cannot_offer_is_said(
    site: tuple[httpx.Client, dict[str, Any]], name: str
) -> None:
    client, _ = site
    form = _form(client, f"?{name}={uuid.uuid4()}")
    assert form.source == "library"
    assert form.problem is not None
    what = {"run": "The search run in the link", "collection": "The collection in the link"}
    assert form.problem.startswith(what[name]) and "pick" in form.problem
    assert not re.search(UUID, form.problem)


def test_without_a_link_the_form_starts_from_the_library(
    site: tuple[httpx.Client, dict[str, Any]],
) -> None:
    client, _ = site
    form = _form(client, "")
    assert form.source == "library" and form.problem is None
    assert form.values["library_query"] == "" and form.values["tag"] == ""
