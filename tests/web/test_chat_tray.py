"""The chat tray in a real browser: Debian's Chromium against a real uvicorn server.

The model is scripted (a pydantic-ai ``FunctionModel`` with a stream function): it calls the
``search_pubmed`` tool, whose requests PubMed answers with the real responses of
tests/search/world.py, then streams an answer with a query suggestion and suggested values.
Without a model (offline mode) the tray offers the tools as commands."""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Locator, Page, expect
from pydantic_ai.messages import ModelMessage, ModelRequest, ToolReturnPart, UserPromptPart
from pydantic_ai.models.function import AgentInfo, DeltaToolCall, DeltaToolCalls, FunctionModel

from tests.conftest import SHARED_DATA
from tests.search.world import LiteratureWorld
from tests.web.live import LiveServer, NewPage, PageProblems, clean_settings, serve

pytestmark = pytest.mark.browser

SCREENSHOTS = Path("/tmp")
LIBRARY_EXPORT = SHARED_DATA / "exports" / "asysd_testthat" / "wos_test.ris"
ANSWER_WAIT_MS = 15_000  # a scripted answer takes well under a second; this only stops a hang

FIRST_MESSAGE = "Find recent work on machine learning for natural language processing"
SEARCHED = "machine learning natural language processing"
SUGGESTED_QUERY = "machine learning methods for clinical natural language processing"
INTRO = "PubMed has plenty on this."
DETAIL = "The first hit compares **machine learning** with human coders."
CHIP_LABEL = "Only reviews"
CHIP_VALUE = "Show me only the review articles, please."
CHIP_REPLY = "Here is what I would do for reviews only."
SERVER_ACTION = "Search every source"
CLIENT_ACTION = "Open the Library"
FIRST_TITLE = (
    "Using natural language processing and machine learning to replace human content coders"
)


def _last_request(messages: list[ModelMessage]) -> ModelRequest:
    last = messages[-1]
    assert isinstance(last, ModelRequest), last
    return last


def _prompt(request: ModelRequest) -> str | None:
    for part in request.parts:
        if isinstance(part, UserPromptPart) and isinstance(part.content, str):
            return part.content
    return None


async def _words(text: str, delay: float = 0.0) -> AsyncIterator[str]:
    for word in re.findall(r"\S+\s*|\s+", text):
        if delay:
            await asyncio.sleep(delay)
        yield word


class ChatScript:
    """Plays the chat model. First request: call ``search_pubmed``. After the tool answered:
    stream the answer with a QUERY_SUGGESTION and SUGGESTED_VALUES. Any other message (a
    chip's value): a short answer."""

    def __init__(self) -> None:
        self.tools_offered: list[str] = []
        self.tool_results: list[str] = []
        self.prompts: list[str] = []

    async def __call__(
        self, messages: list[ModelMessage], info: AgentInfo
    ) -> AsyncIterator[str | DeltaToolCalls]:
        self.tools_offered = [tool.name for tool in info.function_tools]
        request = _last_request(messages)
        returns = [p for p in request.parts if isinstance(p, ToolReturnPart)]
        if returns:
            self.tool_results.append(str(returns[0].content))
            suggestion = {
                "query": SUGGESTED_QUERY,
                "target": "search",
                "explanation": "Adds the clinical setting to both concepts.",
            }
            chips = [{"label": CHIP_LABEL, "value": CHIP_VALUE}]
            text = (
                f"{INTRO}\n\n{DETAIL}\n\n"
                f"QUERY_SUGGESTION: {json.dumps(suggestion)}\n"
                f"SUGGESTED_VALUES: {json.dumps(chips)}\n"
            )
            async for chunk in _words(text):
                yield chunk
            return
        prompt = _prompt(request)
        assert prompt is not None, request
        self.prompts.append(prompt)
        if prompt == FIRST_MESSAGE:
            arguments = json.dumps({"query": SEARCHED, "max_results": 5})
            yield {0: DeltaToolCall(name="search_pubmed", json_args=arguments, tool_call_id="c1")}
            return
        actions = [
            {
                "label": SERVER_ACTION,
                "action": "run_search",
                "handler": "server",
                "params": {"query": SEARCHED},
            },
            {
                "label": CLIENT_ACTION,
                "action": "open_library",
                "handler": "client",
                "params": {"query": "transformers"},
            },
        ]
        async for chunk in _words(f"{CHIP_REPLY}\nSUGGESTED_ACTIONS: {json.dumps(actions)}\n"):
            yield chunk


