"""Offline answers in the user's words (seed 004, offline mode): with no model configured, a
chat message is answered by the turn's searches, and the answer is what each tool tells a
user, never what it writes for a model. Over real HTTP, with the literature sources answered
by recorded responses (``tests.search.world``), refusing connections, or finding nothing."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import httpx
import pytest

from scholarstream.accounts import ensure_local_user
from scholarstream.chat import TurnTranscript
from scholarstream.chat._agent_loop import ToolRunner
from scholarstream.chat._planned_search import NO_MODEL, SAME_SEARCH, offline_retrieval
from scholarstream.chat.continuity import ThreadState, begin_turn
from scholarstream.chat.core import ChatContext
from scholarstream.chat.pages import resolve
from scholarstream.chat.tools import ToolContext
from scholarstream.db import upgrade_async
from scholarstream.runtime import build_runtime
from tests.chat.services import tool_services
from tests.chat.world import read_events
from tests.conftest import SHARED_DATA
from tests.search.world import LiteratureWorld
from tests.web.live import clean_settings, import_into_library, serve

MESSAGES = "/api/v1/chat/messages"
SCOPUS = SHARED_DATA / "exports" / "asysd_testthat" / "scopus.ris"
SOURCES = ["pubmed", "openalex", "library"]
# What a user must never read: a model's instructions, tool names, error classes.
LEAKS = (
    "Tell the user",
    "the user",
    "(ConnectError)",
    "ConnectError",
    "search_literature",
    "search_library",
    "read_web_page",
    "Error",
    "Exception",
)
# Nothing in the library (ten veterinary records) matches this one.
QUBITS = "superconducting qubits"
DOGS = "taurine and dilated cardiomyopathy in dogs"


# A public web site at a literal address (no name to look up): its pages by path.
SITE = "93.184.216.34"
WEB = {
    "/pipeline": (
        "text/html; charset=utf-8",
        b"<html><head><title>Acme pipeline</title></head><body><nav>Menu</nav><main>"
        b"<h1>Our pipeline</h1><p>Acme develops osimertinib combinations.</p></main></body></html>",
    ),
    "/report.pdf": ("application/pdf", b"%PDF-1.7 ..."),
}


@dataclass
class Sources:
    """The literature sources: recorded responses (``world``), except those ``down``,
    which refuse the connection. The others answer a moment later, so a refused source
    fails first and is not retried, as on a real network where it cannot be reached."""

    world: LiteratureWorld = field(default_factory=LiteratureWorld)
    down: tuple[str, ...] = ()

    async def __call__(self, request: httpx.Request) -> httpx.Response:
        if any(name in request.url.host for name in self.down):
            raise httpx.ConnectError("[Errno 111] Connection refused", request=request)
        if request.url.host == SITE:
            if request.url.path not in WEB:
                return httpx.Response(404, text="Not here")
            media_type, body = WEB[request.url.path]
            return httpx.Response(200, content=body, headers={"content-type": media_type})
        await asyncio.sleep(0.05)
        return self.world(request)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[httpx.Client, Sources]]:
    """One offline server (no model) whose library holds ten records on taurine in dogs."""
    sources = Sources()
    data = tmp_path_factory.mktemp("offline") / "data"
    settings = clean_settings(data, search={"default_sources": SOURCES})
    with (
        serve(settings, source_transport=httpx.MockTransport(sources)) as live,
        httpx.Client(base_url=live.base_url, timeout=30) as client,
    ):
        import_into_library(live, client, SCOPUS)
        yield client, sources


def ask(
    server: tuple[httpx.Client, Sources],
    message: str,
    world: Sources,
    conversation_id: str | None = None,
) -> tuple[str, dict[str, Any]]:
    """The answer's text to ``message`` with the sources behaving as ``world`` (in a new
    conversation, or ``conversation_id``'s), and the whole answer."""
    client, sources = server
    sources.world, sources.down = world.world, world.down
    body: dict[str, Any] = {"message": message, "context": {"current_page": "home"}}
    if conversation_id is not None:
        body["conversation_id"] = conversation_id
    with client.stream("POST", MESSAGES, json=body) as response:
        assert response.status_code == 200, response.read()
        events = list(read_events(response))
    assert events[-1].type == "complete", events[-1].data
    payload: dict[str, Any] = events[-1].data["payload"]
    text: str = payload["message"]
    for leak in LEAKS:
        assert leak not in text, f"{leak!r} in the answer: {text}"
    return text, payload


def searching(payload: dict[str, Any]) -> tuple[str, str]:
    """How the answer says the message was read, and the query it searched for."""
    query = payload["continuity"]["refined_query"]
    return f"Searching for “{query}”.", query


