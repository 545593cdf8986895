"""The web shell in a real browser: Debian's Chromium against a real uvicorn server."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from playwright.sync_api import Locator, Page, expect

from tests.web.live import Account, LiveServer, NewPage, PageProblems

pytestmark = pytest.mark.browser

SCREENSHOT = Path("/tmp/shell.png")
FAKE_OPENAI_KEY = "sk-browser-test-0123456789abcdefXYZ"
NO_KEYS = "No keys of your own yet."


def _nav(page: Page) -> Locator:
    return page.get_by_role("navigation", name="Main")


MENU = ["Home", "Search", "Library", "Screening", "Trials", "Streams", "Research", "Settings"]


def _nav_labels(page: Page) -> list[str]:
    return [text.strip() for text in _nav(page).get_by_role("link").all_inner_texts()]


# --- single-user mode -------------------------------------------------------------------


def test_home_shows_the_shell_and_live_health(
    single_user_server: LiveServer, new_page: NewPage, problems: PageProblems
) -> None:
    page = new_page(single_user_server)
    page.goto("/")

    expect(page).to_have_title("Home · ScholarStream")
    expect(page.get_by_role("heading", level=1)).to_have_text("Welcome, Local user")
    # Only features that exist are in the menu.
    assert _nav_labels(page) == MENU
    expect(_nav(page).get_by_role("link", name="Home")).to_have_attribute("aria-current", "page")
    expect(page.get_by_test_id("username")).to_have_text("Local user")
    # Single-user mode has no accounts, so nothing to log out of.
    expect(page.get_by_role("button", name="Log out")).to_have_count(0)
    banner = page.get_by_test_id("offline-banner")
    expect(banner).to_be_visible()
    expect(banner).to_contain_text("Offline mode: no language model is configured.")

    page.screenshot(path=str(SCREENSHOT), full_page=True)

    # The server's health is the administrator's page, linked from the footer.
    page.locator("footer").get_by_role("link", name="Server status").click()
    expect(page).to_have_title("Server status · ScholarStream")
    # Filled in by the ES module from GET /health: proves app.js loaded and ran.
    health = page.get_by_test_id("health")
    expect(health.locator('[data-field="status"]')).to_have_text("Up and answering")
    expect(health.locator('[data-field="database"]')).to_have_text("SQLite")
    expect(health.locator('[data-field="engine"]')).to_contain_text("Not running in this process")
    expect(health.locator('[data-field="offline"]')).to_have_text("Offline mode: none configured")
    problems.assert_none()


def test_nav_reaches_settings(
    single_user_server: LiveServer, new_page: NewPage, problems: PageProblems
) -> None:
    page = new_page(single_user_server)
    page.goto("/")
    _nav(page).get_by_role("link", name="Settings").click()

    expect(page).to_have_url(single_user_server.url("/settings"))
    expect(page).to_have_title("Settings · ScholarStream")
    current = _nav(page).locator("[aria-current=page]")
    expect(current).to_have_count(1)
    expect(current).to_have_text("Settings")
    roles = page.get_by_test_id("roles")
    for role in ("default", "fast", "synthesis"):
        expect(roles).to_contain_text(role)
    problems.assert_none()


def test_api_docs_load_offline(
    single_user_server: LiveServer, new_page: NewPage, problems: PageProblems
) -> None:
    page = new_page(single_user_server)  # records and aborts requests to non-local hosts
    with page.expect_response(lambda response: response.url.endswith("/openapi.json")) as spec:
        page.goto("/docs")

    expect(page).to_have_title("ScholarStream API")
    assert spec.value.ok
    # Swagger UI's script and stylesheet came from this server and ran.
    assert page.evaluate("typeof SwaggerUIBundle") == "function"
    expect(page.locator("#swagger-ui .swagger-ui")).to_be_attached()
    stylesheet = page.locator("link[rel=stylesheet]").get_attribute("href")
    assert stylesheet is not None
    assert stylesheet.startswith("/static/swagger/")
    problems.assert_none()


def test_api_docs_list_the_operations(
    single_user_server: LiveServer, new_page: NewPage, problems: PageProblems
) -> None:
    page = new_page(single_user_server)
    page.goto("/docs")

    # Swagger UI shows either the API's info block or why it cannot render the document.
    expect(page.locator(".swagger-ui .info, .swagger-ui .version-pragma").first).to_be_visible()
    refusal = page.locator(".swagger-ui .version-pragma")
    assert refusal.count() == 0, refusal.inner_text()
    expect(page.locator(".swagger-ui .info .title")).to_contain_text("ScholarStream")
    paths = page.locator(".opblock .opblock-summary-path")
    expect(paths.first).to_be_visible()
    shown = set(paths.evaluate_all("els => els.map(e => e.getAttribute('data-path'))"))
    expected = {
        "/health",
        "/api/v1/me",
        "/api/v1/me/provider-keys/{provider}",
        "/api/v1/auth/login",
    }
    assert expected <= shown
    expect(page.locator(".opblock-get .opblock-summary-path[data-path='/health']")).to_have_count(1)
    problems.assert_none()


def test_provider_key_is_saved_listed_hidden_and_removed(
    single_user_server: LiveServer, new_page: NewPage, problems: PageProblems
) -> None:
    page = new_page(single_user_server)
    page.goto("/settings")
    keys = page.get_by_test_id("user-keys")
    expect(keys).to_have_text(NO_KEYS)

    page.get_by_label("Provider").select_option(label="OpenAI")
    page.get_by_label("API key", exact=True).fill(FAKE_OPENAI_KEY)
    with page.expect_navigation():  # the module reloads the page once the key is stored
        page.get_by_role("button", name="Save key").click()

    expect(keys.get_by_role("listitem")).to_have_count(1)
    expect(keys.get_by_role("listitem")).to_contain_text("OpenAI")
    expect(page.get_by_label("API key", exact=True)).to_have_value("")
    assert FAKE_OPENAI_KEY not in page.content()
    served = page.request.get("/settings")
    assert served.ok
    assert "OpenAI" in served.text()
    assert FAKE_OPENAI_KEY not in served.text()
    listed = page.request.get("/api/v1/me/provider-keys")
    assert [key["provider"] for key in listed.json()] == ["openai"]
    assert FAKE_OPENAI_KEY not in listed.text()

    with page.expect_navigation():
        keys.get_by_role("button", name="Remove").click()
    expect(keys).to_have_text(NO_KEYS)
    assert page.request.get("/api/v1/me/provider-keys").json() == []
    problems.assert_none()


def test_provider_key_refusal_is_shown_in_the_form(
    single_user_server: LiveServer, new_page: NewPage, problems: PageProblems
) -> None:
    page = new_page(single_user_server)
    page.goto("/settings")
    # Longer than the API accepts: the browser lets it through, the API refuses it.
    page.get_by_label("API key", exact=True).fill("x" * 1001)
    page.get_by_role("button", name="Save key").click()

    message = page.locator('[data-form="provider-key"] [data-role="message"]')
    expect(message).to_contain_text("api_key")
    expect(page.get_by_test_id("user-keys")).to_have_text(NO_KEYS)
    problems.expect_failed_loads(422)
    problems.assert_none()


def test_provider_key_form_reports_a_failure_that_is_not_json(
    single_user_server: LiveServer, new_page: NewPage, problems: PageProblems
) -> None:
    page = new_page(single_user_server)
    # What a reverse proxy in front of ScholarStream answers when the app is down.
    page.route(
        "**/api/v1/me/provider-keys/*",
        lambda route: route.fulfill(
            status=502, content_type="text/html", body="<html><h1>Bad Gateway</h1></html>"
        ),
    )
    page.goto("/settings")
    page.get_by_label("API key", exact=True).fill(FAKE_OPENAI_KEY)
    page.get_by_role("button", name="Save key").click()

    message = page.locator('[data-form="provider-key"] [data-role="message"]')
    expect(message).to_have_text("The server answered 502 Bad Gateway.")
    problems.expect_failed_loads(502)
    problems.assert_none()


def test_provider_key_form_controls_line_up(
    single_user_server: LiveServer, new_page: NewPage
) -> None:
    page = new_page(single_user_server)
    page.goto("/settings")
    # All three are measured at one moment: the models section above fills in while the
    # page loads and moves the form, so boxes taken one after another can disagree.
    boxes: list[dict[str, float]] = page.locator('[data-form="provider-key"]').evaluate(
        """form => ["select[name=provider]", "input[name=api_key]", "button[type=submit]"]
            .map(selector => form.querySelector(selector).getBoundingClientRect())
            .map(box => ({y: box.y, height: box.height}))"""
    )
    assert len(boxes) == 3
    heights = {round(box["height"]) for box in boxes}
    bottoms = {round(box["y"] + box["height"]) for box in boxes}
    assert len(heights) == 1, f"controls of one row differ in height: {heights}"
    assert len(bottoms) == 1, f"controls of one row do not line up: {bottoms}"


def test_login_page_is_skipped_in_single_user_mode(
    single_user_server: LiveServer, new_page: NewPage
) -> None:
    page = new_page(single_user_server)
    page.goto("/login?next=/settings")
    expect(page).to_have_url(single_user_server.url("/settings"))


# --- multi-user mode --------------------------------------------------------------------


def _log_in(page: Page, username: str, password: str) -> None:
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password").fill(password)
    page.get_by_role("button", name="Log in").click()


def test_login_wrong_password_then_right_then_logout(
    multi_user_server: LiveServer, account: Account, new_page: NewPage, problems: PageProblems
) -> None:
    page = new_page(multi_user_server)
    page.goto("/")
    expect(page).to_have_url(re.compile(r"/login\?next=/$"))
    expect(page).to_have_title("Log in · ScholarStream")
    expect(_nav(page)).to_have_count(0)
    expect(page.get_by_test_id("offline-banner")).to_have_count(0)

    _log_in(page, account.username, "not the password")
    expect(page.get_by_role("alert")).to_have_text("Wrong username or password.")
    expect(page).to_have_url(multi_user_server.url("/login"))
    expect(page.get_by_test_id("username")).to_have_count(0)
    problems.expect_failed_loads(401)

    _log_in(page, account.username, account.password)
    expect(page).to_have_url(multi_user_server.url("/"))
    expect(page).to_have_title("Home · ScholarStream")
    expect(page.get_by_test_id("username")).to_have_text(account.display_name)
    expect(page.get_by_role("heading", level=1)).to_have_text(f"Welcome, {account.display_name}")
    assert _nav_labels(page) == MENU
    expect(page.get_by_test_id("start-here")).to_be_visible()

    page.get_by_role("button", name="Log out").click()
    expect(page).to_have_url(multi_user_server.url("/login"))
    expect(page.get_by_label("Username")).to_be_visible()
    # The session ended on the server too, not only in the browser.
    page.goto("/")
    expect(page).to_have_url(re.compile(r"/login\?next=/$"))
    problems.assert_none()


def test_login_returns_to_the_page_asked_for(
    multi_user_server: LiveServer, account: Account, new_page: NewPage, problems: PageProblems
) -> None:
    page = new_page(multi_user_server)
    page.goto("/settings")
    expect(page).to_have_url(re.compile(r"/login\?next=/settings$"))

    _log_in(page, account.username, account.password)
    expect(page).to_have_url(multi_user_server.url("/settings"))
    expect(page.get_by_test_id("username")).to_have_text(account.display_name)
    problems.assert_none()


# --- the harness itself -----------------------------------------------------------------


def test_requests_to_other_hosts_are_caught(
    single_user_server: LiveServer, new_page: NewPage, problems: PageProblems
) -> None:
    """Keeps every ``assert_none()`` above meaningful: the guard does see outside requests."""
    page = new_page(single_user_server)
    page.goto("/")
    outcome = page.evaluate(
        "() => fetch('https://example.org/probe').then(() => 'reached', () => 'blocked')"
    )
    assert outcome == "blocked"
    assert problems.foreign_requests == ["https://example.org/probe"]
