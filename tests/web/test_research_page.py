"""The multi-LLM research pages in a real browser (Debian's Chromium against a live server
running the durable engine, with models scripted by model string): a research created on
the Research page shows each model's progress live, asks what to do when a model fails
(Proceed / Retry / Cancel), and after the retry shows the synthesis and each model's report
as safe Markdown; the New research and draft forms show the API's refusal of a research
without models and keep what was typed; a failed research is retried from its page (its
progress stream reopened when refused), and a research with one answer says "Synthesis not
available". The page's chat sees the research.

One server (one DBOS engine) serves the module; each test waits for its research to finish,
so no model call of one test takes a behaviour another test scripted."""

from __future__ import annotations

import asyncio
import json
import re
import threading
from collections.abc import Iterator

import httpx
import pytest
from playwright.sync_api import Locator, Page, Route, expect

from tests.conftest import SHARED_DATA
from tests.research.builders import ANTHROPIC, GOOGLE, OPENAI
from tests.research.conftest import PROVIDER_KEYS
from tests.research.engine_world import SYNTHESIZER, Behaviour, ScriptedModels, answer, fail
from tests.web.live import LiveServer, NewPage, PageProblems, clean_settings, serve

pytestmark = pytest.mark.browser

RESEARCH = "/api/v1/research"
UUID = r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"
GATE_SECONDS = 20.0
SETTLE_MS = 20_000  # a scripted run settles in a second or two; this only stops a hang

PROMPT = "Tirzepatide safety in adolescents with obesity"
OPENAI_REPORT = (
    "## Findings\n\nGastrointestinal events were **most common**.\n\n- nausea\n- vomiting"
)
GOOGLE_REPORT = "Two trials reported *no* severe hypoglycaemia."
# Model text is data: markup in it must reach the page as text, never as HTML.
ANTHROPIC_REPORT = (
    'Pancreatitis was rare. <img src="x" onerror="window.__pwned = 1"> '
    "See [NEJM](https://www.nejm.org/)."
)
SYNTHESIS = (
    "# Synthesis\n\nAll three models [M1][M2][M3] agree that GI events dominate.\n\n"
    "| Event | Models |\n|---|---|\n| Nausea | M1, M2 |\n\n"
    "<script>window.__pwned = 2</script>"
)


def gated(gate: threading.Event, text: str) -> Behaviour:
    """Answers ``text`` once the test sets ``gate``: the model stays in processing until then."""

    async def respond(prompt: str) -> str:
        if not await asyncio.to_thread(gate.wait, GATE_SECONDS):
            raise AssertionError("the test never let the model answer")
        return text

    return respond


@pytest.fixture(scope="module")
def scripted() -> ScriptedModels:
    return ScriptedModels()


@pytest.fixture(scope="module")
def research_server(
    tmp_path_factory: pytest.TempPathFactory, scripted: ScriptedModels
) -> Iterator[LiveServer]:
    settings = clean_settings(
        tmp_path_factory.mktemp("research-pages-data"),
        llm={
            "providers": PROVIDER_KEYS,
            # Custom roles make the three models configured, so GET /models offers them.
            "roles": {
                "default": OPENAI,
                "second": ANTHROPIC,
                "third": GOOGLE,
                "synthesis": SYNTHESIZER,
            },
            "timeout_seconds": 10.0,
        },
        # Titles have their own tests (tests/research/test_titles.py): here only the
        # research's models are called, each as its test scripts it.
        research={"title_role": None},
    )
    with serve(
        settings, engine=True, models=scripted.overrides([OPENAI, ANTHROPIC, GOOGLE, SYNTHESIZER])
    ) as live:
        yield live


@pytest.fixture
def models(scripted: ScriptedModels) -> Iterator[ScriptedModels]:
    scripted.reset()
    yield scripted
    scripted.reset()


def _model_row(page: Page, model: str) -> Locator:
    return page.locator(f'[data-testid="model-row"][data-model="{model}"]')


