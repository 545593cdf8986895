"""The pages whose API requests once carried query parameters their endpoints do not declare
(the API now refuses those, tests/api/test_query_params.py): the library's facets with a page
size and a page of their own, and the PRISMA diagram shown afresh after a change (once asked
for with a cache-busting parameter)."""

from __future__ import annotations

import httpx
import pytest
from playwright.sync_api import Page, expect

from tests.conftest import SHARED_DATA
from tests.screening.world import svg_words, triptans
from tests.web.live import LiveServer, NewPage, PageProblems

pytestmark = pytest.mark.browser

SCOPUS = SHARED_DATA / "exports" / "asysd_testthat" / "scopus.ris"


def _refused(page: Page) -> list[str]:
    """The API requests of the page that were answered 422 (a refused parameter)."""
    found: list[str] = []
    page.on(
        "response",
        lambda r: found.append(r.url) if "/api/v1/" in r.url and r.status == 422 else None,
    )
    return found


def test_library_facets_with_a_page_size_and_a_later_page(
    fresh_server: LiveServer, new_page: NewPage, problems: PageProblems
) -> None:
    with httpx.Client(
        base_url=fresh_server.base_url, headers={"Origin": fresh_server.base_url}
    ) as client:
        imported = client.post(
            "/api/v1/library/imports", files={"file": ("scopus.ris", SCOPUS.read_bytes())}
        )
        assert imported.status_code == 201, imported.text
    page = new_page(fresh_server)
    refused = _refused(page)
    with page.expect_response(lambda r: "/api/v1/library/facets" in r.url) as facets:
        page.goto("/library?limit=4&offset=4")
    assert facets.value.status == 200
    assert "limit" not in facets.value.url and "offset" not in facets.value.url
    expect(page.get_by_test_id("facets")).to_be_visible()
    expect(page.get_by_test_id("results").get_by_role("listitem")).to_have_count(4)
    assert refused == []
    problems.assert_none()


def test_the_prisma_diagram_shows_the_numbers_just_saved(
    fresh_server: LiveServer, new_page: NewPage, problems: PageProblems
) -> None:
    with httpx.Client(
        base_url=fresh_server.base_url, headers={"Origin": fresh_server.base_url}
    ) as client:
        imported = client.post(
            "/api/v1/library/imports", files={"file": ("triptans.csv", triptans().csv_bytes)}
        )
        assert imported.status_code == 201, imported.text
        made = client.post(
            "/api/v1/screening/projects",
            json={"name": "Triptans", "source": {"kind": "library"}},
        )
        assert made.status_code == 201, made.text
    page = new_page(fresh_server)
    refused = _refused(page)
    page.goto(f"/screening/{made.json()['id']}")
    prisma = page.get_by_test_id("prisma")
    image = prisma.get_by_test_id("prisma-diagram")
    page.wait_for_function("el => el.complete && el.naturalWidth > 0", arg=image.element_handle())
    first = image.get_attribute("src")

    prisma.get_by_text("Enter the numbers the project does not record").click()
    prisma.get_by_label("Duplicate records removed").fill("5")
    prisma.get_by_role("button", name="Save the numbers").click()
    expect(prisma).to_contain_text("Saved.")
    # The image shows the diagram of after the change, not the one the page held.
    page.wait_for_function(
        "([el, first]) => el.getAttribute('src') !== first && el.complete && el.naturalWidth > 0",
        arg=[image.element_handle(), first],
    )
    shown = page.evaluate("(el) => fetch(el.src).then((r) => r.text())", image.element_handle())
    assert "Duplicate records removed (n = 5)" in svg_words(shown)
    assert refused == []
    problems.assert_none()
