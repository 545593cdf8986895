"""One research event POSTed to one webhook (``research.webhooks``): the JSON body, its
signature, and what the POST came to.

The body is a ``WebhookPayload``: ``{"deliveryId": "<research id>:<seq>", "seq": <seq>,
"event": {<the event as the SSE stream sends it, with "type">}}``. Headers:

================================  ===========================================================
header                            value
================================  ===========================================================
``X-ScholarStream-Event``         the event's type (``research.completed`` ...)
``X-ScholarStream-Delivery``      the delivery id: the same on every retry of one event, so a
                                  receiver drops what it already has (delivery is at least
                                  once)
``X-ScholarStream-Signature-256`` with a secret: ``sha256=`` and the hex HMAC-SHA256 of the
                                  raw body with the secret
================================  ===========================================================

A 2xx answer is a delivery; anything else (another status, no answer within
``research.webhook_timeout_seconds``, a refused connection) is a failure to retry.
Redirects are not followed.
"""

from __future__ import annotations

import hashlib
import hmac
import uuid

import httpx

from scholarstream import __version__
from scholarstream.research.core import CamelModel, ResearchEvent
from scholarstream.settings import ResearchSettings, WebhookSettings

__all__ = [
    "DELIVERY_HEADER",
    "EVENT_HEADER",
    "MAX_BACKOFF_SECONDS",
    "SIGNATURE_HEADER",
    "PostOutcome",
    "WebhookPayload",
    "backoff_seconds",
    "delivery_id",
    "post_event",
    "sign",
    "wants",
    "webhook_key",
]

EVENT_HEADER = "X-ScholarStream-Event"
DELIVERY_HEADER = "X-ScholarStream-Delivery"
SIGNATURE_HEADER = "X-ScholarStream-Signature-256"
MAX_BACKOFF_SECONDS = 3600.0
_BACKOFF_FACTOR = 3.0
_MAX_ERROR = 300


class WebhookPayload(CamelModel):
    delivery_id: str
    seq: int
    event: ResearchEvent


class PostOutcome(CamelModel):
    ok: bool
    error: str | None = None


def webhook_key(hook: WebhookSettings) -> str:
    """What a webhook's delivery progress is stored under: its name, else a digest of its
    URL (a URL may be long and carry a secret)."""
    if hook.name:
        return hook.name
    return "url-" + hashlib.sha256(hook.url.encode()).hexdigest()[:40]


def wants(hook: WebhookSettings, event_type: str) -> bool:
    return hook.events is None or event_type in hook.events


def delivery_id(research_id: uuid.UUID, seq: int) -> str:
    return f"{research_id}:{seq}"


def sign(secret: str, body: bytes) -> str:
    return "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


def backoff_seconds(settings: ResearchSettings, failed_attempts: int) -> float:
    """The wait after the ``failed_attempts``-th failure of one event (1, 2 ...)."""
    wait = settings.webhook_backoff_seconds * _BACKOFF_FACTOR ** max(failed_attempts - 1, 0)
    return float(min(wait, MAX_BACKOFF_SECONDS))


def _cut(text: str) -> str:
    return text if len(text) <= _MAX_ERROR else text[: _MAX_ERROR - 1] + "…"


async def post_event(
    client: httpx.AsyncClient, hook: WebhookSettings, payload: WebhookPayload
) -> PostOutcome:
    body = payload.model_dump_json().encode()
    headers = {
        "Content-Type": "application/json",
        "User-Agent": f"ScholarStream/{__version__}",
        EVENT_HEADER: payload.event.type,
        DELIVERY_HEADER: payload.delivery_id,
    }
    if hook.secret is not None:
        headers[SIGNATURE_HEADER] = sign(hook.secret.get_secret_value(), body)
    try:
        response = await client.post(hook.url, content=body, headers=headers)
    except httpx.HTTPError as exc:
        return PostOutcome(ok=False, error=_cut(f"{type(exc).__name__}: {exc}"))
    if response.is_success:
        return PostOutcome(ok=True)
    return PostOutcome(ok=False, error=f"HTTP {response.status_code}")
