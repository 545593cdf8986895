"""A user who owns one of everything, for the isolation tests (test_isolation.py).

The world is made through the product's own API (a chat turn in offline mode with its
thread's objectives, the rule guide's stream creation, a monitoring run over the user's
library with feedback, a search run of the library at its result review, AI columns,
notification targets, tokens, a provider key), and through the research store for
research in the statuses that need model calls to reach (and a completed one with a
shared report). Every text the user owns carries the user's ``marker``, so a response
that shows it to another user is easy to spot; so does each id (``secrets``)."""

from __future__ import annotations

import datetime as dt
import json
import time
import uuid
from collections.abc import Awaitable, Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from fastapi.testclient import TestClient

from scholarstream.accounts import SESSION_COOKIE
from scholarstream.notify import Delivery, Notification, Target
from scholarstream.research import (
    ResearchStatus,
    ResearchStore,
    ShareInfo,
    ShareStorage,
    new_token,
    render_share_page,
)
from scholarstream.runtime import Runtime
from tests.helpers import PASSWORD
from tests.research.builders import research, results
from tests.streams.script import FULL_CONFIG

HOST = "http://127.0.0.1"
ORIGIN = {"Origin": HOST}  # what our own pages send with a cookie-authenticated write
API = "/api/v1"
PROVIDER = "openai"
WAIT_SEC = 30.0  # a search of a small library takes well under a second

Response = Any  # starlette's TestClient returns its own httpx flavour's Response
Kwargs = dict[str, Any]  # what a request sends besides its headers: json=, params=
T = TypeVar("T")


@dataclass
class UserWorld:
    """What one user owns, by id, and how to act as them."""

    username: str
    user_id: uuid.UUID
    marker: str
    session_cookie: str
    api_token: str = ""  # the plaintext of a token made for the tests (Bearer)
    api_token_id: str = ""
    spare_token_id: str = ""  # a second token, never used: only its id matters
    provider_key: str = ""
    conversation_id: str = ""
    turn_id: str = ""
    objective_ids: list[int] = field(default_factory=list)
    stream_id: str = ""
    open_creation_id: str = ""
    done_creation_id: str = ""
    report_id: str = ""
    report_item_key: str = ""
    own_target_id: str = ""
    stream_target_id: str = ""
    record_ids: list[str] = field(default_factory=list)
    merge_id: str = ""
    collection_id: str = ""
    project_id: str = ""  # a screening project of the user's records
    screening_record_id: str = ""  # a record of that project, included on title and abstract
    column_id: str = ""
    search_run_id: str = ""
    checkpoint_id: str = ""
    research_ids: dict[str, str] = field(default_factory=dict)  # status -> id
    share_token: str = ""

    # --- acting as the user -------------------------------------------------------------

    def cookie(self, *, write: bool = False) -> dict[str, str]:
        headers = {"Cookie": f"{SESSION_COOKIE}={self.session_cookie}"}
        return {**headers, **ORIGIN} if write else headers

    def bearer(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.api_token}"}

    # --- what shows that a response carries this user's data ----------------------------

    def secrets(self) -> dict[str, str]:
        """Name -> a string that only this user's data contains."""
        found: dict[str, str] = {
            "marker": self.marker,
            "user id": str(self.user_id),
            "api token": self.api_token,
            "provider key": self.provider_key,
            "conversation": self.conversation_id,
            "turn": self.turn_id,
            "stream": self.stream_id,
            "open creation": self.open_creation_id,
            "done creation": self.done_creation_id,
            "report": self.report_id,
            "own target": self.own_target_id,
            "stream target": self.stream_target_id,
            "ai column": self.column_id,
            "search run": self.search_run_id,
            "share token": self.share_token,
            "merge": self.merge_id,
            "collection": self.collection_id,
            "screening project": self.project_id,
            "screening record": self.screening_record_id,
            "api token id": self.api_token_id,
            "spare token id": self.spare_token_id,
        }
        found.update({f"record {i}": r for i, r in enumerate(self.record_ids)})
        found.update({f"research {status}": r for status, r in self.research_ids.items()})
        return {name: value for name, value in found.items() if value}


def expect(response: Response, status: int) -> Any:
    assert response.status_code == status, f"{response.status_code}: {response.text[:2000]}"
    return response.json() if response.content else None


def sse_data(body: str) -> Iterator[dict[str, Any]]:
    for line in body.splitlines():
        if line.startswith("data:"):
            data: dict[str, Any] = json.loads(line[5:])
            yield data


