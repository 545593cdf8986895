"""Webhooks for the research events, on SQLite and PostgreSQL.

Delivery itself (``deliver_research``, with an ``httpx.MockTransport``): each webhook gets
each event once, in ``seq`` order, as signed JSON; a filter sends only the chosen events;
a failing webhook is retried with back-off, holding back the events after the failed one
but not the other webhooks; an event that keeps failing is given up and the next goes;
two deliverers at once still send each event once; the backlog names the research owed
events.

Through the real durable engine (a receiver on loopback): a research's events reach a
webhook in order while one that always fails neither blocks it nor the research; the
sweep delivers events whose delivery was never started."""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
import uuid
from collections import Counter
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import pytest
from dbos import DBOS

from scholarstream.db import upgrade, upgrade_async
from scholarstream.research import (
    BUSY_RETRY_SECONDS,
    DELIVERY_HEADER,
    EVENT_HEADER,
    SIGNATURE_HEADER,
    DraftRequest,
    ResearchStatus,
    ResearchStore,
    ShareInfo,
    WebhookCursors,
    attach_share_info,
    create_draft,
    deliver_research,
    record_call_succeeded,
    research_sweep_workflow,
    start_research,
    webhook_backlog,
)
from scholarstream.research.core import advance
from scholarstream.runtime import Runtime
from scholarstream.settings import Settings, load_settings
from tests.helpers import make_runtime, new_user
from tests.notify.hooks import HookServer, Posted, hook_server
from tests.research.builders import ANTHROPIC, LATER, OPENAI
from tests.research.conftest import research_settings
from tests.research.engine_world import SYNTHESIZER, World, eventually
from tests.research.runtime_parts import webhooks_of

SECRET = "whsec-test-0123456789"
EVENTS = [
    "research.started",
    "research.llm_completed",
    "research.synthesizing",
    "research.completed",
]


def signature(body: bytes, secret: str = SECRET) -> str:
    return "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


# --- delivery, with a mock transport -------------------------------------------------------


@dataclass
class Hooks:
    """What each webhook URL answers (``script``: status codes, then 200 for good) and what
    it was sent."""

    scripts: dict[str, list[int | Exception]] = field(default_factory=dict)
    sent: list[httpx.Request] = field(default_factory=list)
    delay: float = 0.0

    async def handle(self, request: httpx.Request) -> httpx.Response:
        self.sent.append(request)
        if self.delay:
            await asyncio.sleep(self.delay)
        script = self.scripts.get(str(request.url), [])
        outcome = script.pop(0) if script else 200
        if isinstance(outcome, Exception):
            raise outcome
        return httpx.Response(outcome)

    def client(self) -> httpx.AsyncClient:
        return httpx.AsyncClient(transport=httpx.MockTransport(self.handle))

    def to(self, url: str) -> list[dict[str, Any]]:
        """The bodies sent to ``url``, in order."""
        return [json.loads(r.content) for r in self.sent if str(r.url) == url]

    def seqs(self, url: str) -> list[int]:
        return [body["seq"] for body in self.to(url)]


A = "https://hooks.example.org/a"
B = "https://hooks.example.org/b"


@asynccontextmanager
async def delivery_runtime(
    data_dir: Path, database_url: str, webhooks: list[dict[str, Any]], **research: Any
) -> AsyncIterator[Runtime]:
    settings = load_settings(
        data_dir=data_dir,
        database_url=database_url,
        research={
            "webhooks": webhooks,
            "webhook_backoff_seconds": 0.1,
            "webhook_max_attempts": 3,
            **research,
        },
    )
    await upgrade_async(settings.app_database_url)
    runtime = make_runtime(settings)
    try:
        yield runtime
    finally:
        await runtime.close()


async def completed_research(runtime: Runtime) -> tuple[uuid.UUID, uuid.UUID]:
    """(owner, research) of a research run to completion through the store: 4 events."""
    user = await new_user(runtime)
    store = ResearchStore(runtime.database)
    draft = await store.create(
        user.id,
        create_draft(DraftRequest(prompt="Statins in the elderly"), available_models=[OPENAI]),
    )
    await store.apply(user.id, draft.id, lambda r: start_research(r, has_credentials=bool))
    await store.apply(
        user.id, draft.id, lambda r: advance(record_call_succeeded(r, OPENAI, 1, "Yes."))
    )
    assert [e.event.type for e in await store.events(user.id, draft.id)] == EVENTS
    return user.id, draft.id


