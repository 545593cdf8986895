"""Sharing completed research through the real durable engine, on SQLite and PostgreSQL:
every path to ``completed`` (a synthesis, a single model, ``proceed``) stores the HTML
report once under an unguessable token, keeps ``shareInfo``, announces ``research.shared``
and sends the owner's ``research_report`` targets the public link (a real apprise
``json://`` webhook on loopback); the page is served publicly; a re-run after a crash
rewrites the same page and announces nothing twice; a page that cannot be stored or a
notification that fails is recorded and the research stays completed; the sweep shares a
completed research nobody shared."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import fsspec
import httpx
import pytest
from dbos import DBOS
from lxml import html as lxml_html

from scholarstream.bootstrap import create_app
from scholarstream.db import upgrade
from scholarstream.durable import runtime_holder
from scholarstream.notify import NotificationTargetStore
from scholarstream.research import (
    CONTENT_SECURITY_POLICY,
    ConfirmAction,
    DraftRequest,
    Research,
    ResearchShared,
    ResearchStatus,
    ResearchStore,
    ShareStorage,
    record_call_succeeded,
    research_sweep_workflow,
    share_workflow_id,
    start_research,
    start_share,
    unshared_research,
)
from scholarstream.research.core import advance
from scholarstream.settings import Settings
from tests.helpers import make_runtime
from tests.notify.hooks import HookServer, Posted, hook_server
from tests.research.builders import ANTHROPIC, MODELS, OPENAI
from tests.research.conftest import research_settings
from tests.research.engine_world import SYNTHESIZER, World, answer, eventually, fail

pytestmark = pytest.mark.asyncio(loop_scope="module")

PUBLIC_URL = "https://scholar.example.org"
SHARES = f"memory://research-shares-{uuid.uuid4().hex}"
PROMPT = "Does tirzepatide reduce cardiovascular events in adults with obesity?"
HOSTILE = "# Synthesis [M1][M2]\n\n<script>alert(1)</script> [x](javascript:alert(2))"


def engine_settings(data_dir: Path, database_url: str, **overrides: Any) -> Settings:
    """``conftest.research_settings`` with sharing on, and ``overrides``."""
    research = {"share_reports": True, **overrides.pop("research", {})}
    return research_settings(data_dir, database_url, research=research, **overrides)


@pytest.fixture(scope="module")
def module_settings(module_database_url: str, tmp_path_factory: pytest.TempPathFactory) -> Settings:
    # Replaces conftest's: the module's engine shares (a public URL) into memory://.
    settings = engine_settings(
        tmp_path_factory.mktemp("share-data"),
        module_database_url,
        server={"public_url": PUBLIC_URL + "/"},
        research={"share_url": SHARES},
    )
    upgrade(settings.app_database_url)
    return settings


@pytest.fixture(scope="module")
def hooks() -> Iterator[HookServer]:
    with hook_server() as server:
        yield server


def targets(world: World) -> NotificationTargetStore:
    return NotificationTargetStore.for_server(world.runtime.settings, world.runtime.database)


async def notify_at(world: World, hooks: HookServer, path: str) -> str:
    """The owner's research_report target at ``path`` of the hook server."""
    await targets(world).add(
        world.owner_id, hooks.url(path), label="Phone", kinds=["research_report"]
    )
    return path


def posted_to(hooks: HookServer, path: str) -> list[Posted]:
    return [p for p in hooks.received() if p.path == path]


async def started(
    world: World, models: tuple[str, ...] = (OPENAI, ANTHROPIC), synthesis: str | None = SYNTHESIZER
) -> Research:
    draft = await world.service.draft(
        world.owner_id,
        DraftRequest(prompt=PROMPT, selected_llms=list(models), synthesis_llm=synthesis),
    )
    return await world.service.start(world.owner_id, draft.id)


async def shared(world: World, research_id: uuid.UUID) -> Research:
    """The research once sharing is over: notified, or failed to store the page."""

    async def done() -> Research | None:
        research = await world.service.get(world.owner_id, research_id)
        info = research.share_info
        finished = (info is not None and info.notified_at is not None) or research.share_error
        return research if finished else None

    return await eventually(done, f"research {research_id} shared")


async def event_types(world: World, research_id: uuid.UUID) -> list[str]:
    return [e.event.type for e in await world.service.events(world.owner_id, research_id)]


async def get_page(world: World, token: str) -> httpx.Response:
    app = create_app(world.runtime)  # its lifespan is not run: the runtime stays open
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as client:
        return await client.get(f"/shared/research/{token}")


