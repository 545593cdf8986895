"""The shareable report page, without the engine: everything a model or a user wrote is
shown and nothing of it runs (hostile Markdown and HTML in every field), the page needs
nothing from anywhere else, its policy allows its own stylesheet only; and the storage of
pages in the data directory or at an fsspec URL, under unguessable tokens only."""

from __future__ import annotations

import base64
import hashlib
import uuid
from pathlib import Path
from typing import Any

import pytest
from lxml import html as lxml_html

from scholarstream.errors import ConflictError, NotFoundError
from scholarstream.research import (
    CONTENT_SECURITY_POLICY,
    PAGE_CSS,
    ExternalReport,
    LLMResult,
    LLMResultStatus,
    Research,
    ResearchStatus,
    ShareStorage,
    new_token,
    render_markdown,
    render_share_page,
    share_location,
)
from scholarstream.settings import load_settings
from tests.research.builders import ANTHROPIC, GOOGLE, LATER, OPENAI, T0, research

HOSTILE = """\
# Findings

<script>alert('model')</script>
<img src=x onerror="alert('img')">
<iframe src="https://evil.example/frame"></iframe>
<style>body{display:none}</style>
<a href="javascript:alert('raw link')">raw link</a>
[markdown link](javascript:alert('md'))
[data link](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)
[vb](vbscript:msgbox(1))
![tracker](https://evil.example/pixel.png)
<div onclick="alert('div')" style="position:fixed">overlay</div>
[good source](https://pubmed.ncbi.nlm.nih.gov/12345/)

| trial | n |
|---|---|
| SURMOUNT-1 | 2539 |
"""


def completed(**fields: object) -> Research:
    results = [
        LLMResult(
            model=OPENAI,
            status=LLMResultStatus.COMPLETED,
            content=HOSTILE,
            started_at=T0,
            completed_at=T0,
        ),
        LLMResult(
            model=ANTHROPIC,
            status=LLMResultStatus.FAILED,
            error="<b onmouseover=alert(1)>HTTP 500</b> from the provider",
            error_code="llm_error",
            attempt=2,
            started_at=T0,
            completed_at=T0,
        ),
    ]
    values: dict[str, Any] = {
        "llm_results": results,
        "synthesized_result": HOSTILE.replace("Findings", "Synthesis [M1]"),
        "external_reports": [
            ExternalReport(
                title="<script>alert('title')</script> EMA assessment",
                content=HOSTILE,
                source="javascript:alert('source')",
            ),
            ExternalReport(
                title="FDA label", content="Approved 2023.", source="https://www.fda.gov/label"
            ),
        ],
        "completed_at": LATER,
        "title": "<img src=x onerror=alert('title')> Tirzepatide",
        "prompt": "Is tirzepatide safe?\n<script>alert('prompt')</script>",
        **fields,
    }
    return research(ResearchStatus.COMPLETED, **values)


def page_of(text: str) -> lxml_html.HtmlElement:
    return lxml_html.document_fromstring(text)


def test_hostile_model_output_is_shown_as_text_and_never_runs() -> None:
    page = page_of(render_share_page(completed(), now=LATER))

    assert page.xpath("//script") == []
    assert page.xpath("//iframe | //img | //object | //embed | //form | //input") == []
    assert len(page.xpath("//style")) == 1  # the page's own, in <head>
    assert page.xpath("//body//style") == []
    for element in page.iter():
        for name, value in element.attrib.items():
            assert not name.lower().startswith("on"), (element.tag, name)
            assert name.lower() != "style", element.tag
            assert not value.strip().lower().startswith(("javascript:", "data:", "vbscript:"))
    hrefs = [a.get("href") for a in page.xpath("//a[@href]")]
    assert set(hrefs) == {
        "https://pubmed.ncbi.nlm.nih.gov/12345/",
        "https://evil.example/pixel.png",  # an image becomes a link: nothing loads
        "https://www.fda.gov/label",
    }
    for link in page.xpath("//a[@href]"):
        assert set(link.get("rel", "").split()) >= {"noopener", "noreferrer", "nofollow"}
    # The hostile text is still there for the reader to see, as text.
    text = page.text_content()
    assert "<script>alert('model')</script>" in text
    assert "alert('prompt')" in text and "alert('title')" in text
    assert "<b onmouseover=alert(1)>HTTP 500</b> from the provider" in text


