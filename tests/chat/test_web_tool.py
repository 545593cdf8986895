"""``read_web_page`` through ``execute_tool``: web sites served by ``httpx.MockTransport``
(routed by the Host header, since plain http goes to the checked address), host names
resolved by a fake resolver (never DNS). And ``/read URL`` through the chat API in offline
mode."""

from __future__ import annotations

import asyncio
import dataclasses
import ipaddress
import socket
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest

import scholarstream.chat  # noqa: F401  (registers the built-ins)
from scholarstream.chat.continuity import QuerySent
from scholarstream.chat.core import ChatContext
from scholarstream.chat.tools import (
    ToolArgumentsError,
    ToolContext,
    ToolResult,
    execute_tool,
    get_tool,
)
from scholarstream.chat.tools.builtin import WebPageReader
from scholarstream.errors import (
    InvalidInputError,
    NotFoundError,
    SourceError,
    SourceUnavailableError,
)
from scholarstream.public_addresses import is_public, system_resolver
from scholarstream.runtime import Runtime
from scholarstream.settings import load_settings
from tests.chat.services import tool_services
from tests.chat.world import read_events
from tests.helpers import make_runtime
from tests.web.live import clean_settings, serve

PUBLIC = "93.184.216.34"
PUBLIC_V6 = "2606:2800:220:1:248:1893:25c8:1946"
ACME = "www.acme.example"
XML_DECLARATION = '<?xml version="1.0" encoding="utf-8"?>'

Handler = Callable[[httpx.Request], httpx.Response | Awaitable[httpx.Response]]


@dataclass
class Web:
    """Web sites by host name (the request's Host header) and path; every request kept."""

    pages: dict[tuple[str, str], Handler | httpx.Response] = field(default_factory=dict)
    requests: list[httpx.Request] = field(default_factory=list)

    def page(self, url: str, answer: Handler | httpx.Response) -> None:
        parsed = httpx.URL(url)
        self.pages[(parsed.host, parsed.path)] = answer

    async def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        answer = self.pages.get((request.headers["host"].split(":")[0], request.url.path))
        if answer is None:
            return httpx.Response(404, text="Not here")
        if isinstance(answer, httpx.Response):
            return answer
        response = answer(request)
        return await response if isinstance(response, Awaitable) else response


@dataclass
class Resolver:
    """Host names and their addresses; any other name does not exist."""

    names: Mapping[str, Sequence[str]] = field(default_factory=dict)
    asked: list[str] = field(default_factory=list)

    async def __call__(self, host: str, port: int) -> list[str]:
        self.asked.append(host)
        if host not in self.names:
            raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
        return list(self.names[host])


class CountedBody(httpx.AsyncByteStream):
    """A body in chunks that counts how many were read (a limit must stop reading)."""

    def __init__(self, chunks: list[bytes]) -> None:
        self.chunks = chunks
        self.read = 0

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for chunk in self.chunks:
            self.read += 1
            yield chunk


def html(body: str, *, head: str = "<title>Acme pipeline</title>") -> httpx.Response:
    page = f"<!doctype html><html><head>{head}</head><body>{body}</body></html>"
    return httpx.Response(200, text=page, headers={"content-type": "text/html; charset=utf-8"})


ACME_PAGE = """
<header><a href="/">Acme home</a> <span>Site banner</span></header>
<nav><ul><li><a href="/about">About</a></li><li>Careers menu</li></ul></nav>
<script>window.alert("tracking")</script>
<style>.hero { color: red }</style>
<main>
  <h1>Our  pipeline</h1>
  <p>Acme develops   <b>osimertinib</b> combinations
     for EGFR-mutant NSCLC.</p>
  <!-- a comment that is not text -->
  <div hidden>Hidden promo</div>
  <div style="display: none">Invisible text</div>
  <h2>Programmes</h2>
  <ul><li>ACM-101, phase 2</li><li>ACM-202, phase 1</li></ul>
  <table><tr><th>Drug</th><th>Phase</th></tr><tr><td>ACM-101</td><td>2</td></tr></table>
  <p>Read the <a href="/pipeline/acm-101#top">ACM-101 programme</a>.</p>
  <button>Subscribe</button>
</main>
<footer>Copyright Acme footer</footer>
"""