async def test_a_synthesised_research_is_shared_once_and_its_owner_notified(
    world: World, hooks: HookServer
) -> None:
    path = await notify_at(world, hooks, f"/owner-{uuid.uuid4().hex[:8]}")
    await targets(world).add(world.owner_id, hooks.url(path + "-streams"), kinds=["stream_report"])
    world.models.plan(SYNTHESIZER, answer(HOSTILE))
    research = await started(world)
    await world.settled(research.id, ResearchStatus.COMPLETED)

    done = await shared(world, research.id)
    info = done.share_info
    assert info is not None and info.token is not None and len(info.token) == 43
    assert info.share_url == f"{PUBLIC_URL}/shared/research/{info.token}"
    assert info.storage_url == ShareStorage(SHARES).url_of(info.token)
    assert (info.notified_targets, info.notification_error) == (1, None)
    assert done.status == ResearchStatus.COMPLETED and done.share_error is None

    events = await world.service.events(world.owner_id, research.id)
    assert [e.event.type for e in events][-2:] == ["research.completed", "research.shared"]
    announced = events[-1].event
    assert isinstance(announced, ResearchShared) and announced.share_url == info.share_url

    page = await ShareStorage(SHARES).read(info.token)
    assert PROMPT in page and "Synthesis [M1][M2]" in page
    document = lxml_html.document_fromstring(page)
    assert document.xpath("//script") == []
    assert not any("javascript" in a.get("href", "") for a in document.iter("a"))

    (notification,) = posted_to(hooks, path)
    assert notification.body["title"] == f"Research ready: {done.title}"
    assert info.share_url in notification.body["message"]
    assert posted_to(hooks, path + "-streams") == []  # that target takes stream reports only

    response = await get_page(world, info.token)
    assert response.status_code == 200
    assert response.text == page
    assert response.headers["content-security-policy"] == CONTENT_SECURITY_POLICY
    assert response.headers["x-content-type-options"] == "nosniff"
    assert response.headers["referrer-policy"] == "no-referrer"
    assert (await get_page(world, "x" * 43)).status_code == 404

    # Dispatched again (a repeated step, the sweep): nothing happens twice.
    await start_share(world.owner_id, research.id)
    await world.quiet()
    assert (await event_types(world, research.id)).count("research.shared") == 1
    assert len(posted_to(hooks, path)) == 1
    runs = await DBOS.list_workflows_async(workflow_id_prefix=share_workflow_id(research.id))
    assert [run.output for run in runs] == ["shared"]


async def test_a_single_model_and_a_proceed_are_shared_too(world: World, hooks: HookServer) -> None:
    path = await notify_at(world, hooks, f"/owner-{uuid.uuid4().hex[:8]}")
    single = await started(world, models=(OPENAI,), synthesis=None)
    world.models.plan(ANTHROPIC, fail(503))
    partial = await started(world, models=(OPENAI, ANTHROPIC))
    await world.settled(partial.id, ResearchStatus.AWAITING_CONFIRMATION)
    # One success, no reports: the synthesis is skipped and proceed completes at once.
    proceeded = await world.service.confirm(world.owner_id, partial.id, ConfirmAction.PROCEED)
    assert proceeded.status == ResearchStatus.COMPLETED

    for research_id in (single.id, partial.id):
        done = await shared(world, research_id)
        assert done.share_info is not None and done.share_info.notified_targets == 1
        assert (await event_types(world, research_id)).count("research.shared") == 1
    assert len(posted_to(hooks, path)) == 2
    info = (await shared(world, partial.id)).share_info
    assert info is not None and info.token is not None
    page = await ShareStorage(SHARES).read(info.token)
    assert ANTHROPIC in page and "HTTP 503" in page and "Synthesis not available" in page


async def test_a_share_run_again_after_a_crash_rewrites_the_same_page_once(
    world: World, hooks: HookServer
) -> None:
    path = await notify_at(world, hooks, f"/owner-{uuid.uuid4().hex[:8]}")
    research = await started(world, models=(OPENAI,), synthesis=None)
    done = await shared(world, research.id)
    assert done.share_info is not None and done.share_info.token is not None
    token = done.share_info.token
    fsspec.filesystem("memory").rm(ShareStorage(SHARES).url_of(token))

    # As DBOS recovery does: run the workflow again from the step that stores the page.
    workflow_id = share_workflow_id(research.id)
    steps = await DBOS.list_workflow_steps_async(workflow_id)
    page_step = next(s for s in steps if s["function_name"] == "research.share.page")
    rerun = await DBOS.fork_workflow_async(workflow_id, page_step["function_id"])
    assert await rerun.get_result() == "shared"

    assert "<h1>" in await ShareStorage(SHARES).read(token)  # the same token, rewritten
    after = await world.service.get(world.owner_id, research.id)
    assert after.share_info == done.share_info
    assert (await event_types(world, research.id)).count("research.shared") == 1
    assert len(posted_to(hooks, path)) == 1  # already notified: not again