SLOW_WORDS = 400


async def slow_answer(
    messages: list[ModelMessage], info: AgentInfo
) -> AsyncIterator[str | DeltaToolCalls]:
    """An answer that takes a minute and a half: one word every 0.2 s."""
    for number in range(1, SLOW_WORDS + 1):
        await asyncio.sleep(0.2)
        yield f"word{number} "


# --- servers --------------------------------------------------------------------------------


@pytest.fixture
def script() -> ChatScript:
    return ChatScript()


@pytest.fixture
def world() -> LiteratureWorld:
    return LiteratureWorld()


@pytest.fixture
def chat_server(tmp_path: Path, world: LiteratureWorld, script: ChatScript) -> Iterator[LiveServer]:
    models = {"default": FunctionModel(stream_function=script)}
    settings = clean_settings(tmp_path / "data")
    with serve(settings, source_transport=world.transport(), models=models) as live:
        yield live


@pytest.fixture
def offline_server(tmp_path: Path, world: LiteratureWorld) -> Iterator[LiveServer]:
    with serve(clean_settings(tmp_path / "data"), source_transport=world.transport()) as live:
        yield live


@pytest.fixture
def slow_server(tmp_path: Path) -> Iterator[LiveServer]:
    models = {"default": FunctionModel(stream_function=slow_answer)}
    with serve(clean_settings(tmp_path / "data"), models=models) as live:
        yield live


# --- page helpers ---------------------------------------------------------------------------


def _tray(page: Page) -> Locator:
    return page.get_by_role("complementary", name="Assistant")


def _toggle(page: Page) -> Locator:
    return page.get_by_role("button", name="Assistant", exact=True)


def _open_tray(page: Page) -> Locator:
    _toggle(page).click()
    tray = _tray(page)
    expect(tray).to_be_visible()
    expect(_toggle(page)).to_have_attribute("aria-expanded", "true")
    expect(tray.get_by_label("Message to the assistant")).to_be_focused()
    return tray


def _send(tray: Locator, text: str) -> None:
    box = tray.get_by_label("Message to the assistant")
    box.fill(text)
    box.press("Enter")


def _log(tray: Locator) -> Locator:
    return tray.get_by_role("log", name="Conversation with the assistant")


def _answers(tray: Locator) -> Locator:
    return _log(tray).locator('[data-role="assistant"]')


def _questions(tray: Locator) -> Locator:
    return _log(tray).locator('[data-role="user"]')


# --- a conversation with a scripted model ---------------------------------------------------


