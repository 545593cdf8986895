"""The Trials page when ClinicalTrials.gov cannot be searched, in a real browser: the page
says why in plain words by cause (no connection from this server; the source's own error;
its rate limit), never an exception class or "4 attempts made", and a Retry button asks
again and shows the results once the source answers."""

from __future__ import annotations

import json

import httpx
import pytest
from playwright.sync_api import Page, expect

from tests.conftest import SHARED_DATA
from tests.web.live import LiveServer, NewPage, PageProblems, SourceStub

pytestmark = pytest.mark.browser

STUDIES = sorted((SHARED_DATA / "api_fixtures" / "clinicaltrials_v2_aact").glob("NCT*.json"))
INTERNAL = ("ConnectError", "attempts made", "rate-limiting us", "httpx", "Errno")


def no_network(request: httpx.Request) -> httpx.Response:
    raise httpx.ConnectError("[Errno -3] Temporary failure in name resolution", request=request)


def studies(request: httpx.Request) -> httpx.Response:
    found = [json.loads(path.read_text()) for path in STUDIES[:3]]
    return httpx.Response(200, json={"studies": found, "totalCount": len(found)})


def _search(page: Page) -> None:
    page.goto("/trials")
    page.get_by_label("Condition").fill("asthma")
    page.get_by_role("button", name="Search trials").click()


def _problem_text(page: Page) -> str:
    notice = page.get_by_test_id("notice")
    expect(notice.get_by_role("alert")).to_be_visible(timeout=20_000)
    return notice.inner_text()


def test_no_connection_is_said_plainly_and_retry_searches_again(
    stubbed_server: LiveServer, source_stub: SourceStub, new_page: NewPage, problems: PageProblems
) -> None:
    source_stub.handler = no_network
    page = new_page(stubbed_server)
    _search(page)

    said = _problem_text(page)
    assert (
        "The search failed. Could not reach ClinicalTrials.gov (no network connection from "
        "this server?)."
    ) in said
    assert "Check that this server can reach the internet" in said
    assert not any(word in said for word in INTERNAL), said
    retry = page.get_by_test_id("notice").get_by_role("button", name="Retry")
    expect(retry).to_be_visible()
    problems.expect_failed_loads(503)

    source_stub.handler = studies
    retry.click()
    expect(page.get_by_test_id("results").get_by_role("listitem")).to_have_count(3)
    expect(page.get_by_test_id("notice").get_by_role("alert")).to_have_count(0)
    problems.assert_none()


@pytest.mark.parametrize(
    ("status", "says"),
    [
        (
            503,
            "ClinicalTrials.gov answered with an error on its side (HTTP 503 Service Unavailable).",
        ),
        (429, "ClinicalTrials.gov is limiting how often it may be searched (too many requests)."),
    ],
)
def test_an_error_from_the_source_is_not_called_a_lost_connection(
    stubbed_server: LiveServer,
    source_stub: SourceStub,
    new_page: NewPage,
    problems: PageProblems,
    status: int,
    says: str,
) -> None:
    source_stub.handler = lambda request: httpx.Response(status, text="busy")
    page = new_page(stubbed_server)
    _search(page)

    said = _problem_text(page)
    assert says in said
    assert "Could not reach" not in said
    assert not any(word in said for word in INTERNAL), said
    expect(page.get_by_test_id("notice").get_by_role("button", name="Retry")).to_be_visible()
    problems.expect_failed_loads(503)
    problems.assert_none()