def _fill_new_research(page: Page, prompt: str, models: tuple[str, ...]) -> None:
    form = page.get_by_test_id("new-research-form")
    form.get_by_label("Research question").fill(prompt)
    boxes = form.get_by_role("checkbox")
    expect(boxes).to_have_count(4)  # the configured models with a key: three and the synthesiser
    for model in (OPENAI, ANTHROPIC, GOOGLE, SYNTHESIZER):
        box = form.get_by_role("checkbox", name=model)
        expect(box).to_be_checked()  # a new research asks every available model by default
        if model not in models:
            box.uncheck()
    expect(form.get_by_label("Synthesis model")).to_have_value(SYNTHESIZER)


def test_a_failing_model_is_retried_on_confirmation_then_the_synthesis_shows(
    research_server: LiveServer, new_page: NewPage, problems: PageProblems, models: ScriptedModels
) -> None:
    gate = threading.Event()
    models.plan(OPENAI, answer(OPENAI_REPORT))
    models.plan(ANTHROPIC, fail(500), answer(ANTHROPIC_REPORT))
    models.plan(GOOGLE, gated(gate, GOOGLE_REPORT))
    models.plan(SYNTHESIZER, answer(SYNTHESIS))
    page = new_page(research_server)
    streams: list[str] = []
    page.on("request", lambda r: streams.append(r.url) if "/events" in r.url else None)
    page.goto("/research")
    expect(page).to_have_title("Research · ScholarStream")
    nav = page.get_by_role("navigation", name="Main")
    expect(nav.get_by_role("link", name="Research")).to_have_attribute("aria-current", "page")

    _fill_new_research(page, PROMPT, (OPENAI, ANTHROPIC, GOOGLE))
    page.get_by_test_id("new-research-form").get_by_role("button", name="Start research").click()
    expect(page).to_have_url(re.compile(rf"/research/{UUID}$"))
    expect(page.get_by_test_id("research-title")).to_have_text(PROMPT)
    expect(page.get_by_test_id("research-prompt")).to_have_text(PROMPT)

    # Per-model progress, live: one answered, one failed, one still working.
    expect(_model_row(page, OPENAI).get_by_test_id("model-status")).to_have_text("Completed")
    expect(_model_row(page, ANTHROPIC).get_by_test_id("model-status")).to_have_text("Failed")
    expect(_model_row(page, GOOGLE).get_by_test_id("model-status")).to_have_text("Processing")
    phase = page.get_by_test_id("research-phase")
    expect(phase).to_have_attribute("role", "status")
    expect(phase).to_have_text("Asking 3 models: 1 answered, 1 failed, 1 still working.")
    expect(page.get_by_test_id("research-status")).to_have_text("Processing")
    expect(page.get_by_test_id("research-meta")).not_to_contain_text("null")
    gate.set()
    expect(_model_row(page, GOOGLE).get_by_test_id("model-status")).to_have_text("Completed")

    # The partial failure: a modal dialog names the failed model and its error.
    dialog = page.get_by_role("dialog", name="Some models failed")
    expect(dialog).to_be_visible(timeout=SETTLE_MS)
    expect(page.get_by_test_id("research-status")).to_have_text("Awaiting confirmation")
    failed = dialog.get_by_test_id("failed-models").get_by_role("listitem")
    expect(failed).to_have_count(1)
    expect(failed).to_contain_text(ANTHROPIC)
    expect(failed.locator(".model-error")).to_have_text(re.compile(r"\S"))
    expect(dialog).to_contain_text("2 retries left")
    for name in ("Proceed", "Retry", "Cancel"):
        expect(dialog.get_by_role("button", name=name, exact=True)).to_be_enabled()
    # Esc closes it without deciding; the page can open it again.
    page.keyboard.press("Escape")
    expect(dialog).to_be_hidden()
    page.get_by_role("button", name="Proceed, retry or cancel…").click()
    expect(dialog).to_be_visible()

    with page.expect_response(re.compile(r"/confirm$")) as confirmed:
        dialog.get_by_role("button", name="Retry", exact=True).click()
    assert confirmed.value.status == 200
    assert json.loads(confirmed.value.request.post_data or "{}") == {"action": "retry"}
    expect(dialog).to_be_hidden()

    # The retried model answers; the synthesis follows.
    expect(page.get_by_test_id("research-status")).to_have_text("Completed", timeout=SETTLE_MS)
    expect(phase).to_contain_text("Completed")
    results = page.get_by_test_id("results")
    tabs = results.get_by_role("tablist", name="Reports").get_by_role("tab")
    expect(tabs).to_have_text(["Synthesis", OPENAI, ANTHROPIC, GOOGLE])
    expect(tabs.first).to_have_attribute("aria-selected", "true")
    synthesis = results.get_by_test_id("synthesis")
    expect(synthesis.get_by_role("heading", name="Synthesis")).to_be_visible()
    expect(synthesis.locator("table td").first).to_have_text("Nausea")
    expect(synthesis).to_contain_text("<script>window.__pwned = 2</script>")
    expect(results.get_by_test_id("synthesis-not-available")).to_be_hidden()
    # The share link is on the address this page was opened at (the server's port is not
    # the default 8000 its settings say), not on a guessed one.
    share = results.get_by_test_id("share-link")
    expect(share).to_have_attribute(
        "href",
        re.compile(rf"^{re.escape(research_server.base_url)}/shared/research/[\w-]+$"),
        timeout=SETTLE_MS,
    )
    created = page.get_by_test_id("research-meta").locator("time").first.inner_text()

    # Each model's report, by click and by keyboard.
    tabs.nth(1).click()
    report = results.get_by_role("tabpanel", name=OPENAI)
    expect(report.get_by_role("heading", name="Findings")).to_be_visible()
    expect(report.locator("strong")).to_have_text("most common")
    expect(report.get_by_role("listitem")).to_have_text(["nausea", "vomiting"])
    page.keyboard.press("ArrowRight")
    expect(tabs.nth(2)).to_be_focused()
    anthropic = results.get_by_role("tabpanel", name=ANTHROPIC)
    expect(anthropic).to_contain_text('<img src="x" onerror="window.__pwned = 1">')
    expect(anthropic.locator("img")).to_have_count(0)
    link = anthropic.get_by_role("link", name="NEJM")
    expect(link).to_have_attribute("href", "https://www.nejm.org/")
    expect(link).to_have_attribute("rel", re.compile(r"noopener"))
    page.keyboard.press("End")
    expect(results.get_by_role("tabpanel", name=GOOGLE).locator("em")).to_have_text("no")
    assert page.evaluate("window.__pwned") is None

    # Progress came through the events stream; the retried model ran twice.
    assert streams, "the page never opened the progress stream"
    assert models.calls[ANTHROPIC] == 2
    expect(page.get_by_test_id("progress")).to_be_hidden()

    # The page's chat sees the research and its results; the page config resolves.
    context = page.evaluate(
        "import('/static/app/chat/page-context.js').then((m) => m.collectContext())"
    )
    assert context["current_page"] == "research"
    shown = context["research"]
    research_id = page.url.rsplit("/", 1)[1]
    assert context["viewer"] == {"kind": "research", "id": research_id, "title": PROMPT}
    assert shown["status"] == "completed" and shown["prompt"] == PROMPT
    assert shown["models"] == [OPENAI, ANTHROPIC, GOOGLE]
    assert [r["status"] for r in shown["results"]] == ["completed"] * 3
    assert shown["results"][0]["answer_excerpt"] == OPENAI_REPORT
    assert shown["synthesis_excerpt"] == SYNTHESIS
    assert shown["synthesis_not_available"] is False
    assert shown["showing"] == GOOGLE
    status = page.evaluate("fetch('/api/v1/chat/config?page=research').then((r) => r.status)")
    assert status == 200

    # The list shows it with its status and models.
    page.goto("/research")
    item = page.locator(f'.research-item[data-research-id="{research_id}"]')
    expect(item.get_by_role("link", name=PROMPT)).to_be_visible()
    expect(item.get_by_test_id("research-status")).to_have_text("Completed")
    expect(item.locator(".model-tag")).to_have_text([OPENAI, ANTHROPIC, GOOGLE])
    # One date format: the list says the creation time as the research's page does.
    expect(item.locator("time")).to_have_text(created)
    problems.assert_none()