def test_a_conversation_on_the_search_page(
    chat_server: LiveServer,
    world: LiteratureWorld,
    script: ChatScript,
    new_page: NewPage,
    problems: PageProblems,
) -> None:
    page = new_page(chat_server)
    page.goto("/search")
    expect(page.locator("body")).to_have_attribute("data-chat-page", "search")
    expect(_tray(page)).to_be_hidden()
    tray = _open_tray(page)
    expect(_log(tray)).to_have_attribute("aria-live", "polite")
    expect(tray.get_by_test_id("chat-help")).to_contain_text("Search PubMed")

    # A message: the tool runs (progress, then its card), then the answer streams in.
    _send(tray, FIRST_MESSAGE)
    expect(_questions(tray)).to_have_count(1)
    expect(_questions(tray).first).to_contain_text(FIRST_MESSAGE)
    answer = _answers(tray).first
    tool = answer.get_by_test_id("chat-tool")
    expect(tool).to_have_attribute("data-tool", "search_pubmed")
    expect(tool).to_contain_text("Search PubMed")
    expect(tool).to_contain_text(SEARCHED)
    expect(tool).to_have_attribute("data-state", "done", timeout=ANSWER_WAIT_MS)
    # The tool's line says what it found in a person's words, never the model's text.
    expect(tool.locator(".chat-tool-message")).to_have_text(
        re.compile(r"^Found [\d,]+ articles in PubMed; the first 5 are listed\.$")
    )
    tool_line = tool.locator(".chat-tool-message").inner_text()
    results = answer.locator('[data-payload-type="pubmed_search_results"]')
    expect(results).to_be_visible()
    expect(results.get_by_role("heading", name="PubMed results")).to_be_visible()
    expect(results).to_contain_text(f"for “{SEARCHED}”")
    first = results.get_by_role("link", name=re.compile(re.escape(FIRST_TITLE)))
    expect(first).to_have_attribute(
        "href", re.compile(r"^https://pubmed\.ncbi\.nlm\.nih\.gov/\d+/$")
    )
    expect(first).to_have_attribute("rel", "noopener noreferrer")
    assert any("efetch" in r.url.path for r in world.searched("pubmed"))

    expect(answer).to_have_attribute("data-status", "complete", timeout=ANSWER_WAIT_MS)
    text = answer.locator('[data-role="text"]')
    expect(text).to_contain_text(INTRO)
    expect(text.locator("strong")).to_have_text("machine learning")  # **bold**, as DOM
    expect(answer).not_to_contain_text("QUERY_SUGGESTION")
    expect(answer).not_to_contain_text("SUGGESTED_VALUES")
    expect(answer).not_to_contain_text("null")
    assert "search_pubmed" in script.tools_offered
    assert script.tool_results and FIRST_TITLE[:40] in script.tool_results[0]

    # The query suggestion: Accept puts the query into the Search page's question box.
    suggestion = answer.locator('[data-payload-type="query_suggestion"]')
    expect(suggestion).to_contain_text(SUGGESTED_QUERY)
    expect(suggestion).to_contain_text("Adds the clinical setting")
    accept = suggestion.get_by_role("button", name="Accept")
    expect(accept).to_be_enabled()
    accept.click()
    expect(page.get_by_label("Your question")).to_have_value(SUGGESTED_QUERY)
    expect(suggestion.locator('[data-role="accept-outcome"]')).not_to_be_empty()
    expect(accept).to_be_disabled()

    # A chip sends its value as the next message, in the same conversation.
    tray.get_by_role("group", name="Suggested replies").get_by_role(
        "button", name=CHIP_LABEL
    ).click()
    expect(_questions(tray)).to_have_count(2)
    expect(_questions(tray).nth(1)).to_contain_text(CHIP_VALUE)
    expect(_answers(tray).nth(1)).to_contain_text(CHIP_REPLY, timeout=ANSWER_WAIT_MS)
    expect(_answers(tray).nth(1)).to_have_attribute("data-status", "complete")
    expect(tray.get_by_role("group", name="Suggested replies")).to_have_count(0)
    assert script.prompts == [FIRST_MESSAGE, CHIP_VALUE]

    # Suggested actions: a server action posts to the server and shows what it found; a
    # client action runs in the page (here: go to the Library with a search).
    actions = tray.get_by_role("group", name="Suggested actions")
    actions.get_by_role("button", name=SERVER_ACTION).click()
    found = _answers(tray).nth(1).locator('[data-payload-type="literature_search_results"]')
    expect(found).to_be_visible(timeout=ANSWER_WAIT_MS)
    expect(found.get_by_role("link", name=re.compile(re.escape(FIRST_TITLE)))).to_be_visible()
    actions.get_by_role("button", name=CLIENT_ACTION).click()
    expect(page).to_have_url(re.compile(r"/library\?q=transformers$"))
    tray = _tray(page)
    expect(tray).to_be_visible()
    expect(_questions(tray)).to_have_count(2)
    expect(page.locator("body")).to_have_attribute("data-chat-page", "library")

    # A reload: the tray is open again with the same conversation, cards included.
    page.reload()
    tray = _tray(page)
    expect(tray).to_be_visible()
    expect(_questions(tray)).to_have_count(2)
    expect(_answers(tray)).to_have_count(2)
    expect(
        _answers(tray).first.locator('[data-payload-type="pubmed_search_results"]')
    ).to_be_visible()
    expect(_answers(tray).first).to_contain_text(INTRO)
    reloaded = _answers(tray).first.get_by_test_id("chat-tool").locator(".chat-tool-message")
    expect(reloaded).to_have_text(tool_line)  # the same line, from the stored history
    expect(_answers(tray).first).not_to_contain_text("get_article_details")
    expect(_answers(tray).nth(1)).to_contain_text(CHIP_REPLY)
    expect(tray.get_by_test_id("chat-conversation-title")).to_contain_text(FIRST_MESSAGE[:30])
    page.screenshot(path=str(SCREENSHOTS / "chat-tray.png"))

    # The list of conversations: rename, start a new one, reopen, delete.
    conversations = tray.get_by_role("region", name="Your conversations")
    list_button = tray.get_by_role("button", name="Conversations")
    list_button.click()
    expect(list_button).to_have_attribute("aria-expanded", "true")
    items = conversations.get_by_role("listitem")
    expect(items).to_have_count(1)
    expect(items.first).to_contain_text(FIRST_MESSAGE[:30])
    expect(items.first).to_contain_text("4 messages")
    items.first.get_by_role("button", name=re.compile("^Rename")).click()
    title = items.first.get_by_label("New title")
    expect(title).to_be_focused()
    title.fill("NLP reading list")
    title.press("Enter")
    expect(items.first.get_by_role("button", name="NLP reading list", exact=True)).to_be_focused()
    expect(tray.get_by_test_id("chat-conversation-title")).to_have_text("NLP reading list")

    # On a page that cannot apply a query suggestion, Accept is disabled and says why.
    page.goto("/")
    tray = _tray(page)
    suggestion = _answers(tray).first.locator('[data-payload-type="query_suggestion"]')
    expect(suggestion.get_by_role("button", name="Accept")).to_be_disabled()
    expect(suggestion.get_by_role("button", name="Accept")).to_have_accessible_description(
        re.compile("open the Search page")
    )
    list_button.click()
    expect(items.first).to_contain_text("NLP reading list")

    tray.get_by_role("button", name="New", exact=True).click()
    expect(_questions(tray)).to_have_count(0)
    expect(tray.get_by_test_id("chat-conversation-title")).to_have_text("")
    list_button.click()
    items.first.get_by_role("button", name="NLP reading list", exact=True).click()
    expect(_questions(tray)).to_have_count(2)
    expect(conversations).to_be_hidden()

    list_button.click()
    items.first.get_by_role("button", name=re.compile("^Delete")).click()
    confirm = conversations.get_by_role("group", name="Confirm deletion")
    confirm.get_by_role("button", name="Delete").click()
    expect(conversations).to_contain_text("No conversations yet.")
    expect(_questions(tray)).to_have_count(0)

    # Escape closes the list, then the tray, and gives the focus back to the toggle.
    tray.get_by_role("button", name="Conversations").focus()
    page.keyboard.press("Escape")
    expect(conversations).to_be_hidden()
    page.keyboard.press("Escape")
    expect(tray).to_be_hidden()
    expect(_toggle(page)).to_have_attribute("aria-expanded", "false")
    expect(_toggle(page)).to_be_focused()
    problems.assert_none()


