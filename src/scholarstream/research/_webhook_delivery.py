"""Delivering the outbox (``research_events``) to the webhooks of ``research.webhooks``, in
the durable engine.

Every saved change that appended events starts ``research_webhooks_workflow`` for its
research (workflow id ``research-<id>-webhooks-<revision>``: once per change). It sends
each webhook the events after that webhook's cursor, in ``seq`` order, one POST at a
time, the webhooks side by side (a slow or failing one does not hold up the others):

==================  =========================================================================
a POST              then
==================  =========================================================================
answered 2xx        the cursor moves past the event; the next one goes
failed              the event waits ``webhook_backoff_seconds`` x 3^(failures - 1) (at most an
                    hour), and the events after it wait with it: order is kept
failed for the      the event is given up (logged; ``given_up`` counted, ``last_error`` kept)
``max_attempts``th  and the next one goes: a webhook that stays down cannot hold its cursor
time                for ever
==================  =========================================================================

A retry due within a minute is waited for in the workflow (a durable sleep); a later one
is picked up by the engine's research sweep (every two minutes), which also restarts the
delivery of research whose events a stopped process never started delivering. Delivery
is at least once: a POST whose answer was lost to a crash is sent again (same
``X-ScholarStream-Delivery``). Events never change a research: a webhook that fails only
leaves its own cursor behind.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from contextlib import nullcontext
from datetime import datetime, timedelta

import httpx
from dbos import DBOS, SetWorkflowID

from scholarstream.durable import current_runtime
from scholarstream.research._engine import RECORD_STEP
from scholarstream.research._store import StoredEvent
from scholarstream.research._webhook_cursors import BUSY_RETRY_SECONDS, Claim, WebhookCursors
from scholarstream.research._webhooks import (
    PostOutcome,
    WebhookPayload,
    backoff_seconds,
    delivery_id,
    post_event,
    wants,
    webhook_key,
)
from scholarstream.research.core import utc_now
from scholarstream.settings import ResearchSettings, WebhookSettings

__all__ = [
    "RECENT_EVENTS",
    "WAIT_IN_WORKFLOW_SECONDS",
    "deliver_research",
    "research_webhooks_workflow",
    "start_webhooks",
    "webhook_backlog",
    "webhooks_workflow_id",
]

log = logging.getLogger(__name__)

WAIT_IN_WORKFLOW_SECONDS = 60.0
"""A retry due within this is slept for in the workflow; a later one is the sweep's."""
RECENT_EVENTS = timedelta(hours=24)
"""The sweep delivers the research with events saved this recently (and any whose retry is
due): events of a research quiet for longer reach a webhook only with its next event."""
_MIN_SLEEP_SECONDS = 0.05
_MAX_ROUNDS = 30
_LEASE_MARGIN_SECONDS = 30.0


def webhooks_workflow_id(research_id: uuid.UUID, tag: str) -> str:
    return f"research-{research_id}-webhooks-{tag}"