def test_the_page_has_every_part_of_the_research() -> None:
    research = completed()
    page = page_of(render_share_page(research, now=LATER))

    assert page.findtext(".//title").startswith("<img src=x onerror=alert('title')> Tirzepatide")
    assert page.xpath("string(//h1)") == research.title
    assert page.xpath("string(//p[@class='question'])") == research.prompt
    synthesis = page.xpath("//section[@class='synthesis']//h1")[0]
    assert synthesis.text_content() == "Synthesis [M1]"
    table = page.xpath("//section[@class='synthesis']//table")[0]
    assert "SURMOUNT-1" in table.text_content()
    reports = page.xpath("//section[@class='reports']/article")
    assert [r.get("class") for r in reports] == ["report completed", "report failed"]
    assert [r.xpath("string(.//span[@class='model'])") for r in reports] == [OPENAI, ANTHROPIC]
    assert reports[1].xpath("string(.//span[@class='attempt'])") == "attempt 2"
    error = reports[1].xpath("string(.//p[@class='error'])")
    assert error == "<b onmouseover=alert(1)>HTTP 500</b> from the provider"
    external = page.xpath("//section[@class='external']/article")
    assert [e.xpath("string(h3)") for e in external] == [
        "<script>alert('title')</script> EMA assessment",
        "FDA label",
    ]
    # A source that is no web address is shown, not linked.
    assert external[0].xpath(".//p[@class='source']/a") == []
    assert "javascript:alert('source')" in external[0].xpath("string(.//p[@class='source'])")
    meta = page.xpath("string(//p[@class='meta'])")
    assert "1 of 2 models answered" in meta and f"synthesised by {GOOGLE}" in meta


def test_the_page_loads_nothing_and_allows_only_its_own_stylesheet() -> None:
    page = page_of(render_share_page(completed(), now=LATER))
    for element in page.iter():
        assert element.get("src") is None
    assert page.xpath("//link") == []
    (policy,) = page.xpath("//meta[@http-equiv='Content-Security-Policy']/@content")
    assert policy == CONTENT_SECURITY_POLICY
    assert "default-src 'none'" in policy and "script-src" not in policy
    (style,) = page.xpath("//style")
    digest = base64.b64encode(hashlib.sha256(style.text.encode()).digest()).decode()
    assert style.text == PAGE_CSS
    assert f"style-src 'sha256-{digest}'" in policy
    assert page.xpath("//meta[@name='robots']/@content") == ["noindex, nofollow"]
    assert page.xpath("//meta[@name='referrer']/@content") == ["no-referrer"]


def test_a_research_with_one_answer_says_synthesis_not_available() -> None:
    one = research(
        ResearchStatus.COMPLETED,
        llm_results=[LLMResult(model=OPENAI, status=LLMResultStatus.COMPLETED, content="Yes.")],
    )
    page = page_of(render_share_page(one, now=LATER))
    assert "Synthesis not available" in page.xpath("string(//section[@class='synthesis'])")
    assert page.xpath("//section[@class='external']") == []


def test_only_a_completed_research_has_a_page() -> None:
    with pytest.raises(ConflictError):
        render_share_page(research(ResearchStatus.SYNTHESIZING), now=LATER)


@pytest.mark.parametrize(
    ("markdown", "expected"),
    [
        ("**bold** and `code`", "<p><strong>bold</strong> and <code>code</code></p>\n"),
        ("<b>raw</b>", "<p>&lt;b&gt;raw&lt;/b&gt;</p>\n"),
        (
            "[x](https://example.org)",
            '<p><a href="https://example.org" rel="noopener noreferrer nofollow">x</a></p>\n',
        ),
        ("[x](javascript:alert(1))", "<p>[x](javascript:alert(1))</p>\n"),
        ("[x](/relative)", '<p><a rel="noopener noreferrer nofollow">x</a></p>\n'),
    ],
)
def test_markdown_is_rendered_and_sanitised(markdown: str, expected: str) -> None:
    assert render_markdown(markdown) == expected


# --- storage -----------------------------------------------------------------------------