# --- offline mode -----------------------------------------------------------------------------


def test_offline_the_tray_offers_commands(
    offline_server: LiveServer, new_page: NewPage, problems: PageProblems
) -> None:
    page = new_page(offline_server)
    page.goto("/search")
    tray = _open_tray(page)
    offline = tray.get_by_test_id("chat-offline")
    expect(offline).to_contain_text("No model: your questions are searched")
    expect(offline.get_by_role("link", name="Set up a model")).to_have_attribute(
        "href", "/settings"
    )
    commands = offline.get_by_role("group", name="Commands")
    expect(commands).to_be_hidden()  # folded away: the banner is one line
    offline.get_by_text("Commands", exact=True).click()
    expect(commands.get_by_role("button", name=re.compile(r"^\/search\b"))).to_be_visible()

    # A command runs its tool without a model.
    commands.get_by_role("button", name=re.compile(r"^\/search\b")).click()
    box = tray.get_by_label("Message to the assistant")
    expect(box).to_have_value("/search ")
    expect(box).to_be_focused()
    box.press_sequentially("natural language processing")
    box.press("Enter")
    answer = _answers(tray).first
    expect(answer).to_have_attribute("data-status", "complete", timeout=ANSWER_WAIT_MS)
    expect(answer.get_by_test_id("chat-tool")).to_have_attribute("data-state", "done")
    card = answer.get_by_test_id("payload-card").first
    expect(card).to_be_visible()
    expect(card.get_by_role("link", name=re.compile(re.escape(FIRST_TITLE[:40])))).to_be_visible()

    # Free text: the server says a model is needed, and offers its commands as chips.
    _send(tray, "What is new in this field?")
    second = _answers(tray).nth(1)
    expect(second).to_have_attribute("data-status", "complete", timeout=ANSWER_WAIT_MS)
    expect(second).to_contain_text("No language model is configured")
    expect(second).to_contain_text("Settings")
    chips = second.get_by_role("group", name="Suggested replies")
    expect(chips.get_by_role("button", name="/help")).to_be_visible()
    chips.get_by_role("button", name=re.compile(r"^\/search\b")).click()
    expect(box).to_have_value("/search ")
    page.screenshot(path=str(SCREENSHOTS / "chat-tray-offline.png"))
    problems.assert_none()