@dataclass
class World:
    web: Web
    resolver: Resolver
    runtime: Runtime

    async def read(self, url: str) -> ToolResult:
        tool = dataclasses.replace(get_tool("read_web_page"), executor=WebPageReader(self.resolver))
        context = ToolContext(
            services=tool_services(self.runtime),
            owner_id=uuid.uuid4(),
            chat=ChatContext.model_validate({"current_page": "home"}),
        )
        return await execute_tool(tool, {"url": url}, context, lambda _: None)


@pytest.fixture
def chat_settings() -> dict[str, Any]:
    """Overrides of the ``chat`` settings (a test changes it before asking for ``world``)."""
    return {}


@pytest.fixture
async def world(data_dir: Path, chat_settings: dict[str, Any]) -> AsyncIterator[World]:
    web = Web()
    resolver = Resolver(
        {
            ACME: [PUBLIC],
            "acme.example": [PUBLIC_V6, PUBLIC],
            "intranet.acme.example": ["10.0.0.7"],
            "sneaky.example": [PUBLIC, "192.168.1.20"],
            "metadata.example": ["::ffff:169.254.169.254"],
        }
    )
    settings = load_settings(data_dir=data_dir, chat=chat_settings)
    runtime = make_runtime(settings, source_transport=httpx.MockTransport(web))
    yield World(web, resolver, runtime)
    await runtime.close()


# --- the tool ----------------------------------------------------------------------------------


def test_read_web_page_is_a_global_research_tool_with_a_read_command() -> None:
    tool = get_tool("read_web_page")
    assert (tool.category, tool.is_global, tool.payload_type) == ("research", True, None)
    assert (tool.command, tool.command_argument, tool.query_argument) == ("read", "url", "url")
    assert tool.input_schema["required"] == ["url"]
    assert tool.input_schema["additionalProperties"] is False


async def test_an_html_page_becomes_its_title_url_and_main_text(world: World) -> None:
    world.web.page(f"http://{ACME}/pipeline", html(ACME_PAGE))

    result = await world.read(f"http://{ACME}/pipeline")

    lines = result.text.splitlines()
    assert lines[:2] == ["Title: Acme pipeline", f"URL: http://{ACME}/pipeline"]
    text = result.text
    assert "# Our pipeline" in text
    assert "Acme develops osimertinib combinations for EGFR-mutant NSCLC." in text
    assert "## Programmes" in text
    assert "- ACM-101, phase 2\n- ACM-202, phase 1" in text
    assert "Drug | Phase\nACM-101 | 2" in text
    for chrome in (
        "tracking",
        "color: red",
        "Careers menu",
        "Site banner",
        "footer",
        "comment",
        "Hidden promo",
        "Invisible",
        "Subscribe",
    ):
        assert chrome not in text, chrome
    assert f"- ACM-101 programme: http://{ACME}/pipeline/acm-101" in text
    assert "not the user's instructions" in text
    assert result.queries == [
        QuerySent(tool="read_web_page", query=f"http://{ACME}/pipeline", source=ACME, results=1)
    ]
    assert result.payload is None


async def test_plain_http_goes_to_the_checked_address_and_https_by_name(world: World) -> None:
    world.web.page(f"http://{ACME}/", html("<p>Plain</p>"))
    world.web.page("https://acme.example/", html("<p>Secure</p>"))

    await world.read(f"http://{ACME}/")
    await world.read("https://acme.example/")

    plain, secure = world.web.requests
    # The name is not looked up a second time on the way: a name cannot change its answer.
    assert (plain.url.host, plain.headers["host"]) == (PUBLIC, ACME)
    # https: the certificate check pins the name.
    assert (secure.url.host, secure.headers["host"]) == ("acme.example", "acme.example")
    assert world.resolver.asked == [ACME, "acme.example"]


async def test_a_page_is_read_without_the_clients_cookies(world: World) -> None:
    world.runtime.sources.http.client.cookies.set("session", "someone-else", domain=ACME)
    world.web.page(f"https://{ACME}/", html("<p>Hello</p>"))

    await world.read(f"https://{ACME}/")

    assert "cookie" not in world.web.requests[0].headers