async def test_a_page_that_cannot_be_stored_is_recorded_and_the_research_stays_completed(
    world: World, module_settings: Settings, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    broken = make_runtime(
        engine_settings(
            module_settings.data_dir,
            module_settings.app_database_url,
            server={"public_url": PUBLIC_URL},
            research={"share_url": str(blocker / "shares")},
        ),
        models=world.models.overrides([*MODELS, SYNTHESIZER]),
    )
    runtime_holder().install(broken)
    try:
        research = await started(world, models=(OPENAI,), synthesis=None)
        done = await shared(world, research.id)
    finally:
        runtime_holder().install(world.runtime)
        await broken.close()
    assert done.status == ResearchStatus.COMPLETED
    assert done.share_info is None
    assert done.share_error is not None
    assert done.share_error.startswith("The shareable report could not be stored:")
    assert (await event_types(world, research.id))[-1] == "research.completed"


async def test_a_failed_notification_is_recorded_and_the_research_stays_shared(
    world: World, hooks: HookServer
) -> None:
    await notify_at(world, hooks, "/broken")
    research = await started(world, models=(OPENAI,), synthesis=None)
    done = await shared(world, research.id)
    assert done.status == ResearchStatus.COMPLETED
    info = done.share_info
    assert info is not None and info.notified_targets == 0
    assert info.notification_error is not None and info.notification_error.startswith("Phone: ")
    assert (await event_types(world, research.id))[-1] == "research.shared"


async def test_the_sweep_shares_a_completed_research_nobody_shared(world: World) -> None:
    draft = await world.service.draft(
        world.owner_id, DraftRequest(prompt=PROMPT, selected_llms=[OPENAI])
    )
    store = ResearchStore(world.runtime.database)
    # Completed, but the process stopped before it dispatched anything.
    await store.apply(
        world.owner_id, draft.id, lambda r: start_research(r, has_credentials=lambda m: True)
    )
    await store.apply(
        world.owner_id,
        draft.id,
        lambda r: advance(record_call_succeeded(r, OPENAI, 1, "Yes.")),
    )
    assert (await world.service.get(world.owner_id, draft.id)).status == ResearchStatus.COMPLETED
    await world.quiet()
    assert (world.owner_id, draft.id) in await unshared_research(
        ResearchStore(world.runtime.database), world.runtime.settings.research
    )

    sweep = await DBOS.start_workflow_async(research_sweep_workflow, datetime.now(UTC), None)
    await sweep.get_result()
    done = await shared(world, draft.id)
    assert done.share_info is not None and done.share_error is None
    assert (world.owner_id, draft.id) not in await unshared_research(
        ResearchStore(world.runtime.database), world.runtime.settings.research
    )


async def test_a_synthesis_retried_after_it_failed_rewrites_the_shared_page(
    world: World, hooks: HookServer
) -> None:
    """Issue 22: the synthesis fails, the research completes without it and is shared
    saying why; Retry runs it, and the same link then shows the synthesis (a second
    edition of the page: no second research.shared, no second notification)."""
    path = await notify_at(world, hooks, f"/owner-{uuid.uuid4().hex[:8]}")
    world.models.plan(SYNTHESIZER, fail(503), answer("# Both agree [M1][M2]"))
    research = await started(world)
    first = await shared(world, research.id)
    assert first.synthesis_error is not None and first.share_info is not None
    token = first.share_info.token
    assert token is not None
    page = await ShareStorage(SHARES).read(token)
    assert "Synthesis not available: " in page and "Retry runs the synthesis again." in page
    [notice] = posted_to(hooks, path)
    assert "Synthesis not available" in notice.body["message"]

    await world.service.retry(world.owner_id, research.id)
    done = await world.settled(research.id, ResearchStatus.COMPLETED)
    assert done.synthesized_result == "# Both agree [M1][M2]"

    async def rewritten() -> str | None:
        text = await ShareStorage(SHARES).read(token)
        return text if "Both agree" in text else None

    page = await eventually(rewritten, "the shared page shows the synthesis")
    assert "Synthesis not available" not in page
    runs = await DBOS.list_workflows_async(workflow_id_prefix=share_workflow_id(research.id))
    assert sorted(run.workflow_id for run in runs) == [
        share_workflow_id(research.id),
        share_workflow_id(research.id, 1),
    ]
    after = await world.service.get(world.owner_id, research.id)
    assert after.share_info is not None and after.share_info.token == token
    assert (await event_types(world, research.id)).count("research.shared") == 1
    assert len(posted_to(hooks, path)) == 1