# --- Stop ---------------------------------------------------------------------------------------


def test_an_answer_continues_across_pages_and_stop_keeps_it(
    slow_server: LiveServer, new_page: NewPage, problems: PageProblems
) -> None:
    page = new_page(slow_server)
    page.goto("/")
    tray = _open_tray(page)
    _send(tray, "Tell me everything about transformers.")
    text = _answers(tray).first.locator('[data-role="text"]')
    expect(tray.get_by_role("button", name="Stop")).to_be_visible()
    expect(text).to_contain_text("word3", timeout=ANSWER_WAIT_MS)

    # To another page while the answer streams: the tray reopens the conversation there
    # and follows the same answer (replayed from its first event, nothing twice).
    page.get_by_role("navigation", name="Main").get_by_role("link", name="Library").click()
    expect(page).to_have_title(re.compile("^Library"))
    tray = _tray(page)
    expect(tray).to_be_visible()
    expect(_questions(tray)).to_have_count(1)
    answer = _answers(tray).first
    text = answer.locator('[data-role="text"]')
    expect(text).to_contain_text("word12", timeout=ANSWER_WAIT_MS)
    assert text.inner_text().startswith("word1 word2 word3 ")
    assert text.inner_text().count("word1 ") == 1

    stop = tray.get_by_role("button", name="Stop")
    stop.click()
    expect(answer).to_have_attribute("data-status", "cancelled", timeout=ANSWER_WAIT_MS)
    expect(answer.locator('[data-role="stopped"]')).to_contain_text("Stopped")
    expect(stop).to_be_hidden()
    expect(tray.get_by_role("button", name="Send")).to_be_enabled()
    kept = text.inner_text()
    assert "word12" in kept and f"word{SLOW_WORDS}" not in kept

    # The server kept the partial answer: a reload shows it from the conversation.
    page.reload()
    tray = _tray(page)
    answer = _answers(tray).first
    expect(answer).to_have_attribute("data-status", "cancelled")
    stored = answer.locator('[data-role="text"]').inner_text()
    assert stored.startswith(kept.strip()[:60]) and f"word{SLOW_WORDS}" not in stored
    expect(answer.locator('[data-role="stopped"]')).to_be_visible()
    problems.assert_none()


HOSTILE_ANSWER = (
    "Here is **bold** text. <img src=x onerror=\"window.__xss='img'\">\n\n"
    "<script>window.__xss='script'</script> [a link](javascript:window.__xss='link') "
    '<a href="#" onclick="window.__xss=\'click\'">click me</a>'
)


async def hostile_answer(
    messages: list[ModelMessage], info: AgentInfo
) -> AsyncIterator[str | DeltaToolCalls]:
    async for chunk in _words(HOSTILE_ANSWER):
        yield chunk