async def test_a_bare_host_is_read_over_https(world: World) -> None:
    world.web.page(f"https://{ACME}/news", html("<p>News</p>"))

    result = await world.read(f"{ACME}/news")

    assert result.text.splitlines()[1] == f"URL: https://{ACME}/news"


@pytest.mark.parametrize(
    ("url", "says"),
    [
        ("http://127.0.0.1/", "non-public address (127.0.0.1)"),
        ("http://127.1:8080/admin", "non-public address (127.0.0.1)"),
        ("http://2130706433/", "non-public address (127.0.0.1)"),
        ("http://0x7f.1/", "non-public address (127.0.0.1)"),
        ("http://localhost/", "on this server itself"),
        ("http://LOCALHOST./admin", "on this server itself"),
        ("http://api.localhost/", "on this server itself"),
        ("http://[::1]/", "non-public address (::1)"),
        ("http://[::ffff:127.0.0.1]/", "non-public address"),
        ("http://169.254.169.254/latest/meta-data/", "non-public address"),
        ("http://10.1.2.3/", "non-public address"),
        ("http://0.0.0.0:8000/", "non-public address"),
        ("file:///etc/passwd", "a file: address"),
        ("ftp://ftp.example.org/pub/file.txt", "a ftp: address"),
        ("javascript:alert(1)", "a javascript: address"),
        ("/etc/passwd", "not a full web address"),
        ("http://user:secret@acme.example/", "user name or password"),
    ],
)
async def test_addresses_off_the_public_web_are_refused(world: World, url: str, says: str) -> None:
    with pytest.raises(InvalidInputError) as refused:
        await world.read(url)

    assert says in refused.value.message
    assert refused.value.hint
    assert world.web.requests == []


@pytest.mark.parametrize(
    ("address", "public"),
    [
        (PUBLIC, True),
        (PUBLIC_V6, True),
        ("2002:5db8:d822::1", True),  # 6to4 of a public address
        ("100.64.0.1", False),  # shared (carrier-grade NAT)
        ("192.0.2.10", False),  # documentation
        ("224.0.0.251", False),
        ("240.0.0.1", False),
        ("255.255.255.255", False),
        ("fe80::1", False),
        ("fc00::1", False),
        ("fec0::1", False),
        ("ff02::1", False),
        ("::", False),
        ("2002:7f00:1::", False),  # 6to4 of 127.0.0.1
        ("64:ff9b::a00:1", False),  # NAT64 of 10.0.0.1
    ],
)
def test_only_globally_routable_unicast_addresses_are_public(address: str, public: bool) -> None:
    assert is_public(ipaddress.ip_address(address)) is public


@pytest.mark.parametrize(
    ("host", "address"),
    [
        ("intranet.acme.example", "10.0.0.7"),
        ("sneaky.example", "192.168.1.20"),  # one private answer among public ones
        ("metadata.example", "::ffff:"),
    ],
)
async def test_a_host_resolving_to_a_private_address_is_refused(
    world: World, host: str, address: str
) -> None:
    with pytest.raises(InvalidInputError) as refused:
        await world.read(f"https://{host}/wiki")

    assert refused.value.message.startswith(
        f"https://{host}/wiki is on a non-public address: {host} resolves to {address}"
    )
    assert "Only public web pages" in (refused.value.hint or "")
    assert world.web.requests == []


@pytest.mark.parametrize(
    ("location", "says"),
    [
        ("http://10.0.0.1/admin", "non-public address (10.0.0.1)"),
        ("http://intranet.acme.example/", "intranet.acme.example resolves to 10.0.0.7"),
        ("http://localhost:8080/", "on this server itself"),
        ("file:///etc/passwd", "a file: address"),
    ],
)
async def test_a_redirect_off_the_public_web_is_refused(
    world: World, location: str, says: str
) -> None:
    world.web.page(f"https://{ACME}/go", httpx.Response(302, headers={"location": location}))

    with pytest.raises(InvalidInputError) as refused:
        await world.read(f"https://{ACME}/go")

    assert refused.value.message.startswith(f"https://{ACME}/go redirects to ")
    assert says in refused.value.message
    assert [str(r.url) for r in world.web.requests] == [f"https://{ACME}/go"]