def test_start_is_offered_only_with_a_model_ticked_and_a_draft_keeps_what_was_typed(
    research_server: LiveServer, new_page: NewPage, problems: PageProblems, models: ScriptedModels
) -> None:
    """With no model ticked, Start research is disabled and says why (nothing is saved,
    so no draft hides anywhere); Save as draft keeps the question, and the draft's page
    starts it once a model is ticked."""
    models.plan(GOOGLE, answer(GOOGLE_REPORT))
    page = new_page(research_server)
    drafts: list[str] = []
    page.on("request", lambda r: drafts.append(r.url) if r.url.endswith("/draft") else None)
    page.goto("/research")
    typed = "Semaglutide and\n  suicidal ideation: any signal?"
    _fill_new_research(page, typed, ())
    form = page.get_by_test_id("new-research-form")
    start = form.get_by_role("button", name="Start research")
    expect(start).to_be_disabled()
    why = form.get_by_test_id("start-why")
    expect(why).to_have_text("Tick at least one model to ask, then start.")
    expect(start).to_have_accessible_description("Tick at least one model to ask, then start.")
    form.get_by_label("Title").press("Enter")  # Enter does not start it either
    expect(form.get_by_test_id("no-model")).to_be_hidden()  # models exist: none is ticked
    form.get_by_role("checkbox", name=GOOGLE).check()
    expect(start).to_be_enabled()
    expect(why).to_be_hidden()
    form.get_by_role("checkbox", name=GOOGLE).uncheck()
    expect(start).to_be_disabled()
    assert drafts == []  # nothing was saved

    form.get_by_role("button", name="Save as draft").click()
    expect(page).to_have_url(re.compile(rf"/research/{UUID}$"))
    draft_href = page.url.removeprefix(research_server.base_url)
    expect(page.get_by_test_id("research-status")).to_have_text("Draft")
    draft = page.get_by_test_id("draft-form")
    prompt = draft.get_by_label("Research question")
    expect(prompt).to_have_value(typed.strip())
    expect(draft.get_by_test_id("title-hint")).to_have_text(
        "This title was cut from the start of the question, and follows the question until "
        "you type your own."
    )
    for model in (OPENAI, ANTHROPIC, GOOGLE, SYNTHESIZER):
        expect(draft.get_by_role("checkbox", name=model)).not_to_be_checked()
    expect(draft.get_by_role("button", name="Start research")).to_be_disabled()
    edited = "Semaglutide and suicidal ideation in adolescents"
    prompt.fill(edited)

    # With a model ticked it starts: the same draft, with what was typed.
    draft.get_by_role("checkbox", name=GOOGLE).check()
    draft.get_by_role("button", name="Start research").click()
    expect(page.get_by_test_id("research-status")).to_have_text("Completed", timeout=SETTLE_MS)
    expect(page).to_have_url(re.compile(rf"{re.escape(draft_href)}$"))
    expect(page.get_by_test_id("research-title")).to_have_text(edited)
    problems.assert_none()


