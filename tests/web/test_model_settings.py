"""Settings -> Models in a real browser (Debian's Chromium against a live server): from a
fresh install to a working local model through the web UI alone. An OpenAI-compatible
endpoint on loopback (the development provider, ``scholarstream.devtools.fake_openai``,
in-process) is added, its models are loaded, one is chosen for the default role and tested
step by step, and the chat then answers with it; the offline banner is gone."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pydantic_ai.models
import pytest
from playwright.sync_api import Locator, Page, expect

from scholarstream.devtools.fake_openai import Auto, FakeOpenAI, Text, fake_openai
from tests.web.live import LiveServer, NewPage, PageProblems, clean_settings, serve

pytestmark = pytest.mark.browser

ANSWER = "Hello from the local model."


MODEL = "dev-model"  # the first model the development provider lists


@pytest.fixture
def endpoint(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeOpenAI]:
    # Real model requests, to this loopback endpoint only (tests/conftest.py guards sockets).
    monkeypatch.setattr(pydantic_ai.models, "ALLOW_MODEL_REQUESTS", True)
    with fake_openai(fallback=Auto()) as served:  # answers as a capable model would
        yield served


@pytest.fixture
def server(tmp_path: Path) -> Iterator[LiveServer]:
    with serve(clean_settings(tmp_path / "data")) as live:
        yield live


def _models(page: Page) -> Locator:
    return page.get_by_test_id("models")


def test_from_a_fresh_install_to_a_working_local_model(
    server: LiveServer, endpoint: FakeOpenAI, new_page: NewPage, problems: PageProblems
) -> None:
    page = new_page(server)
    page.goto("/settings")
    expect(page.get_by_test_id("offline-banner")).to_be_visible()
    models = _models(page)
    default_row = models.locator('tr[data-role-name="default"]')
    expect(default_row.get_by_test_id("role-status")).to_have_text("not configured (offline mode)")

    form = models.get_by_role("form", name="Add an OpenAI-compatible endpoint")
    form.get_by_label("Name").fill("mylocal")
    form.get_by_label("Base URL").fill(endpoint.base_url)
    form.get_by_role("button", name="Save and load models").click()
    expect(form.locator('[data-role="message"]')).to_contain_text("pick one of its models")

    picker = models.get_by_label("Model of mylocal", exact=True)
    expect(picker).to_be_focused()
    expect(picker.locator("option").first).to_have_text(MODEL)
    picker.select_option(MODEL)
    models.get_by_role("button", name="Use for default").click()
    expect(models.get_by_label("Model for default", exact=True)).to_have_value(f"mylocal:{MODEL}")
    expect(default_row.get_by_test_id("role-status")).to_have_text("configured (not checked)")

    default_row.get_by_role("button", name="Test the model of default").click()
    result = models.get_by_test_id("check-result")
    expect(result).to_have_attribute("aria-live", "polite")
    for step in ("reachable", "completion", "tools", "json_schema"):
        expect(result.locator(f'[data-step="{step}"]')).to_have_attribute("data-ok", "true")
    expect(result.get_by_test_id("detected")).to_have_text(
        "Structured output: native. Tool calls: yes."
    )
    expect(default_row.get_by_test_id("role-status")).to_contain_text("checked OK at")
    expect(models.get_by_test_id("endpoints")).to_contain_text(f"Checked OK (mylocal:{MODEL})")

    # The model now answers in chat, and nothing says "offline" any more.
    endpoint.default(MODEL, Text(ANSWER))
    page.goto("/")
    expect(page.get_by_test_id("offline-banner")).to_have_count(0)
    page.get_by_role("button", name="Assistant", exact=True).click()
    tray = page.get_by_role("complementary", name="Assistant")
    box = tray.get_by_label("Message to the assistant")
    box.fill("Say hello")
    box.press("Enter")
    log = tray.get_by_role("log", name="Conversation with the assistant")
    expect(log.locator('[data-role="assistant"]').first).to_contain_text(ANSWER)
    expect(tray).not_to_contain_text("No model can be asked")
    assert endpoint.calls(MODEL) >= 4  # the check's three requests, then the chat's
    problems.assert_none()


def test_a_refused_endpoint_says_why_next_to_the_form(
    server: LiveServer, new_page: NewPage, problems: PageProblems
) -> None:
    page = new_page(server)
    page.goto("/settings")
    form = _models(page).get_by_role("form", name="Add an OpenAI-compatible endpoint")
    form.get_by_label("Name").fill("openai")
    form.get_by_label("Base URL").fill("http://127.0.0.1:8080/v1")
    form.get_by_role("button", name="Save and load models").click()
    alert = form.get_by_role("alert")
    expect(alert).to_contain_text("already a provider's name")
    expect(alert).to_contain_text("Choose another name")
    problems.expect_failed_loads(422)
    problems.assert_none()