async def test_redirects_are_followed_and_the_final_address_reported(world: World) -> None:
    world.web.page(f"http://{ACME}/old", httpx.Response(301, headers={"location": "/new"}))
    world.web.page(
        f"http://{ACME}/new",
        httpx.Response(302, headers={"location": "https://acme.example/final#part"}),
    )
    world.web.page("https://acme.example/final", html("<p>Arrived.</p>", head="<title>End</title>"))

    result = await world.read(f"http://{ACME}/old")

    assert result.text.splitlines()[:3] == [
        "Title: End",
        "URL: https://acme.example/final",
        f"(Redirected from http://{ACME}/old.)",
    ]
    assert "Arrived." in result.text
    assert result.queries[0].query == f"http://{ACME}/old"
    assert world.resolver.asked == [ACME, ACME, "acme.example"]


async def test_endless_redirects_stop(world: World) -> None:
    world.web.page(f"https://{ACME}/loop", httpx.Response(302, headers={"location": "/loop"}))

    with pytest.raises(SourceError, match="redirects more than 5 times"):
        await world.read(f"https://{ACME}/loop")
    assert len(world.web.requests) == 6


async def test_a_missing_page_is_not_found(world: World) -> None:
    with pytest.raises(NotFoundError) as missing:
        await world.read(f"https://{ACME}/gone")

    assert missing.value.message == f"https://{ACME}/gone does not exist (HTTP 404)."
    assert "right link" in (missing.value.hint or "")


@pytest.mark.parametrize(
    ("status", "error", "says"),
    [
        (403, SourceError, "needs a login or blocks automated readers"),
        (503, SourceUnavailableError, "could not serve"),
        (429, SourceUnavailableError, "could not serve"),
    ],
)
async def test_a_refusing_or_failing_site_is_a_clear_error(
    world: World, status: int, error: type[SourceError], says: str
) -> None:
    world.web.page(f"https://{ACME}/page", httpx.Response(status, text="No"))

    with pytest.raises(error) as failed:
        await world.read(f"https://{ACME}/page")

    assert type(failed.value) is error
    assert f"HTTP {status}" in failed.value.message and says in failed.value.message
    assert failed.value.source == ACME
    assert "paste" in (failed.value.hint or "")


