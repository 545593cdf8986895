"""``AppriseNotifier`` end to end: real apprise sending ``json://`` webhooks to a server
on loopback. Each target has its own outcome; a failing one never stops the others."""

from __future__ import annotations

import logging
import time

import pytest

from scholarstream.notify import AppriseNotifier, Notification, Target
from tests.notify.hooks import SLOW_SECONDS, hook_server, refused_port

REPORT = Notification(
    kind="stream_report",
    title="Palatin Pipeline Tracker: 12 new items",
    body="**12 new items** since 1 December.\n\n- Setmelanotide phase 3 results",
    url="http://127.0.0.1:8000/streams/1/reports/2",
    level="success",
)


async def test_a_notification_arrives_at_a_webhook() -> None:
    with hook_server() as hooks:
        target = Target.from_url(hooks.url("/hook"), label="My hook")
        (delivery,) = await AppriseNotifier().send(REPORT, [target])
        assert delivery.ok and delivery.error is None
        assert (delivery.label, delivery.preview) == ("My hook", hooks.url("/hook"))
        (posted,) = hooks.received()
    assert posted.path == "/hook"
    assert posted.body["title"] == REPORT.title
    assert posted.body["message"] == f"{REPORT.body}\n\n{REPORT.url}"
    assert posted.body["type"] == "success"


async def test_a_failing_target_does_not_stop_the_others(
    caplog: pytest.LogCaptureFixture,
) -> None:
    token = "abcdef0123456789abcdef"
    dead = f"json://127.0.0.1:{refused_port()}/hooks/{token}"
    with hook_server() as hooks:
        targets = [
            Target.from_url(dead, label="dead"),
            Target.from_url(hooks.url("/first"), label="first"),
            Target.from_url(hooks.url("/broken"), label="broken"),
            Target.from_url(hooks.url("/second"), label="second"),
        ]
        with caplog.at_level(logging.WARNING):
            deliveries = await AppriseNotifier().send(REPORT, targets)
        assert sorted(p.path for p in hooks.received()) == ["/broken", "/first", "/second"]
    assert [(d.label, d.ok) for d in deliveries] == [
        ("dead", False),
        ("first", True),
        ("broken", False),
        ("second", True),
    ]
    assert deliveries[0].error and "connection" in deliveries[0].error.lower()
    assert deliveries[2].error and "500" in deliveries[2].error
    # Failures are logged with the preview, never the URL.
    assert "/hooks/***" in caplog.text and "broken" in caplog.text
    assert token not in caplog.text
    assert all(token not in (d.error or "") for d in deliveries)


async def test_a_slow_target_times_out_without_holding_up_the_rest() -> None:
    with hook_server() as hooks:
        targets = [Target.from_url(hooks.url("/slow")), Target.from_url(hooks.url("/fast"))]
        started = time.monotonic()
        slow, fast = await AppriseNotifier(timeout_seconds=0.5).send(REPORT, targets)
        elapsed = time.monotonic() - started
    assert fast.ok
    assert not slow.ok and slow.error == "No answer within 0.5 s."
    assert elapsed < SLOW_SECONDS


async def test_no_targets_sends_nothing() -> None:
    assert await AppriseNotifier().send(REPORT, []) == []