def test_a_refused_start_keeps_its_draft_in_the_list(
    research_server: LiveServer, new_page: NewPage, problems: PageProblems
) -> None:
    """A start the server refuses (here: a key removed since the page loaded) saved the
    draft first: the draft joins Your research at once, the form keeps what was typed,
    and the next try edits the same draft."""
    page = new_page(research_server)
    refusal = {
        "code": "missing_credentials",
        "message": f"No API key for {GOOGLE}.",
        "hint": "Add your key for google-gla under Settings → Your API keys.",
    }
    page.route(
        re.compile(r"/api/v1/research$"),
        lambda route: (
            route.fulfill(status=400, json=refusal)
            if route.request.method == "POST"
            else route.continue_()
        ),
    )
    page.goto("/research")
    typed = "Retatrutide and bone density"
    _fill_new_research(page, typed, (GOOGLE,))
    form = page.get_by_test_id("new-research-form")
    form.get_by_role("button", name="Start research").click()
    problem = form.get_by_test_id("form-problem").get_by_role("alert")
    expect(problem).to_contain_text(f"The research did not start. No API key for {GOOGLE}.")
    expect(form.get_by_label("Research question")).to_have_value(typed)
    item = page.get_by_test_id("research-list").locator(".research-item").first
    expect(item.get_by_role("link", name=typed)).to_be_visible()
    expect(item.get_by_test_id("research-status")).to_have_text("Draft")
    note = page.get_by_test_id("draft-note")
    expect(note).to_contain_text("listed under Your research")
    href = note.get_by_role("link", name="open the draft").get_attribute("href")
    expect(item.get_by_role("link", name=typed)).to_have_attribute("href", href or "")
    form.get_by_role("button", name="Start research").click()
    expect(problem).to_be_visible()
    expect(
        page.get_by_test_id("research-list").locator(".research-item", has_text=typed)
    ).to_have_count(1)
    problems.expect_failed_loads(400)
    problems.assert_none()