def answer(*parts: str) -> str:
    return "\n\n".join([*parts, NO_MODEL])


def test_results_found(server: tuple[httpx.Client, Sources]) -> None:
    text, payload = ask(server, DOGS, Sources())
    reading, _ = searching(payload)
    assert text == answer(
        reading, "Found 8 records in your library.", "Found 10 papers in PubMed and OpenAlex."
    )
    # The results themselves are the answer's cards: the library's, then the sources'.
    assert [len(p["data"]["articles"]) for p in payload["payloads"]] == [8, 10]


def test_a_result_pointed_at_is_not_searched_again(server: tuple[httpx.Client, Sources]) -> None:
    _, first = ask(server, DOGS, Sources())
    text, payload = ask(
        server, "tell me more about the second one", Sources(), first["conversation_id"]
    )
    assert text == SAME_SEARCH
    assert payload["continuity"]["queries"] == []


def test_a_follow_up_says_how_it_was_read(server: tuple[httpx.Client, Sources]) -> None:
    _, first = ask(server, QUBITS, Sources())
    query = first["continuity"]["refined_query"]
    dated, _ = ask(server, "not before 2017 please", Sources(), first["conversation_id"])
    assert dated.startswith(
        f"Same topic, with the limits you changed: searching for “{query}”, published since 2017."
    )
    lifted, _ = ask(server, "any year is fine", Sources(), first["conversation_id"])
    assert lifted.startswith(f"Same topic, now with no date limit: searching for “{query}”.")


def test_nothing_found(server: tuple[httpx.Client, Sources]) -> None:
    text, payload = ask(server, QUBITS, Sources(LiteratureWorld(empty=("pubmed", "openalex"))))
    reading, query = searching(payload)
    assert text == answer(
        reading,
        f"Nothing in your library matches “{query}”.",
        f"Nothing was found for “{query}”. Try fewer or broader words.",
    )


def test_one_source_cannot_be_reached(server: tuple[httpx.Client, Sources]) -> None:
    text, payload = ask(server, QUBITS, Sources(down=("ncbi",)))
    reading, query = searching(payload)
    assert text == answer(
        reading,
        f"Nothing in your library matches “{query}”.",
        "Found 5 papers in OpenAlex. PubMed could not be reached (no network connection from "
        "this server?); the other source answered. Try again when the connection is back; "
        "your library works offline.",
    )


def test_one_source_refuses_the_key(server: tuple[httpx.Client, Sources]) -> None:
    text, payload = ask(server, QUBITS, Sources(LiteratureWorld(failing=("pubmed",))))
    reading, query = searching(payload)
    assert text == answer(
        reading,
        f"Nothing in your library matches “{query}”.",
        "Found 5 papers in OpenAlex. PubMed refused this server's access key; the other "
        "source answered. An administrator can check the key under Settings.",
    )


def test_no_source_can_be_reached(server: tuple[httpx.Client, Sources]) -> None:
    text, payload = ask(server, QUBITS, Sources(LiteratureWorld(offline=True)))
    reading, query = searching(payload)
    assert text == answer(
        reading,
        f"Nothing in your library matches “{query}”.",
        "You appear to be offline: searching your library only.",
    )


def test_no_source_can_be_reached_and_the_library_has_results(
    server: tuple[httpx.Client, Sources],
) -> None:
    text, payload = ask(server, DOGS, Sources(LiteratureWorld(offline=True)))
    reading, _ = searching(payload)
    assert text == answer(
        reading,
        "Found 8 records in your library.",
        "You appear to be offline: searching your library only.",
    )


def test_every_source_fails(server: tuple[httpx.Client, Sources]) -> None:
    text, payload = ask(server, QUBITS, Sources(LiteratureWorld(failing=("pubmed", "openalex"))))
    reading, query = searching(payload)
    assert text == answer(
        reading,
        f"Nothing in your library matches “{query}”.",
        "None of the sources answered: PubMed and OpenAlex refused this server's access "
        "key. An administrator can check the key under Settings.",
    )


def test_a_refused_query(server: tuple[httpx.Client, Sources]) -> None:
    words = " ".join(
        f"term{n}" for n in range(400)
    )  # more than the 2,000 characters a search takes
    text, payload = ask(server, words, Sources())
    query = payload["continuity"]["refined_query"]
    assert len(query) > 2000
    shown = query[:120].rsplit(" ", 1)[0]
    assert text == answer(
        f"Searching for “{shown}…”.", "The query is too long: at most 2,000 characters."
    )