async def test_events_are_posted_once_in_order_as_signed_json(
    data_dir: Path, database_url: str
) -> None:
    webhooks = [{"url": A, "secret": SECRET}, {"url": B}]
    hooks = Hooks()
    async with (
        delivery_runtime(data_dir, database_url, webhooks) as runtime,
        hooks.client() as http,
    ):
        owner, research_id = await completed_research(runtime)
        assert await deliver_research(*webhooks_of(runtime), research_id, client=http) is None

        outbox = await ResearchStore(runtime.database).events(owner, research_id)
        for url in (A, B):
            bodies = hooks.to(url)
            assert [b["seq"] for b in bodies] == [1, 2, 3, 4]
            assert [b["event"] for b in bodies] == [e.event.model_dump(mode="json") for e in outbox]
            assert [b["deliveryId"] for b in bodies] == [f"{research_id}:{n}" for n in range(1, 5)]
        for request in hooks.sent:
            assert request.method == "POST"
            assert request.headers["content-type"] == "application/json"
            body = json.loads(request.content)
            assert request.headers[EVENT_HEADER] == body["event"]["type"]
            assert request.headers[DELIVERY_HEADER] == body["deliveryId"]
            if str(request.url) == A:
                assert request.headers[SIGNATURE_HEADER] == signature(request.content)
            else:
                assert SIGNATURE_HEADER not in request.headers

        # Nothing new: nothing sent. A new event: only it.
        assert await deliver_research(*webhooks_of(runtime), research_id, client=http) is None
        assert len(hooks.sent) == 8
        info = ShareInfo(share_url="https://x/s/t", storage_url="memory://t", created_at=LATER)
        await ResearchStore(runtime.database).apply(
            owner, research_id, lambda r: attach_share_info(r, info)
        )
        assert await deliver_research(*webhooks_of(runtime), research_id, client=http) is None
        assert hooks.seqs(A) == [1, 2, 3, 4, 5] and hooks.seqs(B) == [1, 2, 3, 4, 5]
        assert hooks.to(A)[-1]["event"]["shareUrl"] == "https://x/s/t"


async def test_a_filter_sends_only_the_chosen_events(data_dir: Path, database_url: str) -> None:
    webhooks = [{"url": A, "events": ["research.completed", "research.shared"], "name": "done"}]
    hooks = Hooks()
    async with (
        delivery_runtime(data_dir, database_url, webhooks) as runtime,
        hooks.client() as http,
    ):
        _, research_id = await completed_research(runtime)
        assert await deliver_research(*webhooks_of(runtime), research_id, client=http) is None
        assert [(b["seq"], b["event"]["type"]) for b in hooks.to(A)] == [(4, "research.completed")]
        cursor = await WebhookCursors(runtime.database).cursor(research_id, "done")
        assert cursor is not None and cursor.delivered_seq == 4


BACKOFF = 0.5


async def test_a_failing_webhook_is_retried_in_order_without_holding_up_the_others(
    data_dir: Path, database_url: str
) -> None:
    webhooks = [{"url": A, "name": "flaky"}, {"url": B, "name": "good"}]
    hooks = Hooks(scripts={A: [500, 503]})
    async with (
        # Long enough that the early call below is early even on a loaded machine.
        delivery_runtime(
            data_dir, database_url, webhooks, webhook_backoff_seconds=BACKOFF
        ) as runtime,
        hooks.client() as http,
    ):
        _, research_id = await completed_research(runtime)

        wait = await deliver_research(*webhooks_of(runtime), research_id, client=http)
        assert wait == pytest.approx(BACKOFF)  # webhook_backoff_seconds
        assert hooks.seqs(B) == [1, 2, 3, 4]  # the good one is not held up
        assert hooks.seqs(A) == [1]  # and nothing after the failed event went
        cursors = WebhookCursors(runtime.database)
        flaky = await cursors.cursor(research_id, "flaky")
        assert flaky is not None
        assert (flaky.delivered_seq, flaky.attempts, flaky.last_error) == (0, 1, "HTTP 500")
        assert flaky.next_attempt_at is not None and flaky.lease_token is None

        # Before the retry is due nothing is sent; the wait left is the answer.
        early = await deliver_research(*webhooks_of(runtime), research_id, client=http)
        assert early is not None and 0 < early <= BACKOFF
        assert hooks.seqs(A) == [1]

        await asyncio.sleep(BACKOFF + 0.02)
        retried = await deliver_research(*webhooks_of(runtime), research_id, client=http)
        assert retried == pytest.approx(3 * BACKOFF)
        await asyncio.sleep(3 * BACKOFF + 0.02)
        assert await deliver_research(*webhooks_of(runtime), research_id, client=http) is None
        assert hooks.seqs(A) == [1, 1, 1, 2, 3, 4]  # the same event until it went, then on
        assert len({b["deliveryId"] for b in hooks.to(A)[:3]}) == 1
        flaky = await cursors.cursor(research_id, "flaky")
        assert flaky is not None and (flaky.delivered_seq, flaky.attempts) == (4, 0)
        assert flaky.given_up == 0 and flaky.next_attempt_at is None


