"""Sharing a completed research, in the durable engine (seed 001, "Post-Synthesis
Actions"): generate the shareable HTML, store it, keep ``shareInfo`` on the research
(announced by ``research.shared``), and notify the owner with the link.

Every path to ``completed`` (a synthesis, a skipped one, ``proceed``, a retry with
nothing left to retry) dispatches ``research_share_workflow``; its id,
``research-<id>-share``, makes that once per research, however often it is dispatched
(the engine's sweep dispatches it again for a recently completed research with neither
``shareInfo`` nor ``shareError``, which covers a process that stopped in between).

A research that completed without a synthesis because the synthesis failed may complete
again once Retry has run it (``synthesis_retries``): each such completion is an
*edition*, shared once by ``research-<id>-share-<edition>``. A later edition rewrites the
page under the same token (the same link now shows the synthesis); ``shareInfo`` stays,
so no second ``research.shared`` and no second notification.

=====================  ==================================================================
step                   what it does (each is checkpointed; a repeated one is harmless)
=====================  ==================================================================
share.plan             the token (``secrets.token_urlsafe(32)``; the one on the research,
                       if any), the public link, where the page is stored
share.page             render and store the page (retried; rewritten if run again)
share.recorded         ``shareInfo`` on the research, ``research.shared`` in the outbox
                       (the same token attached again changes nothing)
share.notify           the link to the owner's ``research_report`` targets (skipped when
                       they were already sent it)
share.notified         how that went, on ``shareInfo``
=====================  ==================================================================

A failure here never fails the research: a page that cannot be stored is logged and
recorded as ``shareError``; a notification that fails at a target is logged (by the
notifier) and recorded as ``shareInfo.notificationError``.

Sharing is on unless ``research.share_reports`` is false; the link is built on
``server.public_url`` (this server's own address when unset).
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Literal

from dbos import DBOS, SetWorkflowID, StepOptions

from scholarstream.durable import current_runtime
from scholarstream.errors import ConflictError, NotFoundError
from scholarstream.notify import NotificationTargetStore
from scholarstream.research._engine import RECORD_STEP, error_text
from scholarstream.research._share_notice import KIND, research_notification, shared_path
from scholarstream.research._share_page import render_share_page
from scholarstream.research._share_storage import ShareStorage, new_token
from scholarstream.research._store import ResearchStore
from scholarstream.research._webhook_delivery import start_webhooks
from scholarstream.research.core import (
    CamelModel,
    Research,
    ResearchChange,
    ResearchStatus,
    ShareInfo,
    attach_share_info,
    record_notification,
    record_share_failed,
    utc_now,
)
from scholarstream.settings import ResearchSettings

__all__ = [
    "RECENTLY_COMPLETED",
    "SharePlan",
    "research_share_workflow",
    "share_workflow_id",
    "start_share",
    "unshared_editions",
    "unshared_research",
]

log = logging.getLogger(__name__)

ShareResult = Literal["shared", "failed", "skipped"]

RECENTLY_COMPLETED = timedelta(hours=24)
"""The sweep shares research completed this recently that have not been shared."""

# Storage may be remote (s3://, gs://): a few tries before the failure is recorded.
_PAGE_STEP: StepOptions = {
    "retries_allowed": True,
    "max_attempts": 3,
    "interval_seconds": 0.5,
    "backoff_rate": 4.0,
}


def share_workflow_id(research_id: uuid.UUID, edition: int = 0) -> str:
    base = f"research-{research_id}-share"
    return base if edition == 0 else f"{base}-{edition}"


async def start_share(owner_id: uuid.UUID, research_id: uuid.UUID, *, edition: int = 0) -> None:
    """Shares a completed research, once per edition (see the module), when sharing is on."""
    if not current_runtime().settings.research.share_reports:
        return
    with SetWorkflowID(share_workflow_id(research_id, edition)):
        await DBOS.start_workflow_async(research_share_workflow, str(owner_id), str(research_id))


async def unshared_editions(
    store: ResearchStore, settings: ResearchSettings, *, now: datetime | None = None
) -> list[tuple[uuid.UUID, uuid.UUID, int]]:
    """(owner, research, edition) of the research completed recently with neither a
    shareable report nor a recorded failure to make one; none when sharing is off."""
    if not settings.share_reports:
        return []
    since = utc_now(now) - RECENTLY_COMPLETED
    completed = await store.completed_since(since)
    return [
        (stored.owner_id, stored.research.id, stored.research.synthesis_retries)
        for stored in completed
        if stored.research.share_info is None and stored.research.share_error is None
    ]


async def unshared_research(
    store: ResearchStore, settings: ResearchSettings, *, now: datetime | None = None
) -> list[tuple[uuid.UUID, uuid.UUID]]:
    """(owner, research) of ``unshared_editions``."""
    found = await unshared_editions(store, settings, now=now)
    return [(owner_id, research_id) for owner_id, research_id, _edition in found]


class SharePlan(CamelModel):
    token: str
    share_url: str
    storage_url: str
    created_at: datetime


class NotifyOutcome(CamelModel):
    """How sending the link went; ``skipped`` when it had been sent already."""

    skipped: bool = False
    delivered: int = 0
    error: str | None = None


# -- steps ------------------------------------------------------------------------------


def _store() -> ResearchStore:
    return ResearchStore(current_runtime().database)


async def _completed(owner_id: str, research_id: str) -> Research | None:
    try:
        research = await _store().get(uuid.UUID(owner_id), uuid.UUID(research_id))
    except NotFoundError:
        return None
    return research if research.status == ResearchStatus.COMPLETED else None


async def _plan(owner_id: str, research_id: str) -> SharePlan | None:
    research = await _completed(owner_id, research_id)
    if research is None:
        log.info("research %s: not completed, nothing to share", research_id)
        return None
    settings = current_runtime().settings
    existing = research.share_info
    if existing is not None and existing.token is not None:  # shared before: the same page
        token, created_at = existing.token, existing.created_at
    else:
        token, created_at = new_token(), utc_now()
    return SharePlan(
        token=token,
        share_url=settings.server.base_url + shared_path(token),
        storage_url=ShareStorage.for_settings(settings).url_of(token),
        created_at=created_at,
    )


async def _store_page(owner_id: str, research_id: str, plan: SharePlan) -> str:
    research = await _completed(owner_id, research_id)
    if research is None:
        raise ConflictError(f"Research {research_id} is no longer completed.")
    return await ShareStorage.for_settings(current_runtime().settings).write(
        plan.token, render_share_page(research)
    )


async def _apply(
    owner_id: str, research_id: str, change_fn: Callable[[Research], ResearchChange]
) -> int | None:
    """The research's revision once ``change_fn`` is saved, if it saved events (they are
    then delivered to the webhooks); ``None`` when it saved none."""
    applied = await _store().apply(uuid.UUID(owner_id), uuid.UUID(research_id), change_fn)
    return applied.revision if applied.change.events else None


async def _record_failed(owner_id: str, research_id: str, error: str) -> None:
    await _apply(owner_id, research_id, lambda r: record_share_failed(r, error))


async def _record_shared(owner_id: str, research_id: str, plan: SharePlan) -> int | None:
    info = ShareInfo(
        share_url=plan.share_url,
        storage_url=plan.storage_url,
        created_at=plan.created_at,
        token=plan.token,
    )
    return await _apply(owner_id, research_id, lambda r: attach_share_info(r, info))


async def _notify(owner_id: str, research_id: str, plan: SharePlan) -> NotifyOutcome:
    research = await _completed(owner_id, research_id)
    if research is None or (research.share_info and research.share_info.notified_at):
        return NotifyOutcome(skipped=True)
    current = current_runtime()
    targets = await NotificationTargetStore.for_server(current.settings, current.database).urls_for(
        uuid.UUID(owner_id), kind=KIND
    )
    if not targets:
        return NotifyOutcome()
    deliveries = await current.notifier.send(
        research_notification(research, plan.share_url), targets
    )
    errors = [f"{d.label or d.preview}: {d.error}" for d in deliveries if not d.ok]
    return NotifyOutcome(delivered=sum(d.ok for d in deliveries), error="; ".join(errors) or None)


async def _record_notified(owner_id: str, research_id: str, outcome: NotifyOutcome) -> None:
    await _apply(
        owner_id,
        research_id,
        lambda r: record_notification(r, delivered=outcome.delivered, error=outcome.error),
    )


# -- the workflow ------------------------------------------------------------------------


@DBOS.workflow()
async def research_share_workflow(owner_id: str, research_id: str) -> ShareResult:
    plan: SharePlan | None = await DBOS.run_step_async(
        {**RECORD_STEP, "name": "research.share.plan"}, _plan, owner_id, research_id
    )
    if plan is None:
        return "skipped"
    try:
        await DBOS.run_step_async(
            {**_PAGE_STEP, "name": "research.share.page"}, _store_page, owner_id, research_id, plan
        )
    except Exception as exc:  # the research stays completed: the failure is recorded
        error = error_text(exc)
        log.warning("research %s: its shareable report could not be stored: %s", research_id, error)
        await DBOS.run_step_async(
            {**RECORD_STEP, "name": "research.share.failed"},
            _record_failed,
            owner_id,
            research_id,
            f"The shareable report could not be stored: {error}",
        )
        return "failed"
    revision: int | None = await DBOS.run_step_async(
        {**RECORD_STEP, "name": "research.share.recorded"},
        _record_shared,
        owner_id,
        research_id,
        plan,
    )
    if revision is not None:
        await start_webhooks(uuid.UUID(research_id), str(revision))
    try:
        outcome: NotifyOutcome = await DBOS.run_step_async(
            {"name": "research.share.notify"}, _notify, owner_id, research_id, plan
        )
    except Exception as exc:  # as above: recorded, and the research stays completed
        error = error_text(exc)
        log.warning("research %s: its owner could not be notified: %s", research_id, error)
        outcome = NotifyOutcome(error=f"The notification could not be sent: {error}")
    if not outcome.skipped:
        await DBOS.run_step_async(
            {**RECORD_STEP, "name": "research.share.notified"},
            _record_notified,
            owner_id,
            research_id,
            outcome,
        )
    return "shared"