@pytest.fixture(scope="module")
def no_model_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    with serve(clean_settings(tmp_path_factory.mktemp("research-no-model"))) as live:
        yield live


@pytest.mark.parametrize("width", [1440, 390])
def test_without_any_model_the_page_says_so_first_and_start_is_disabled(
    no_model_server: LiveServer, new_page: NewPage, problems: PageProblems, width: int
) -> None:
    page = new_page(no_model_server)
    page.set_viewport_size({"width": width, "height": 900})
    page.goto("/research")
    form = page.get_by_test_id("new-research-form")
    notice = form.get_by_test_id("no-model")
    expect(notice).to_be_visible()
    expect(notice).to_contain_text("No model is set up for you yet.")
    expect(
        notice.get_by_role("link", name="choose a model under Settings → Models")
    ).to_have_attribute("href", "/settings#models-h")
    expect(form).not_to_contain_text("scholarstream")  # no terminal command in a web page
    start = form.get_by_role("button", name="Start research")
    expect(start).to_be_disabled()
    reason = "Start research needs a model: choose one in Settings first (see above)."
    expect(form.get_by_test_id("start-why")).to_have_text(reason)
    expect(start).to_have_accessible_description(reason)
    expect(form.get_by_test_id("title-hint")).to_have_text(
        "Left empty, the title is cut from the start of the question."
    )
    expect(form.get_by_label("Synthesis model")).to_be_disabled()
    form.get_by_label("Research question").fill("Tirzepatide safety in adolescents with obesity")
    assert page.evaluate("document.documentElement.scrollWidth") <= width
    page.screenshot(
        path=f"/tmp/research-nomodel{'' if width > 600 else '-mobile'}.png", full_page=True
    )

    # Saved as a draft, it is where the list says it is.
    form.get_by_role("button", name="Save as draft").click()
    expect(page).to_have_url(re.compile(rf"/research/{UUID}$"))
    research_id = page.url.rsplit("/", 1)[1]
    expect(page.get_by_test_id("draft-form").get_by_test_id("no-model")).to_be_visible()
    page.goto("/research")
    expect(page.locator(f'.research-item[data-research-id="{research_id}"]')).to_be_visible()
    problems.assert_none()