async def test_an_event_that_keeps_failing_is_given_up_and_the_next_goes(
    data_dir: Path, database_url: str
) -> None:
    refused = httpx.ConnectError(f"cannot reach {A}: connection refused")
    hooks = Hooks(scripts={A: [refused, 500]})
    async with (
        delivery_runtime(
            data_dir, database_url, [{"url": A, "name": "down"}], webhook_max_attempts=2
        ) as runtime,
        hooks.client() as http,
    ):
        _, research_id = await completed_research(runtime)
        cursors = WebhookCursors(runtime.database)

        wait = await deliver_research(*webhooks_of(runtime), research_id, client=http)
        assert wait == pytest.approx(0.1)
        down = await cursors.cursor(research_id, "down")
        assert down is not None and down.last_error is not None
        # What went wrong is kept, without the webhook's URL (it may hold a secret).
        assert down.last_error == "ConnectError: cannot reach <webhook url>: connection refused"

        await asyncio.sleep(0.12)
        assert await deliver_research(*webhooks_of(runtime), research_id, client=http) is None
        assert hooks.seqs(A) == [1, 1, 2, 3, 4]
        down = await cursors.cursor(research_id, "down")
        assert down is not None
        assert (down.delivered_seq, down.given_up, down.last_error) == (4, 1, "HTTP 500")


async def test_two_deliverers_at_once_send_each_event_once(
    data_dir: Path, database_url: str
) -> None:
    hooks = Hooks(delay=0.05)
    async with (
        delivery_runtime(data_dir, database_url, [{"url": A}]) as runtime,
        hooks.client() as http,
    ):
        _, research_id = await completed_research(runtime)
        first, second = await asyncio.gather(
            deliver_research(*webhooks_of(runtime), research_id, client=http),
            deliver_research(*webhooks_of(runtime), research_id, client=http),
        )
        # One held the cursor; the other was told to look again shortly.
        assert sorted([first, second], key=lambda w: w or 0) == [None, BUSY_RETRY_SECONDS]
        assert hooks.seqs(A) == [1, 2, 3, 4]
        assert await deliver_research(*webhooks_of(runtime), research_id, client=http) is None
        assert Counter(hooks.seqs(A)) == {1: 1, 2: 1, 3: 1, 4: 1}


async def test_the_backlog_names_the_research_owed_events(
    data_dir: Path, database_url: str
) -> None:
    hooks = Hooks()
    async with (
        delivery_runtime(data_dir, database_url, [{"url": A}]) as runtime,
        hooks.client() as http,
    ):
        _, research_id = await completed_research(runtime)
        assert await webhook_backlog(*webhooks_of(runtime)) == [research_id]
        await deliver_research(*webhooks_of(runtime), research_id, client=http)
        assert await webhook_backlog(*webhooks_of(runtime)) == []
    # A webhook added later is owed the events of the research active lately.
    webhooks = [{"url": A}, {"url": B}]
    async with delivery_runtime(data_dir, database_url, webhooks) as runtime:
        assert await webhook_backlog(*webhooks_of(runtime)) == [research_id]
    async with delivery_runtime(data_dir, database_url, []) as runtime:
        assert await webhook_backlog(*webhooks_of(runtime)) == []
        assert await deliver_research(*webhooks_of(runtime), research_id) is None


# --- through the engine, with a receiver on loopback -----------------------------------------