@pytest.fixture
def hostile_server(tmp_path: Path) -> Iterator[LiveServer]:
    models = {"default": FunctionModel(stream_function=hostile_answer)}
    with serve(clean_settings(tmp_path / "data"), models=models) as live:
        yield live


def test_model_output_with_html_is_shown_as_text_never_run(
    hostile_server: LiveServer, new_page: NewPage, problems: PageProblems
) -> None:
    """A model's answer is rendered as text: script, event-handler attributes and
    javascript: links in it do nothing, while Markdown emphasis still renders."""
    page = new_page(hostile_server)
    page.goto("/library")
    tray = _open_tray(page)
    _send(tray, "Say something dangerous")
    answer = _answers(tray).last
    expect(answer).to_contain_text("click me", timeout=ANSWER_WAIT_MS)
    expect(answer).to_contain_text("<img src=x onerror=")
    expect(answer).to_contain_text("<script>window.__xss='script'</script>")
    expect(answer.locator("strong")).to_have_text("bold")
    assert answer.locator("img, script, [onclick], [onerror]").count() == 0
    for link in answer.locator("a").all():
        assert not (link.get_attribute("href") or "").lower().startswith("javascript:")
    answer.get_by_text("click me").click()
    assert page.evaluate("window.__xss") is None
    problems.assert_none()


async def citing_answer(
    messages: list[ModelMessage], info: AgentInfo
) -> AsyncIterator[str | DeltaToolCalls]:
    """Searches PubMed, then cites the first record it was shown, a key it was not shown,
    and a DOI of its own."""
    returns = [p for p in _last_request(messages).parts if isinstance(p, ToolReturnPart)]
    if not returns:
        arguments = json.dumps({"query": SEARCHED, "max_results": 5})
        yield {0: DeltaToolCall(name="search_pubmed", json_args=arguments, tool_call_id="c1")}
        return
    shown = str(returns[0].content)
    title = re.search(r"\[1\] (.+?)(?: \(|\n)", shown)
    assert title is not None, shown
    yield f"{title.group(1)} [1]. Transformers solved language [42] (doi:10.5555/invented.2)."


@pytest.fixture
def citing_server(tmp_path: Path, world: LiteratureWorld) -> Iterator[LiveServer]:
    models = {"default": FunctionModel(stream_function=citing_answer)}
    settings = clean_settings(tmp_path / "data")
    with serve(settings, source_transport=world.transport(), models=models) as live:
        yield live


def test_an_answer_shows_its_citations_checked(
    citing_server: LiveServer, new_page: NewPage, problems: PageProblems
) -> None:
    page = new_page(citing_server)
    page.goto("/library")
    tray = _open_tray(page)
    _send(tray, FIRST_MESSAGE)
    answer = _answers(tray).last
    summary = answer.get_by_test_id("chat-citations")
    expect(summary).to_contain_text(
        "2 citations: 1 supported, 0 weak, 0 unsupported, 1 invalid; 1 unverified reference",
        timeout=ANSWER_WAIT_MS,
    )
    expect(answer).to_contain_text("[citation removed: not in the evidence pack]")
    expect(answer).not_to_contain_text("[42]")
    expect(answer).to_contain_text("10.5555/invented.2 [unverified: not in the evidence pack]")
    expect(answer.get_by_role("heading", name="References")).to_be_visible()
    problems.assert_none()


# --- the tray's layout ------------------------------------------------------------------------

LAYOUT = """() => {
  const tray = document.getElementById("chat-tray").getBoundingClientRect();
  const log = document.querySelector('[data-testid="chat-log"]');
  const nested = [...log.querySelectorAll("*")].filter((node) => {
    const style = getComputedStyle(node);
    const scrolls = ["auto", "scroll"].includes(style.overflowY);
    return scrolls && node.scrollHeight > node.clientHeight + 1;
  }).map((node) => node.className);
  return {
    trayHeight: tray.height,
    logHeight: log.getBoundingClientRect().height,
    logScrolls: log.scrollHeight > log.clientHeight,
    nested,
    pageWidth: document.documentElement.scrollWidth,
    viewport: window.innerWidth,
  };
}"""