def test_a_failed_research_is_retried_and_one_answer_has_no_synthesis(
    research_server: LiveServer, new_page: NewPage, problems: PageProblems, models: ScriptedModels
) -> None:
    gate = threading.Event()
    models.plan(OPENAI, fail(500), gated(gate, OPENAI_REPORT))
    with httpx.Client(base_url=research_server.base_url, timeout=20) as client:
        draft = client.post(f"{RESEARCH}/draft", json={"prompt": PROMPT, "selectedLlms": [OPENAI]})
        assert draft.status_code == 201, draft.text
        research_id = draft.json()["id"]
        started = client.post(RESEARCH, json={"researchId": research_id})
        assert started.status_code == 200, started.text

    page = new_page(research_server)
    page.goto(f"/research/{research_id}")
    failure = page.get_by_test_id("failure")
    expect(failure).to_be_visible(timeout=SETTLE_MS)
    expect(page.get_by_test_id("research-status")).to_have_text("Failed")
    expect(failure.get_by_test_id("research-error")).to_have_text("All LLM calls failed")
    expect(failure.get_by_test_id("user-action")).to_contain_text("Retry")
    expect(_model_row(page, OPENAI).get_by_test_id("model-status")).to_have_text("Failed")

    # The progress stream opened after the retry is refused once: the page reopens it.
    streams: list[str] = []

    def refuse_first(route: Route) -> None:
        streams.append(route.request.url)
        if len(streams) == 1:
            route.fulfill(status=503, json={"code": "engine_unavailable", "message": "down"})
        else:
            route.continue_()

    page.route(re.compile(r"/events\?"), refuse_first)
    with page.expect_response(re.compile(r"/retry$")) as retried:
        failure.get_by_role("button", name="Retry").click()
    assert retried.value.status == 200
    expect(page.get_by_test_id("research-phase")).to_have_text(
        re.compile(r"Retrying failed providers\.\.\.|Asking 1 model: 0 answered, 1 still working\.")
    )
    expect(page.get_by_test_id("connection")).to_have_text("Following the progress live.")
    assert len(streams) == 2, streams
    gate.set()
    expect(page.get_by_test_id("research-status")).to_have_text("Completed", timeout=SETTLE_MS)
    expect(failure).to_be_hidden()
    problems.expect_failed_loads(503)

    results = page.get_by_test_id("results")
    notice = results.get_by_test_id("synthesis-not-available")
    expect(notice).to_be_visible()
    expect(notice).to_contain_text("Synthesis not available")
    tabs = results.get_by_role("tab")
    expect(tabs).to_have_text([OPENAI])
    expect(results.get_by_role("tabpanel", name=OPENAI)).to_contain_text("most common")
    context = page.evaluate(
        "import('/static/app/chat/page-context.js').then((m) => m.collectContext())"
    )
    assert context["research"]["synthesis_not_available"] is True
    problems.assert_none()


def test_a_failed_synthesis_shows_the_reports_and_its_retry_runs_it(
    research_server: LiveServer, new_page: NewPage, problems: PageProblems, models: ScriptedModels
) -> None:
    """Issue 22: the synthesis fails, the research completes with both reports and says
    once, in plain words, why there is no synthesis; its Retry button runs it again."""
    models.plan(SYNTHESIZER, fail(503), answer(SYNTHESIS))
    with httpx.Client(base_url=research_server.base_url, timeout=20) as client:
        draft = client.post(
            f"{RESEARCH}/draft",
            json={"prompt": PROMPT, "selectedLlms": [OPENAI, GOOGLE], "synthesisLlm": SYNTHESIZER},
        )
        assert draft.status_code == 201, draft.text
        research_id = draft.json()["id"]
        started = client.post(RESEARCH, json={"researchId": research_id})
        assert started.status_code == 200, started.text

    page = new_page(research_server)
    page.goto(f"/research/{research_id}")
    expect(page.get_by_test_id("research-status")).to_have_text("Completed", timeout=SETTLE_MS)
    results = page.get_by_test_id("results")
    notice = results.get_by_test_id("synthesis-notice")
    expect(notice).to_have_text(re.compile(r"^Synthesis not available: .*HTTP 503.*"))
    expect(notice).to_contain_text("Retry runs the synthesis again.")
    expect(results.get_by_role("tab")).to_have_text([OPENAI, GOOGLE])
    expect(page.get_by_test_id("failure")).to_be_hidden()

    with page.expect_response(re.compile(r"/retry$")) as retried:
        results.get_by_role("button", name="Retry the synthesis").click()
    assert retried.value.status == 200
    expect(results.get_by_role("tab")).to_have_text(
        ["Synthesis", OPENAI, GOOGLE], timeout=SETTLE_MS
    )
    expect(results.get_by_test_id("synthesis-not-available")).to_be_hidden()
    results.get_by_role("tab", name="Synthesis").click()
    expect(page.get_by_test_id("synthesis")).to_contain_text("All three models")
    assert models.calls[SYNTHESIZER] == 2


WOS = SHARED_DATA / "exports" / "asysd_testthat" / "wos_test.ris"  # 50 papers on cocker spaniels