def login(client: TestClient, username: str) -> str:
    response = client.post(f"{API}/auth/login", json={"username": username, "password": PASSWORD})
    expect(response, 200)
    cookie = client.cookies.get(SESSION_COOKIE)
    assert cookie, "login set no session cookie"
    client.cookies.clear()  # every request of the tests names its caller itself
    return cookie


def in_app(client: TestClient, work: Callable[[Runtime], Awaitable[T]]) -> T:
    """Runs ``work`` on the app's own event loop with the app's runtime."""
    runtime: Runtime = client.app.state.runtime  # type: ignore[attr-defined]
    portal = client.portal
    assert portal is not None, "the TestClient is not started"

    async def run() -> T:
        return await work(runtime)

    return portal.call(run)


def build_user_world(client: TestClient, username: str, user_id: uuid.UUID) -> UserWorld:
    marker = f"{username.upper()}{uuid.uuid4().hex[:10]}"
    me = UserWorld(username, user_id, marker, login(client, username))
    write = me.cookie(write=True)

    def post(path: str, body: dict[str, Any], status: int = 201) -> Any:
        return expect(client.post(API + path, json=body, headers=write), status)

    # API tokens: one the tests authenticate with, one only ever named by id.
    token = post("/tokens", {"name": f"{marker} script"})
    me.api_token, me.api_token_id = token["token"], token["id"]
    me.spare_token_id = post("/tokens", {"name": f"{marker} spare"})["id"]

    # A stored provider key (a user LLM credential).
    me.provider_key = f"sk-{marker}-secret-key"
    response = client.put(
        f"{API}/me/provider-keys/{PROVIDER}", json={"api_key": me.provider_key}, headers=write
    )
    expect(response, 204)

    _library(client, me)
    _screening(client, me)
    _chat(client, me)
    _streams(client, me)
    me.own_target_id = post(
        "/me/notifications", {"url": f"ntfy://{marker.lower()}-own", "label": f"{marker} own"}
    )["id"]
    me.stream_target_id = post(
        f"/streams/{me.stream_id}/notifications",
        {"url": f"ntfy://{marker.lower()}-stream", "label": f"{marker} stream"},
    )["id"]
    me.column_id = post(
        "/ai-columns",
        {
            "table": "library",
            "name": f"{marker} column",
            "criteria": f"Is it about {marker}?",
            "output_type": "yes_no",
        },
    )["id"]
    _search_run(client, me)
    in_app(client, lambda runtime: _research(runtime, me))
    return me


def _library(client: TestClient, me: UserWorld) -> None:
    """Three records published today (the monitoring run looks at recent ones). Their DOIs
    (hence report item keys, which requests send) do not carry the marker."""
    today, doi = dt.date.today(), uuid.uuid4().hex[:12]
    ris = "".join(
        f"TY  - JOUR\nTI  - {me.marker} setmelanotide record {n}\n"
        f"AB  - Setmelanotide study {n} of {me.marker}.\nAU  - Doe, Jane\n"
        f"PY  - {today.year}\nDA  - {today:%Y/%m/%d}\nDO  - 10.9999/{doi}.{n}\n"
        "ER  - \n\n"
        for n in (1, 2, 3)
    )
    response = client.post(
        f"{API}/library/imports",
        files={"file": ("mine.ris", ris.encode())},
        headers=me.cookie(write=True),
    )
    assert expect(response, 201)["imported"] == 3
    page = expect(client.get(f"{API}/library/records", headers=me.cookie()), 200)
    me.record_ids = [item["id"] for item in page["items"]]
    assert len(me.record_ids) == 3
    # A copy of the first record from another file: merged into it, a merge to split.
    copy = (
        f"TY  - JOUR\nTI  - {me.marker} setmelanotide record 1\n"
        f"AB  - Setmelanotide study 1 of {me.marker}, the longer abstract of another database.\n"
        f"AU  - Doe, Jane\nPY  - {today.year}\nDO  - 10.9999/{doi}.1\nER  - \n"
    )
    response = client.post(
        f"{API}/library/imports",
        files={"file": ("copy.ris", copy.encode())},
        headers=me.cookie(write=True),
    )
    assert expect(response, 201)["merged"] == 1
    merges = expect(client.get(f"{API}/library/merges", headers=me.cookie()), 200)
    me.merge_id = merges["items"][0]["id"]