class _Delivery:
    """One research's events to one webhook, holding its cursor."""

    def __init__(
        self,
        cursors: WebhookCursors,
        client: httpx.AsyncClient,
        settings: ResearchSettings,
        hook: WebhookSettings,
        research_id: uuid.UUID,
    ) -> None:
        self.cursors = cursors
        self.client = client
        self.settings = settings
        self.hook = hook
        self.key = webhook_key(hook)
        self.research_id = research_id
        self.lease_seconds = settings.webhook_timeout_seconds * 2 + _LEASE_MARGIN_SECONDS

    async def run(self) -> float | None:
        """Seconds until this webhook should be tried again for this research, or
        ``None`` when it has every event."""
        claimed = await self.cursors.claim(
            self.research_id, self.key, now=utc_now(), lease_seconds=self.lease_seconds
        )
        if claimed is None or isinstance(claimed, float):
            return claimed
        held = True
        try:
            wait, held = await self._send(claimed)
            return wait
        finally:
            if held:
                await self.cursors.release(self.research_id, self.key, claimed, now=utc_now())

    async def _send(self, claim: Claim) -> tuple[float | None, bool]:
        """(the wait, whether the lease is still held)."""
        seq, attempts = claim.delivered_seq, claim.attempts
        while events := await self.cursors.events_after(self.research_id, seq):
            for stored in events:
                outcome = await self._post(stored) if wants(self.hook, stored.event.type) else None
                given_up: str | None = None
                if outcome is not None and not outcome.ok:
                    attempts += 1
                    error = (outcome.error or "failed").replace(self.hook.url, "<webhook url>")
                    if attempts < self.settings.webhook_max_attempts:
                        wait = backoff_seconds(self.settings, attempts)
                        log.info(
                            "webhook %s: event %s of research %s failed (%s); retry in %g s",
                            self.key,
                            stored.seq,
                            self.research_id,
                            error,
                            wait,
                        )
                        await self.cursors.retry_later(
                            self.research_id,
                            self.key,
                            claim,
                            attempts=attempts,
                            at=utc_now() + timedelta(seconds=wait),
                            error=error,
                            now=utc_now(),
                        )
                        return wait, False
                    log.warning(
                        "webhook %s: gave up event %s of research %s after %d attempts (%s)",
                        self.key,
                        stored.seq,
                        self.research_id,
                        attempts,
                        error,
                    )
                    given_up = error
                moved = await self.cursors.advance(
                    self.research_id,
                    self.key,
                    claim,
                    stored.seq,
                    now=utc_now(),
                    lease_seconds=self.lease_seconds,
                    given_up_error=given_up,
                )
                if not moved:  # the lease ran out and another deliverer has the cursor
                    return BUSY_RETRY_SECONDS, False
                seq, attempts = stored.seq, 0
        return None, True

    async def _post(self, stored: StoredEvent) -> PostOutcome:
        payload = WebhookPayload(
            delivery_id=delivery_id(self.research_id, stored.seq),
            seq=stored.seq,
            event=stored.event,
        )
        return await post_event(self.client, self.hook, payload)


async def deliver_research(
    cursors: WebhookCursors,
    settings: ResearchSettings,
    research_id: uuid.UUID,
    *,
    client: httpx.AsyncClient | None = None,
) -> float | None:
    """Sends every configured webhook the events of ``research_id`` it has not had yet.
    Returns the seconds until the soonest retry is due, or ``None`` when every webhook
    has every event. ``client``: the HTTP client to POST with (tests); by default one of
    its own. A database error at one webhook is raised once the others are done."""
    if not settings.webhooks:
        return None
    async with (
        httpx.AsyncClient(timeout=settings.webhook_timeout_seconds, follow_redirects=False)
        if client is None
        else nullcontext(client)  # lent by the caller: used, not closed
    ) as http:
        outcomes = await asyncio.gather(
            *(
                _Delivery(cursors, http, settings, hook, research_id).run()
                for hook in settings.webhooks
            ),
            return_exceptions=True,
        )
    waits: list[float] = []
    for outcome in outcomes:
        if isinstance(outcome, BaseException):
            raise outcome
        if outcome is not None:
            waits.append(outcome)
    return min(waits, default=None)


async def webhook_backlog(
    cursors: WebhookCursors, settings: ResearchSettings, *, now: datetime | None = None
) -> list[uuid.UUID]:
    """The research whose events some configured webhook may still be owed."""
    hooks = settings.webhooks
    if not hooks:
        return []
    moment = utc_now(now)
    return await cursors.backlog(
        [webhook_key(hook) for hook in hooks], since=moment - RECENT_EVENTS, now=moment
    )


async def start_webhooks(research_id: uuid.UUID, tag: str) -> None:
    """Starts delivering ``research_id``'s events (once per ``tag``), when webhooks are
    configured."""
    if not current_runtime().settings.research.webhooks:
        return
    with SetWorkflowID(webhooks_workflow_id(research_id, tag)):
        await DBOS.start_workflow_async(research_webhooks_workflow, str(research_id))


# -- the workflow ------------------------------------------------------------------------


async def _deliver(research_id: str) -> float | None:
    runtime = current_runtime()
    return await deliver_research(
        WebhookCursors(runtime.database), runtime.settings.research, uuid.UUID(research_id)
    )


@DBOS.workflow()
async def research_webhooks_workflow(research_id: str) -> bool:
    """Delivers the research's events to every webhook, waiting for the retries due
    soon. ``True`` when every webhook had every event on the way out."""
    for _ in range(_MAX_ROUNDS):
        wait: float | None = await DBOS.run_step_async(
            {**RECORD_STEP, "name": "research.webhooks.deliver"}, _deliver, research_id
        )
        if wait is None:
            return True
        if wait > WAIT_IN_WORKFLOW_SECONDS:
            return False
        await DBOS.sleep_async(max(wait, _MIN_SLEEP_SECONDS))
    return False