@pytest.fixture(scope="module")
def receiver() -> Iterator[HookServer]:
    """Answers 500 on /broken, 200 elsewhere."""
    with hook_server() as hooks:
        yield hooks


def received_by(hooks: HookServer, research_id: uuid.UUID, path: str) -> list[Posted]:
    return [
        posted
        for posted in hooks.received()
        if posted.path == path and posted.body["event"]["researchId"] == str(research_id)
    ]


@pytest.fixture(scope="module")
def module_settings(
    module_database_url: str, tmp_path_factory: pytest.TempPathFactory, receiver: HookServer
) -> Settings:
    # Replaces conftest's: the module's engine delivers to two webhooks on loopback.
    settings = research_settings(
        tmp_path_factory.mktemp("webhook-data"),
        module_database_url,
        research={
            "webhooks": [
                {"url": receiver.url("/good", scheme="http"), "secret": SECRET, "name": "good"},
                {"url": receiver.url("/broken", scheme="http"), "name": "broken"},
            ],
            "webhook_backoff_seconds": 0.05,
            "webhook_max_attempts": 2,
            "webhook_timeout_seconds": 2.0,
        },
    )
    upgrade(settings.app_database_url)
    return settings


def delivered(receiver: HookServer, research_id: uuid.UUID, last: str) -> Callable[[], Any]:
    async def check() -> list[Posted] | None:
        got = received_by(receiver, research_id, "/good")
        return got if got and got[-1].body["event"]["type"] == last else None

    return check


@pytest.mark.asyncio(loop_scope="module")
async def test_a_research_s_events_reach_the_webhook_in_order_while_another_fails(
    world: World, receiver: HookServer
) -> None:
    draft = await world.service.draft(
        world.owner_id,
        DraftRequest(
            prompt="Tirzepatide and heart failure",
            selected_llms=[OPENAI, ANTHROPIC],
            synthesis_llm=SYNTHESIZER,
        ),
    )
    await world.service.start(world.owner_id, draft.id)
    await world.settled(draft.id, ResearchStatus.COMPLETED)  # the failing webhook is no matter

    good = await eventually(
        delivered(receiver, draft.id, "research.completed"), "research.completed delivered"
    )
    outbox = await world.service.events(world.owner_id, draft.id)
    assert [r.body["seq"] for r in good] == [e.seq for e in outbox]
    assert [r.body["event"]["type"] for r in good] == [e.event.type for e in outbox]
    for received in good:
        assert received.headers[SIGNATURE_HEADER.lower()] == signature(received.raw)
        assert received.headers[EVENT_HEADER.lower()] == received.body["event"]["type"]

    # The broken webhook was tried (twice an event), each event given up in turn.
    cursors = WebhookCursors(world.runtime.database)

    async def gave_up() -> int | None:
        broken = await cursors.cursor(draft.id, "broken")
        done = broken is not None and broken.delivered_seq == outbox[-1].seq
        return broken.given_up if broken is not None and done else None

    assert await eventually(gave_up, "the broken webhook's events given up") == len(outbox)
    assert [r.body["seq"] for r in received_by(receiver, draft.id, "/broken")] == [
        e.seq for e in outbox for _ in range(2)
    ]


@pytest.mark.asyncio(loop_scope="module")
async def test_the_sweep_delivers_events_whose_delivery_never_started(
    world: World, receiver: HookServer
) -> None:
    store = ResearchStore(world.runtime.database)
    draft = await world.service.draft(
        world.owner_id, DraftRequest(prompt="Statins in the elderly", selected_llms=[OPENAI])
    )
    # Run and saved by a process that stopped before it started any delivery.
    await store.apply(world.owner_id, draft.id, lambda r: start_research(r, has_credentials=bool))
    await store.apply(
        world.owner_id, draft.id, lambda r: advance(record_call_succeeded(r, OPENAI, 1, "Yes."))
    )
    await world.quiet()
    assert received_by(receiver, draft.id, "/good") == []
    assert draft.id in await webhook_backlog(*webhooks_of(world.runtime))

    sweep = await DBOS.start_workflow_async(research_sweep_workflow, datetime.now(UTC), None)
    await sweep.get_result()
    good = await eventually(delivered(receiver, draft.id, "research.completed"), "delivered")
    assert [r.body["event"]["type"] for r in good] == EVENTS