def _screening(client: TestClient, me: UserWorld) -> None:
    """A collection of the records, and a screening project of them with one record
    included (so it reaches the full-text stage)."""
    write = me.cookie(write=True)
    collection = client.post(
        f"{API}/library/collections",
        json={"name": f"{me.marker} collection", "ids": me.record_ids},
        headers=write,
    )
    me.collection_id = expect(collection, 201)["collection"]["id"]
    project = client.post(
        f"{API}/screening/projects",
        json={
            "name": f"{me.marker} review",
            "keywords": ["setmelanotide"],
            "exclusion_criteria": ["Wrong population"],
            "source": {"kind": "library", "record_ids": me.record_ids},
        },
        headers=write,
    )
    me.project_id = expect(project, 201)["id"]
    step = expect(client.get(f"{API}/screening/projects/{me.project_id}/next", headers=write), 200)
    me.screening_record_id = step["record"]["id"]
    decision = {"record_id": me.screening_record_id, "decision": "include"}
    response = client.post(
        f"{API}/screening/projects/{me.project_id}/decisions", json=decision, headers=write
    )
    expect(response, 200)


def _chat(client: TestClient, me: UserWorld) -> None:
    body = {"message": f"What is new about {me.marker}?", "context": {"current_page": "home"}}
    response = client.post(f"{API}/chat/messages", json=body, headers=me.cookie(write=True))
    events = list(sse_data(expect_text(response)))
    assert events[0]["type"] == "status" and events[-1]["type"] == "complete", events
    me.conversation_id, me.turn_id = events[0]["conversation_id"], events[0]["turn_id"]
    conversation = f"{API}/chat/conversations/{me.conversation_id}"
    rename = {"title": f"{me.marker} chat"}
    expect(client.patch(conversation, json=rename, headers=me.cookie(write=True)), 200)
    for n in (1, 2):
        objective = expect(
            client.post(
                f"{conversation}/objectives",
                json={"text": f"{me.marker} objective {n}"},
                headers=me.cookie(write=True),
            ),
            201,
        )
        me.objective_ids.append(objective["id"])


def expect_text(response: Response) -> str:
    assert response.status_code == 200, response.text[:2000]
    text: str = response.text
    return text


def _streams(client: TestClient, me: UserWorld) -> None:
    write = me.cookie(write=True)
    streams = f"{API}/streams"
    # A stream made by the rule guide (offline mode), and an open draft next to it.
    me.done_creation_id = expect(client.post(f"{streams}/creation", headers=write), 201)["id"]
    config = {**FULL_CONFIG, "stream_name": f"{me.marker} tracker"}
    result: dict[str, Any] = {}
    for turn in ({"message": "Here it is", "edits": config}, {"message": "create"}):
        response = client.post(
            f"{streams}/creation/{me.done_creation_id}/turns", json=turn, headers=write
        )
        result = list(sse_data(expect_text(response)))[-1]
        assert result["type"] == "turn_result", result
    me.stream_id = result["stream_id"]
    me.open_creation_id = expect(client.post(f"{streams}/creation", headers=write), 201)["id"]
    # Only the user's library is searched (nothing reaches the network), for the marker.
    stream = expect(client.get(f"{streams}/{me.stream_id}", headers=me.cookie()), 200)
    queries: dict[str, Any] = {name: {"enabled": False} for name in stream["retrieval"]["queries"]}
    queries["library"] = {"enabled": True, "query": "setmelanotide"}
    edit = {
        "retrieval": {"queries": queries},
        "chat_instructions": f"Always mention {me.marker}.",
    }
    expect(client.patch(f"{streams}/{me.stream_id}", json=edit, headers=write), 200)
    started = expect(client.post(f"{streams}/{me.stream_id}/runs", headers=write), 202)
    deadline = time.monotonic() + WAIT_SEC  # the engine runs it on the app's loop
    while (report := _get(client, me, f"/streams/{me.stream_id}/reports/{started['id']}"))[
        "status"
    ] == "running":
        assert time.monotonic() < deadline, f"the monitoring run never finished: {report}"
        time.sleep(0.02)
    assert report["status"] == "complete", report
    items = report["report"]["items"]
    assert items, f"the monitoring run found none of the library's records: {report}"
    me.report_id, me.report_item_key = report["id"], items[0]["key"]
    judged = client.put(
        f"{streams}/{me.stream_id}/reports/{me.report_id}/feedback",
        json={"key": me.report_item_key, "relevant": True},
        headers=write,
    )
    expect(judged, 200)