async def test_pages_are_stored_under_their_token_at_an_fsspec_url() -> None:
    storage = ShareStorage(f"memory://shares-{uuid.uuid4().hex}")
    token = new_token()
    assert len(token) == 43
    location = await storage.write(token, "<p>first</p>")
    assert location == storage.url_of(token) and location.startswith("memory://")
    assert location.endswith(f"/{token}.html")
    assert await storage.read(token) == "<p>first</p>"
    await storage.write(token, "<p>again</p>")  # rewritten, not added
    assert await storage.read(token) == "<p>again</p>"


@pytest.mark.parametrize(
    "token",
    [
        "",
        "../../etc/passwd",
        "a" * 42,
        "a" * 44,
        "a" * 40 + "/..",
        "a" * 39 + ".htm",
        "%2e%2e" + "a" * 37,
    ],
)
async def test_anything_but_a_token_is_not_found(token: str, tmp_path: Path) -> None:
    (tmp_path / "secret.html").write_text("secret")
    storage = ShareStorage(str(tmp_path / "shares"))
    with pytest.raises(NotFoundError):
        await storage.read(token)
    with pytest.raises(NotFoundError):
        await storage.write(token, "<p>x</p>")


async def test_the_default_store_is_the_shares_directory_of_the_data_directory(
    tmp_path: Path,
) -> None:
    settings = load_settings(data_dir=tmp_path)
    assert share_location(settings) == str((tmp_path / "shares").resolve())
    storage = ShareStorage.for_settings(settings)
    token = new_token()
    await storage.write(token, "<p>local</p>")
    assert (tmp_path / "shares" / f"{token}.html").read_text() == "<p>local</p>"
    with pytest.raises(NotFoundError):
        await storage.read(new_token())
    remote = load_settings(data_dir=tmp_path, research={"share_url": "memory://elsewhere"})
    assert share_location(remote) == "memory://elsewhere"


def test_sharing_is_on_unless_turned_off(tmp_path: Path) -> None:
    assert load_settings(data_dir=tmp_path).research.share_reports
    off = load_settings(data_dir=tmp_path, research={"share_reports": False})
    assert not off.research.share_reports


async def test_a_grounded_research_shares_its_audited_citations_and_references() -> None:
    from scholarstream.grounding import CitationVerifier, EvidencePack
    from scholarstream.papers import Identifiers, Paper

    trial = Paper(
        title="Tirzepatide once weekly for obesity",
        abstract="Tirzepatide reduced body weight by 20 percent over 72 weeks.",
        ids=Identifiers(doi="10.1056/NEJMoa2206038", pmid="35658024"),
        year=2022,
    )
    pack = EvidencePack.of("tirzepatide", [(trial, "pubmed", 1.0)])
    answer = "Tirzepatide reduced body weight by 20 percent [1]. It cures diabetes [4]."
    synthesis = "All agree [M1]: tirzepatide reduced body weight [1] (doi:10.9999/invented.one)."
    verifier = CitationVerifier()
    audited = (
        completed()
        .llm_results[0]
        .model_copy(update={"content": answer, "audit": await verifier.verify(answer, pack)})
    )
    shared = completed(
        evidence=pack,
        llm_results=[audited],
        synthesized_result=synthesis,
        synthesis_audit=await verifier.verify(synthesis, pack),
    )
    page = page_of(render_share_page(shared))
    text = page.text_content() or ""
    assert (
        "1 citation: 1 supported, 0 weak, 0 unsupported, 0 invalid; 1 unverified reference" in text
    )
    assert "2 citations: 1 supported, 0 weak, 0 unsupported, 1 invalid" in text
    assert "[citation removed: not in the evidence pack]" in text and "[4]" not in text
    assert "10.9999/invented.one [unverified: not in the evidence pack]" in text
    references = page.xpath('//div[contains(@class, "references")]//li')
    assert len(references) == 1 and "[1]" in (references[0].text_content() or "")
    links = [a.get("href") for a in page.xpath('//div[contains(@class, "references")]//a')]
    assert links == [
        "https://doi.org/10.1056/nejmoa2206038",
        "https://pubmed.ncbi.nlm.nih.gov/35658024/",
    ]