async def test_a_connection_error_is_source_unavailable(world: World) -> None:
    def down(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("Connection refused", request=request)

    world.web.page(f"https://{ACME}/", down)

    with pytest.raises(SourceUnavailableError) as failed:
        await world.read(f"https://{ACME}/")

    assert failed.value.message == f"Could not connect to {ACME} (Connection refused)."
    assert "try again later" in (failed.value.hint or "")


async def test_the_next_address_is_tried_when_one_refuses(world: World) -> None:
    def only_v4(request: httpx.Request) -> httpx.Response:
        if request.url.host != PUBLIC:
            raise httpx.ConnectError("Network is unreachable", request=request)
        return html("<p>Over IPv4.</p>")

    world.web.page("http://acme.example/", only_v4)

    result = await world.read("http://acme.example/")

    assert "Over IPv4." in result.text
    assert [r.url.host for r in world.web.requests] == [PUBLIC_V6, PUBLIC]


async def test_an_unknown_host_is_not_found(world: World) -> None:
    with pytest.raises(NotFoundError, match=r"There is no web site at nowhere\.example"):
        await world.read("https://nowhere.example/")


@pytest.mark.parametrize("chat_settings", [{"web_read_timeout_seconds": 0.05}])
async def test_a_slow_site_times_out(world: World) -> None:
    async def slow(request: httpx.Request) -> httpx.Response:
        await asyncio.sleep(5)
        return html("<p>Too late</p>")

    world.web.page(f"https://{ACME}/", slow)

    with pytest.raises(SourceUnavailableError, match=r"did not send .* within 0\.05 s"):
        await world.read(f"https://{ACME}/")


async def test_a_pdf_is_named_and_not_downloaded(world: World) -> None:
    body = CountedBody([b"%PDF-1.7 ..."])
    world.web.page(
        f"https://{ACME}/report.pdf",
        httpx.Response(200, headers={"content-type": "application/pdf"}, stream=body),
    )

    result = await world.read(f"https://{ACME}/report.pdf")

    assert result.text.splitlines()[:2] == ["Title: (none)", f"URL: https://{ACME}/report.pdf"]
    assert "is a PDF document, which read_web_page cannot read" in result.text
    assert "paste the text" in result.text and "import the document" in result.text
    assert body.read == 0
    assert result.queries[0].results == 0


@pytest.mark.parametrize(
    ("headers", "content", "what"),
    [
        ({"content-type": "image/png"}, b"\x89PNG\r\n", "is an image"),
        ({"content-type": "application/octet-stream"}, b"%PDF-1.4\n", "is a PDF document"),
        ({}, b"\x00\x01\x02binary", "is a file of type application/octet-stream"),
    ],
)
async def test_other_types_are_named_not_read(
    world: World, headers: dict[str, str], content: bytes, what: str
) -> None:
    world.web.page(f"https://{ACME}/file", httpx.Response(200, headers=headers, content=content))

    result = await world.read(f"https://{ACME}/file")

    assert what in result.text
    assert result.queries[0].results == 0


@pytest.mark.parametrize("chat_settings", [{"web_read_max_bytes": 1_000}])
async def test_the_byte_limit_stops_the_download(world: World) -> None:
    paragraphs = [f"<p>Paragraph {n} of the annual report.</p>".encode() for n in range(2_000)]
    body = CountedBody([b"<html><head><title>Report</title></head><body>", *paragraphs])
    world.web.page(
        f"https://{ACME}/report",
        httpx.Response(200, headers={"content-type": "text/html"}, stream=body),
    )

    result = await world.read(f"https://{ACME}/report")

    assert body.read < 100
    assert "[Only the first 1,000 bytes were downloaded: the text is incomplete.]" in result.text
    assert "Paragraph 0 of the annual report." in result.text
    assert "Paragraph 100 " not in result.text
    assert result.queries[0].results == 1


@pytest.mark.parametrize("chat_settings", [{"web_read_max_chars": 500}])
async def test_long_text_is_cut_for_the_model(world: World) -> None:
    words = " ".join(f"word{n}" for n in range(1_000))
    world.web.page(f"https://{ACME}/long", html(f"<p>{words}</p>"))

    result = await world.read(f"https://{ACME}/long")

    assert "word0 word1" in result.text and "word999" not in result.text
    assert "[Text cut at" in result.text and "characters.]" in result.text


async def test_plain_text_and_json_are_read_as_they_are(world: World) -> None:
    world.web.page(
        f"https://{ACME}/notes.txt",
        httpx.Response(
            200, text="Line one\n\n\n\nLine   two\n", headers={"content-type": "text/plain"}
        ),
    )
    world.web.page(f"https://{ACME}/api/drugs", httpx.Response(200, json={"drug": "ACM-101"}))

    text = await world.read(f"https://{ACME}/notes.txt")
    data = await world.read(f"https://{ACME}/api/drugs")

    assert text.text.endswith("Line one\n\nLine two")
    assert text.text.splitlines()[:2] == ["Title: (none)", f"URL: https://{ACME}/notes.txt"]
    assert data.text.endswith('{"drug":"ACM-101"}')


async def test_the_page_encoding_is_honoured(world: World) -> None:
    latin = '<html><head><meta charset="iso-8859-1"><title>Caf\xe9</title></head>'
    world.web.page(
        f"https://{ACME}/fr",
        httpx.Response(
            200,
            content=(latin + "<body><p>Na\xefve \xe9tude</p></body></html>").encode("latin-1"),
            headers={"content-type": "text/html"},
        ),
    )
    world.web.page(
        f"https://{ACME}/jp",
        httpx.Response(
            200,
            content=f"{XML_DECLARATION}<html><body><p>日本語の臨床試験</p></body></html>".encode(),
            headers={"content-type": "application/xhtml+xml"},
        ),
    )

    french = await world.read(f"https://{ACME}/fr")
    japanese = await world.read(f"https://{ACME}/jp")

    assert french.text.startswith("Title: Café")
    assert "Naïve étude" in french.text
    assert "日本語の臨床試験" in japanese.text


async def test_a_page_without_text_says_why(world: World) -> None:
    world.web.page(
        f"https://{ACME}/app", html('<div id="root"></div><script src="/app.js"></script>')
    )

    result = await world.read(f"https://{ACME}/app")

    assert "no readable text" in result.text and "JavaScript" in result.text
    assert result.queries[0].results == 0


@pytest.mark.parametrize("chat_settings", [{"web_read_allow_private_hosts": True}])
async def test_an_administrator_may_allow_intranet_hosts(world: World) -> None:
    world.web.page("http://intranet.acme.example/wiki", html("<p>Team wiki</p>"))
    world.web.page("http://10.0.0.9/status", html("<p>All good</p>"))

    wiki = await world.read("http://intranet.acme.example/wiki")
    status = await world.read("http://10.0.0.9/status")

    assert "Team wiki" in wiki.text and "All good" in status.text
    assert world.resolver.asked == []  # the client resolves by itself


async def test_bad_arguments_are_refused_before_anything_is_fetched(world: World) -> None:
    tool = get_tool("read_web_page")
    context = ToolContext(
        services=tool_services(world.runtime),
        owner_id=uuid.uuid4(),
        chat=ChatContext.model_validate({"current_page": "home"}),
    )
    for arguments in ({"url": ""}, {}, {"url": f"https://{ACME}/", "depth": 2}):
        with pytest.raises(ToolArgumentsError):
            await execute_tool(tool, arguments, context, lambda _: None)
    assert world.web.requests == []


async def test_the_system_resolver_reads_a_numeric_address_without_dns() -> None:
    assert await system_resolver("127.0.0.1", 80) == ["127.0.0.1"]


# --- through the chat --------------------------------------------------------------------------


@dataclass
class Site:
    """The server's web, as seen from its own thread."""

    requests: list[str] = field(default_factory=list)

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(str(request.url))
        return html("<main><p>Acme makes ACM-101.</p></main>", head="<title>About Acme</title>")


def chat(client: httpx.Client, message: str) -> list[Any]:
    payload = {"message": message, "context": {"current_page": "home"}}
    with client.stream("POST", "/api/v1/chat/messages", json=payload) as response:
        assert response.status_code == 200, response.read()
        return list(read_events(response))


def test_the_read_command_reads_a_page_in_offline_mode(tmp_path: Path) -> None:
    site = Site()
    with (
        serve(
            clean_settings(tmp_path / "data"), source_transport=httpx.MockTransport(site)
        ) as live,
        httpx.Client(base_url=live.base_url, timeout=20) as client,
    ):
        events = chat(client, f"/read http://{PUBLIC}/about")

        start = next(e for e in events if e.type == "tool_start")
        assert (start.data["tool"], start.data["input"]) == (
            "read_web_page",
            {"url": f"http://{PUBLIC}/about"},
        )
        assert next(e for e in events if e.type == "tool_complete").data["ok"] is True
        message = events[-1].data["payload"]["message"]
        # The user reads the page in the tool's words for a person, not its text for a model.
        assert message.startswith(f"Read “About Acme” (http://{PUBLIC}/about).")
        assert "Acme makes ACM-101." in message
        assert site.requests == [f"http://{PUBLIC}/about"]

        refused = chat(client, "/read http://127.0.0.1:8000/admin")
        done = next(e for e in refused if e.type == "tool_complete")
        assert done.data["ok"] is False
        # The command's answer says why, once: the tool's line does not repeat it.
        assert done.data["message"] is None
        said = refused[-1].data["payload"]["message"]
        assert said.startswith(
            "http://127.0.0.1:8000/admin cannot be read: it is on a private network or on "
            "this server"
        )
        assert site.requests == [f"http://{PUBLIC}/about"]