def _search_run(client: TestClient, me: UserWorld) -> None:
    """A search run of the user's library, waiting at its result review (the durable
    engine runs it)."""
    # Run by the engine on the app's loop: polled until it waits for the user's decision.
    body: dict[str, Any] = {
        "question": f"{me.marker} setmelanotide",
        "sources": ["library"],
        "strategy_checkpoint": False,
    }
    started = client.post(f"{API}/search/runs", json=body, headers=me.cookie(write=True))
    me.search_run_id = expect(started, 202)["id"]
    deadline = time.monotonic() + WAIT_SEC
    while (run := _get(client, me, f"/search/runs/{me.search_run_id}"))["status"] != "waiting":
        assert run["status"] == "running", run
        assert time.monotonic() < deadline, f"the search run never waited: {run}"
        time.sleep(0.02)
    me.checkpoint_id = run["pending"]["id"]
    titles = [
        p["record"]["title"]
        for p in run["pending"]["checkpoint"]["payload"]["collection"]["papers"]
    ]
    assert titles and all(me.marker in t for t in titles), run


def _get(client: TestClient, me: UserWorld, path: str) -> Any:
    return expect(client.get(API + path, headers=me.cookie()), 200)


async def _research(runtime: Runtime, me: UserWorld) -> None:
    """Research in each status a route acts on, and a completed one with a shared report
    (running research needs the durable engine: stored as the engine leaves it)."""
    store = ResearchStore(runtime.database)
    now = dt.datetime.now(dt.UTC)
    common: dict[str, Any] = {
        "title": f"{me.marker} research",
        "prompt": f"Compare setmelanotide studies for {me.marker}.",
        "created_at": now,
        "updated_at": now,
    }
    token = new_token()
    completed = research(
        ResearchStatus.COMPLETED,
        llm_results=results("completed", "completed"),
        synthesized_result=f"The synthesis of {me.marker}.",
        completed_at=now,
        id=uuid.uuid4(),
        **common,
    )
    location = await ShareStorage.for_settings(runtime.settings).write(
        token, render_share_page(completed)
    )
    shared = completed.model_copy(
        update={
            "share_info": ShareInfo(
                share_url=f"{HOST}/shared/research/{token}",
                storage_url=location,
                created_at=now,
                token=token,
            )
        }
    )
    variants = {
        "draft": research(ResearchStatus.DRAFT, id=uuid.uuid4(), **common),
        "awaiting_confirmation": research(
            ResearchStatus.AWAITING_CONFIRMATION,
            llm_results=results("completed", "failed"),
            retry_count=0,
            id=uuid.uuid4(),
            **common,
        ),
        "failed": research(
            ResearchStatus.FAILED,
            llm_results=results("failed", "failed"),
            error="All models failed.",
            id=uuid.uuid4(),
            **common,
        ),
        "completed": shared,
    }
    for status, record in variants.items():
        await store.create(me.user_id, record)
        me.research_ids[status] = str(record.id)
    me.share_token = token


# --- sending and judging (the tests' side) ----------------------------------------------


class RecordingNotifier:
    """Sends nothing; remembers which targets were sent to."""

    def __init__(self) -> None:
        self.sent: list[uuid.UUID | None] = []

    async def send(self, notification: Notification, targets: Sequence[Target]) -> list[Delivery]:
        self.sent.extend(t.id for t in targets)
        return [
            Delivery(target_id=t.id, label=t.label, preview=t.preview, ok=True) for t in targets
        ]


@dataclass(frozen=True)
class Reply:
    status: int
    text: str

    def __str__(self) -> str:
        return f"{self.status} {self.text[:300]!r}"


def send(
    client: TestClient,
    method: str,
    url: str,
    headers: dict[str, str],
    kwargs: Kwargs | None = None,
    *,
    read_events: bool = False,
) -> Reply:
    """The response, read whole unless it is an event stream (which may never end: then
    only its status, unless ``read_events``)."""
    with client.stream(method, url, headers=headers, follow_redirects=False, **(kwargs or {})) as r:
        streaming = r.headers.get("content-type", "").startswith("text/event-stream")
        text = r.read().decode(errors="replace") if read_events or not streaming else ""
    client.cookies.clear()  # every request names its caller itself
    return Reply(r.status_code, text)


def leaked(reply: Reply, owner: UserWorld, sent: str) -> list[str]:
    """What of ``owner``'s the reply shows, leaving out what the request sent itself."""
    body, request = reply.text.lower(), sent.lower()
    return [
        name
        for name, secret in owner.secrets().items()
        if secret.lower() in body and secret.lower() not in request
    ]