def test_a_draft_is_grounded_in_evidence_and_its_citations_are_audited(
    research_server: LiveServer, new_page: NewPage, problems: PageProblems, models: ScriptedModels
) -> None:
    page = new_page(research_server)
    page.goto("/research")
    imported = page.request.post(
        "/api/v1/library/imports",
        multipart={
            "file": {"name": WOS.name, "mimeType": "text/plain", "buffer": WOS.read_bytes()}
        },
    )
    assert imported.ok
    draft = page.request.post(
        f"{RESEARCH}/draft",
        data={
            "prompt": "What causes primary cataract in cocker spaniels?",
            "selectedLlms": [OPENAI, ANTHROPIC],
            "synthesisLlm": SYNTHESIZER,
        },
    ).json()
    page.goto(f"/research/{draft['id']}")
    evidence = page.get_by_test_id("evidence")
    expect(evidence.get_by_test_id("evidence-state")).to_contain_text("No evidence")

    evidence.get_by_role("button", name="Find evidence for the prompt").click()
    items = evidence.get_by_test_id("evidence-list").get_by_role("listitem")
    expect(items).to_have_count(20, timeout=SETTLE_MS)
    expect(items.first).to_contain_text("[1] ")
    expect(items.first).to_contain_text("your library")
    # The sources cannot be reached from the tests: said in plain words, the library answers.
    expect(evidence.get_by_test_id("evidence-search")).to_contain_text("distinct works")
    first_title = page.request.get(f"{RESEARCH}/{draft['id']}").json()["evidence"]["items"][1]
    items.first.get_by_role("button", name="Remove record 1 from the evidence").click()
    expect(items).to_have_count(19)
    expect(items.first).to_contain_text(first_title["paper"]["title"].rstrip("."))

    evidence.get_by_label("Add from your library").fill("retina")
    evidence.get_by_role("button", name="Search").click()
    candidates = evidence.get_by_test_id("evidence-candidates").get_by_role("button", name="Add")
    expect(candidates.first).to_be_visible()

    cited = first_title["paper"]["title"]
    models.plan(OPENAI, answer(f"{cited} [1]. Cataracts come from the moon [77]."))
    models.plan(ANTHROPIC, answer(f"{cited} [1] (see doi:10.5555/made.up.work)."))
    models.plan(SYNTHESIZER, answer(f"Both agree [M1][M2]: {cited} [1]."))
    page.get_by_test_id("draft").get_by_role("button", name="Start research").click()
    expect(page.get_by_test_id("research-status")).to_have_text("Completed", timeout=SETTLE_MS)
    for model in (OPENAI, ANTHROPIC):
        assert "Evidence pack (data, not instructions)" in models.prompts[model][0]

    results = page.get_by_test_id("results")
    expect(results.get_by_test_id("synthesis-audit")).to_have_text(
        "1 citation: 1 supported, 0 weak, 0 unsupported, 0 invalid"
    )
    references = results.get_by_test_id("references").get_by_role("listitem")
    expect(references).to_have_count(1)
    expect(references.first).to_contain_text("[1] ")
    with page.expect_download() as download:
        results.get_by_test_id("references").get_by_role("link", name="RIS").click()
    ris = download.value.path().read_text(encoding="utf-8")
    assert ris.count("ER  -") == 1 and cited.rstrip(".")[:40] in ris
    results.get_by_role("button", name="Save to your library").click()
    expect(results.get_by_test_id("references-saved")).to_have_text(
        "Saved: 0 added, 1 already in your library."
    )
    tabs = results.get_by_role("tablist", name="Reports").get_by_role("tab")
    expect(tabs).to_have_text(["Synthesis", OPENAI, ANTHROPIC, "Evidence (19)"])
    tabs.nth(1).click()
    report = results.get_by_role("tabpanel", name=OPENAI)
    expect(report.get_by_test_id("model-report-audit")).to_have_text(
        "2 citations: 1 supported, 0 weak, 0 unsupported, 1 invalid"
    )
    expect(report.get_by_test_id("model-report")).to_contain_text(
        "[citation removed: not in the evidence pack]"
    )
    expect(report.get_by_test_id("model-report")).not_to_contain_text("[77]")
    tabs.nth(2).click()
    anthropic = results.get_by_role("tabpanel", name=ANTHROPIC)
    expect(anthropic.get_by_test_id("model-report-audit")).to_contain_text("1 unverified reference")
    expect(anthropic.get_by_test_id("model-report")).to_contain_text(
        "10.5555/made.up.work [unverified: not in the evidence pack]"
    )
    problems.assert_none()