def test_a_command_without_its_argument_says_what_is_missing(
    server: tuple[httpx.Client, Sources],
) -> None:
    text, _ = ask(server, "/search", Sources())
    assert text == (
        "/search needs QUERY after it: type /search QUERY to search the literature sources "
        "and your library at once."
    )
    text, _ = ask(server, "/trials", Sources())
    assert text.startswith("/trials needs QUERY after it: type /trials QUERY to search")


def test_a_refused_address(server: tuple[httpx.Client, Sources]) -> None:
    text, _ = ask(server, "https://example.org/" + "a" * 2100, Sources())
    assert text == answer("The address is too long: at most 2,048 characters.")


def test_a_private_address(server: tuple[httpx.Client, Sources]) -> None:
    text, _ = ask(server, "https://10.0.0.1/page", Sources())
    assert text == answer(
        "https://10.0.0.1/page cannot be read: it is on a private network or on this server, "
        "and only public web pages can be read. Instead, paste the text you need into the chat."
    )
    text, _ = ask(server, "/read http://localhost:8000/admin", Sources())
    assert "it is on a private network or on this server" in text


def test_a_linked_page_is_read(server: tuple[httpx.Client, Sources]) -> None:
    text, _ = ask(server, f"http://{SITE}/pipeline", Sources())
    assert text == answer(
        f"Read “Acme pipeline” (http://{SITE}/pipeline).\n\n"
        "# Our pipeline\n\nAcme develops osimertinib combinations."
    )


def test_a_linked_page_that_cannot_be_read(server: tuple[httpx.Client, Sources]) -> None:
    pdf, _ = ask(server, f"http://{SITE}/report.pdf", Sources())
    assert pdf == answer(
        f"http://{SITE}/report.pdf is a PDF document, which cannot be read here: paste the "
        "text you need into the chat, or import the document into your library (Library page)."
    )
    missing, _ = ask(server, f"http://{SITE}/gone", Sources())
    assert missing == answer(f"There is no page at http://{SITE}/gone: check the address.")
    refused, _ = ask(server, f"http://{SITE}/pipeline", Sources(down=(SITE,)))
    assert refused == answer(
        f"{SITE} could not be reached. Try again later, or paste the text you need into the chat."
    )


def test_a_web_page_asked_for_without_its_address(server: tuple[httpx.Client, Sources]) -> None:
    text, _ = ask(server, f"can you read their website about {DOGS}", Sources())
    assert text.endswith(
        "There is no web search here, so I searched the literature instead. I can read a web "
        "page when you give me its address: paste the link in your next message.\n\n" + NO_MODEL
    )


def test_help_lists_the_commands_in_the_users_words(
    server: tuple[httpx.Client, Sources],
) -> None:
    text, _ = ask(server, "/help", Sources())
    assert text == "\n".join(
        [
            "No language model is configured, so answers are search results, not written "
            "answers: configure one under Settings. Type a question to search, or use these "
            "commands:",
            "- /details IDENTIFIER: Show one article in full, by its PMID, DOI, arXiv id, NCT "
            "id or library record id",
            "- /read URL: Read a public web page",
            "- /library QUERY: Search your library (the records you imported)",
            "- /search QUERY: Search the literature sources and your library at once",
            "- /pubmed QUERY: Search PubMed (its query syntax works: AND, OR, [mh], [tiab])",
            "- /trials QUERY: Search ClinicalTrials.gov for registered studies",
        ]
    )


async def test_a_search_missing_on_the_page(tmp_path: Path) -> None:
    """A planned search whose tool the page does not offer. Every page offers the built-in
    searches today, so this is driven below the HTTP route: the page's tools without the
    sources' search."""
    settings = clean_settings(tmp_path / "data", search={"default_sources": SOURCES})
    await upgrade_async(settings.app_database_url)
    runtime = build_runtime(settings, source_transport=httpx.MockTransport(Sources()))
    try:
        async with runtime.database.session() as session:
            owner = (await ensure_local_user(session)).id
        page = ChatContext(current_page="home")
        whole = resolve(page)
        without = replace(whole, tools=[t for t in whole.tools if t.name != "search_literature"])
        continuity = begin_turn(ThreadState(), QUBITS)
        context = ToolContext(tool_services(runtime), owner, page, uuid.uuid4())
        runner = ToolRunner(context, lambda event: None, TurnTranscript(), max_calls=10)
        text = await offline_retrieval(continuity, without, runner)
    finally:
        await runtime.close()
    query = continuity.refined_query
    assert text == answer(
        f"Searching for “{query}”.",
        f"Nothing in your library matches “{query}”.",
        "One of the searches this message needs is not available on this page.",
    )
    for leak in LEAKS:
        assert leak not in text
