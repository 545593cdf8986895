"""The web UI's one Markdown renderer (static/shared/markdown.js) in Chromium.

Against the server's sanitiser (research.render_markdown: markdown-it + nh3): for a set of
inputs, the client's DOM keeps the same tags, the same links (address and text), the same
text, and no attribute the sanitiser would drop beyond the client's presentation (heading
level, table wrapper, scope, target). In the product: the same Markdown answered by a model
looks the same in a chat answer and in a research report, and is safe in both."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from html.parser import HTMLParser

import httpx
import pytest
from playwright.sync_api import Page, expect
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart
from pydantic_ai.models.function import AgentInfo, DeltaToolCalls, FunctionModel

from scholarstream.research import render_markdown
from scholarstream.research.core import ALLOWED_TAGS
from tests.research.builders import OPENAI
from tests.research.conftest import PROVIDER_KEYS
from tests.research.engine_world import SYNTHESIZER
from tests.web.live import LiveServer, NewPage, PageProblems, clean_settings, serve

pytestmark = pytest.mark.browser

MODULE = "/static/app/shared/markdown.js"
SETTLE_MS = 20_000

# What the client adds for the page's sake, on top of what the sanitiser keeps.
PRESENTATION = {
    "div": {"class"},  # div.md-table: a wide table scrolls
    "h3": {"class"},
    "h4": {"class"},
    "h5": {"class"},
    "h6": {"class"},
    "th": {"scope"},
    "a": {"target"},  # web links open in a new tab
}
# The attributes nh3 keeps (research/core/safe_markdown.py), and the rel it sets on links.
KEPT_ATTRIBUTES = {"a": {"href", "title", "rel"}, "ol": {"start"}}
REL = "noopener noreferrer nofollow"

CASES = {
    "headings": "# Title\n\n## Part\n\n### Detail\n\nSetext\n======\n\nSub\n---",
    "emphasis": "Some *em*, _em too_, **strong**, __strong__, ***both***, ~~gone~~ and `x < 1`.",
    "escapes": r"Not \*emphasis\*, snake_case_name, 2 * 3 * 4 and &amp; &copy; &#169;.",
    "lists": "Intro:\n- one\n- two\n  - nested\n\n1. first\n2. second\n\n3. third",
    "loose lists": "- a\n\n- b\n\n1) c\n\n2) d\n\n* e",
    "chat answer": "Here are two:\n1. **Alpha** trial\n2. Beta, see `NCT01`\n\nDone.",
    "table": "| Drug | Events |\n|---|---:|\n| A | **3** |\n| B | 4 |",
    "links": (
        "[web](https://example.org/page) [plain](http://example.org/p) "
        '[titled](https://example.org/t "A title") [mail](mailto:a@example.org) '
        "<https://example.org/auto> <b@example.org> [relative](/api/v1/x) "
        "[ftp](ftp://example.org/f) [bad](javascript:alert(1)) [vb](vbscript:x) "
        "[data](data:text/html,x) https://example.org/bare"
    ),
    "images": (
        "![a chart](https://example.org/c.png) ![](data:image/png;base64,AAAA) ![x](javascript:y)"
    ),
    "raw html": (
        '<script>window.__xss = "script"</script>\n\n'
        '<img src=x onerror="window.__xss = 1"> <a href="javascript:x" onclick="y">a</a> '
        "<b>bold?</b> <style>p{}</style>"
    ),
    "blocks": (
        "> quoted *text*\n> more\n\n```python\nprint('<b>')\n```\n\n"
        "    indented <code>\n\n***\n\nend"
    ),
}


@dataclass
class Dom:
    """What a piece of HTML shows: its tags, its links, its attributes and its text."""

    tags: set[str] = field(default_factory=set)
    links: list[tuple[str | None, str]] = field(default_factory=list)
    attributes: dict[str, set[str]] = field(default_factory=dict)
    rels: set[str | None] = field(default_factory=set)
    text: str = ""


class _Reader(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.dom = Dom()
        self._link: list[str] | None = None
        self._href: str | None = None
        self._text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.dom.tags.add(tag)
        self.dom.attributes.setdefault(tag, set()).update(name for name, _ in attrs)
        if tag == "a":
            values = dict(attrs)
            self._link, self._href = [], values.get("href")
            self.dom.rels.add(values.get("rel"))

    def handle_endtag(self, tag: str) -> None:
        if tag == "a" and self._link is not None:
            self.dom.links.append((self._href, "".join(self._link)))
            self._link = None

    def handle_data(self, data: str) -> None:
        self._text.append(data)
        if self._link is not None:
            self._link.append(data)

    def read(self, html: str) -> Dom:
        self.feed(html)
        self.close()
        self.dom.text = re.sub(r"\s+", "", "".join(self._text))
        return self.dom


def _dom(html: str) -> Dom:
    return _Reader().read(html)


def _server_view(dom: Dom) -> Dom:
    """The client's DOM as the server shows it: headings two levels up (the page has its
    own h1 and h2), no table wrapper, no presentational attributes, <br> for soft breaks."""
    shifted = {f"h{n}": f"h{n - 2}" for n in range(3, 7)}
    tags = {shifted.get(tag, tag) for tag in dom.tags} - {"div"}
    attributes = {
        shifted.get(tag, tag): names - PRESENTATION.get(tag, set())
        for tag, names in dom.attributes.items()
        if tag != "div"
    }
    return Dom(tags, dom.links, attributes, dom.rels, dom.text)


_RENDER = """async ([module, cases]) => {
  const { renderMarkdown } = await import(module);
  const out = {};
  for (const [name, text] of Object.entries(cases)) {
    const box = document.createElement("div");
    box.append(renderMarkdown(text));
    out[name] = box.innerHTML;
  }
  return out;
}"""


def test_the_shared_renderer_keeps_what_the_servers_sanitiser_keeps(static_page: Page) -> None:
    rendered: dict[str, str] = static_page.evaluate(_RENDER, [MODULE, CASES])
    for name, text in CASES.items():
        server = _dom(render_markdown(text))
        client = _dom(rendered[name])
        assert client.tags - {"div"} <= ALLOWED_TAGS, name
        seen = _server_view(client)
        assert seen.tags - {"br"} == server.tags - {"br"}, name
        assert seen.links == server.links, name
        assert seen.rels <= {REL}, name
        for tag, names in seen.attributes.items():
            assert names <= KEPT_ATTRIBUTES.get(tag, set()), (name, tag, names)
            assert names == server.attributes.get(tag, set()), (name, tag, names)
        assert seen.text == server.text, name


def test_the_cases_show_each_rule(static_page: Page) -> None:
    # The comparison above is only as good as its inputs: they reach every kind of tag a
    # report may have, and the links that must not be links.
    rendered: dict[str, str] = static_page.evaluate(_RENDER, [MODULE, CASES])
    tags = set().union(*(_server_view(_dom(html)).tags for html in rendered.values()))
    assert tags >= {"h1", "h2", "em", "strong", "s", "code", "ul", "ol", "li", "table", "th"}
    assert tags >= {"td", "a", "blockquote", "pre", "hr", "p"}
    links = _dom(rendered["links"]).links
    assert (None, "relative") in links
    assert (None, "ftp") in links
    assert "javascript:alert(1)" in _dom(rendered["links"]).text
    assert not {"script", "img", "style"} & tags


# --- the same answer in chat and in research ----------------------------------------------

ANSWER = (
    "# Findings\n\n"
    "Events were *mostly* mild and **transient**.\n\n"
    "- nausea\n- vomiting\n\n"
    "1. first trial\n2. second trial\n\n"
    "| Event | Trials |\n|---|---|\n| Nausea | 2 |\n\n"
    "See [the trial](https://example.org/trial), [its registry](http://example.org/reg) "
    "and [this](javascript:window.__xss='link').\n\n"
    "<script>window.__xss='script'</script> <img src=x onerror=\"window.__xss='img'\">"
)


async def _answer(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    return ModelResponse(parts=[TextPart(ANSWER)])


async def _stream(
    messages: list[ModelMessage], info: AgentInfo
) -> AsyncIterator[str | DeltaToolCalls]:
    for chunk in re.findall(r"\S+\s*|\s+", ANSWER):
        yield chunk


@pytest.fixture(scope="module")
def answering_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    """Every model answers ANSWER: chat (streaming) and research (one model, no synthesis)."""
    model = FunctionModel(_answer, stream_function=_stream, model_name=OPENAI)
    settings = clean_settings(
        tmp_path_factory.mktemp("markdown-data"),
        llm={
            "providers": PROVIDER_KEYS,
            "roles": {"default": OPENAI, "synthesis": SYNTHESIZER},
            "timeout_seconds": 10.0,
        },
        research={"title_role": None},
    )
    with serve(settings, engine=True, models={OPENAI: model, "default": model}) as live:
        yield live


def test_the_same_answer_renders_the_same_safe_dom_in_chat_and_research(
    answering_server: LiveServer, new_page: NewPage, problems: PageProblems
) -> None:
    with httpx.Client(base_url=answering_server.base_url, timeout=20) as client:
        draft = client.post(
            "/api/v1/research/draft", json={"prompt": "Safety", "selectedLlms": [OPENAI]}
        )
        assert draft.status_code == 201, draft.text
        research_id = draft.json()["id"]
        started = client.post("/api/v1/research", json={"researchId": research_id})
        assert started.status_code == 200, started.text

    page = new_page(answering_server)
    page.goto(f"/research/{research_id}")
    expect(page.get_by_test_id("research-status")).to_have_text("Completed", timeout=SETTLE_MS)
    report = page.get_by_test_id("model-report")
    expect(report.get_by_role("heading", name="Findings")).to_be_visible()

    page.get_by_role("button", name="Assistant", exact=True).click()
    tray = page.get_by_role("complementary", name="Assistant")
    box = tray.get_by_label("Message to the assistant")
    box.fill("What were the events?")
    box.press("Enter")
    answer = tray.locator('[data-role="assistant"]').last
    expect(answer).to_have_attribute("data-status", "complete", timeout=SETTLE_MS)
    chat = answer.locator('[data-role="text"]')

    assert chat.inner_html() == report.inner_html()
    for view in (chat, report):
        expect(view.get_by_role("heading", name="Findings", level=3)).to_be_visible()
        expect(view.locator("em")).to_have_text("mostly")
        expect(view.locator("strong")).to_have_text("transient")
        expect(view.locator("ul > li")).to_have_text(["nausea", "vomiting"])
        expect(view.locator("ol > li")).to_have_text(["first trial", "second trial"])
        expect(view.locator("table td")).to_have_text(["Nausea", "2"])
        links = view.get_by_role("link")
        expect(links).to_have_text(["the trial", "its registry"])
        expect(links.first).to_have_attribute("href", "https://example.org/trial")
        expect(links.last).to_have_attribute("rel", REL)
        expect(view).to_contain_text("[this](javascript:window.__xss='link')")
        expect(view).to_contain_text("<script>window.__xss='script'</script>")
        expect(view).to_contain_text("<img src=x onerror=")
        assert view.locator("script, img, style, [onerror], [onclick], [style]").count() == 0
    assert page.evaluate("window.__xss") is None
    problems.assert_none()