@pytest.fixture
def unreachable_server(tmp_path: Path) -> Iterator[LiveServer]:
    """No model, and no source can be reached: the library answers alone."""
    settings = clean_settings(tmp_path / "data")
    with serve(settings, source_transport=LiteratureWorld(offline=True).transport()) as live:
        yield live


@pytest.mark.parametrize("width", [1440, 390])
def test_the_tray_is_one_scrolling_log_over_the_page(
    unreachable_server: LiveServer, new_page: NewPage, problems: PageProblems, width: int
) -> None:
    """Offline, with objectives and the offline banner: both take one line each, the log
    is the one scroll area and fills the rest of the tray, and the page does not move
    when the tray opens. A work the library search listed is not listed again by the
    search of every source (which searched the library too, as no source answered)."""
    page = new_page(unreachable_server)
    page.set_viewport_size({"width": width, "height": 844})
    with open(LIBRARY_EXPORT, "rb") as export:
        imported = page.request.post(
            "/api/v1/library/imports",
            multipart={
                "file": {
                    "name": LIBRARY_EXPORT.name,
                    "mimeType": "text/plain",
                    "buffer": export.read(),
                }
            },
        )
    assert imported.ok, imported.text()
    page.goto("/library")
    main = page.locator("main")
    before = main.bounding_box()
    tray = _open_tray(page)
    after = main.bounding_box()
    assert before is not None and after is not None
    # Over the page: the page keeps its place and width (it loads on below, meanwhile).
    assert (after["x"], after["y"], after["width"]) == (before["x"], before["y"], before["width"])

    _send(tray, "eye diseases in cocker spaniels")
    answer = _answers(tray).first
    expect(answer).to_have_attribute("data-status", "complete", timeout=ANSWER_WAIT_MS)
    objectives = tray.get_by_role("region", name="Objectives")
    expect(objectives).to_be_visible()
    expect(objectives.get_by_role("button", name=re.compile("^Objectives"))).to_have_attribute(
        "aria-expanded", "false"
    )
    expect(objectives.get_by_test_id("chat-objectives-current")).to_contain_text("cocker")
    _send(tray, "what about aggressive behaviour?")
    expect(_answers(tray).nth(1)).to_have_attribute(
        "data-status", "complete", timeout=ANSWER_WAIT_MS
    )

    layout = page.evaluate(LAYOUT)
    assert layout["logScrolls"], layout  # enough answers to scroll
    assert layout["nested"] == [], layout  # nothing scrolls inside the log
    assert layout["logHeight"] >= 0.55 * layout["trayHeight"], layout
    assert layout["pageWidth"] <= layout["viewport"], layout

    # Each work is listed once in an answer: the library's card lists it, the search of
    # every source says it is above.
    cards = answer.get_by_test_id("payload-card")
    titles = [t.inner_text() for t in answer.locator(".chat-article-title").all()]
    assert titles and len(titles) == len(set(titles)), titles
    expect(cards.nth(1)).to_contain_text("already listed above")
    expect(answer).to_contain_text("could not be reached (no network connection from this server?)")
    expect(answer).not_to_contain_text("ConnectError")
    page.screenshot(
        path=str(SCREENSHOTS / f"tray-after-{'desktop' if width > 600 else 'mobile'}-test.png")
    )
    problems.assert_none()


def test_help_is_answered_here_and_never_sent_to_the_model(
    chat_server: LiveServer, script: ChatScript, new_page: NewPage, problems: PageProblems
) -> None:
    page = new_page(chat_server)
    page.goto("/search")
    tray = _open_tray(page)
    _send(tray, "/help")
    answer = _answers(tray).first
    expect(answer).to_have_attribute("data-status", "complete", timeout=ANSWER_WAIT_MS)
    expect(answer).to_contain_text("Type a question to ask the assistant, or use a command")
    expect(answer).to_contain_text("/pubmed QUERY: Search PubMed")
    assert script.prompts == []  # the model never saw it
    problems.assert_none()
