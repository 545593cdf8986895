"""Notification targets (apprise URLs): the user's own, which receive every notification of
the user, and each stream's. A URL is stored encrypted and never returned: responses show
its ``preview`` with the secrets masked."""

from __future__ import annotations

import uuid

from fastapi import APIRouter, Response
from pydantic import BaseModel, Field

from scholarstream.api._deps import ReleasedUser, RuntimeDep
from scholarstream.notify import (
    Delivery,
    Notification,
    NotificationKind,
    NotificationTargetStore,
    TargetInfo,
)
from scholarstream.runtime import Runtime

router = APIRouter(tags=["notifications"])

MINE = "/me/notifications"
STREAMS = "/streams/{stream_id}/notifications"


class TargetIn(BaseModel):
    # No length limit here: the store's check answers with the URL examples (422
    # invalid_input), a validation error would not.
    url: str = Field(
        max_length=10_000,
        description="An apprise URL, e.g. ntfy://topic, mailto://user:pass@example.com, "
        "json://host/path. Stored encrypted; never returned.",
        examples=["ntfy://my-topic"],
    )
    label: str | None = Field(
        default=None, max_length=120, description="Defaults to the service's name."
    )
    kinds: list[NotificationKind] | None = Field(
        default=None, min_length=1, description="The kinds it receives; omitted: every kind."
    )


class TargetList(BaseModel):
    targets: list[TargetInfo]


def _store(runtime: Runtime) -> NotificationTargetStore:
    return NotificationTargetStore.for_server(runtime.settings, runtime.database)


def _test_notification(target_label: str, stream_id: uuid.UUID | None) -> Notification:
    scope = "one of your research streams" if stream_id else "all your notifications"
    return Notification(
        kind="test",
        title="ScholarStream test notification",
        body=f"Notifications to **{target_label}** work. This target receives {scope}.",
    )


async def _send_test(
    runtime: Runtime, owner_id: uuid.UUID, target_id: uuid.UUID, stream_id: uuid.UUID | None
) -> Delivery:
    target = await _store(runtime).target(owner_id, target_id, stream_id=stream_id)
    notification = _test_notification(target.label, stream_id)
    (delivery,) = await runtime.notifier.send(notification, [target])
    return delivery


# --- the user's own -----------------------------------------------------------------------


@router.get(MINE, response_model=TargetList)
async def list_my_targets(user: ReleasedUser, runtime: RuntimeDep) -> TargetList:
    return TargetList(targets=await _store(runtime).list(user.id))


@router.post(MINE, response_model=TargetInfo, status_code=201)
async def add_my_target(body: TargetIn, user: ReleasedUser, runtime: RuntimeDep) -> TargetInfo:
    """A URL apprise cannot send to is a 422 ``invalid_input`` (nothing saved)."""
    return await _store(runtime).add(user.id, body.url, label=body.label, kinds=body.kinds)


@router.delete(MINE + "/{target_id}", status_code=204)
async def delete_my_target(
    target_id: uuid.UUID, user: ReleasedUser, runtime: RuntimeDep
) -> Response:
    await _store(runtime).delete(user.id, target_id)
    return Response(status_code=204)


@router.post(MINE + "/{target_id}/test", response_model=Delivery)
async def test_my_target(target_id: uuid.UUID, user: ReleasedUser, runtime: RuntimeDep) -> Delivery:
    """Sends a test notification now. A target that fails is still a 200: the delivery
    says ``ok: false`` and why."""
    return await _send_test(runtime, user.id, target_id, None)


# --- a stream's ---------------------------------------------------------------------------


@router.get(STREAMS, response_model=TargetList)
async def list_stream_targets(
    stream_id: uuid.UUID, user: ReleasedUser, runtime: RuntimeDep
) -> TargetList:
    return TargetList(targets=await _store(runtime).list(user.id, stream_id=stream_id))


@router.post(STREAMS, response_model=TargetInfo, status_code=201)
async def add_stream_target(
    stream_id: uuid.UUID, body: TargetIn, user: ReleasedUser, runtime: RuntimeDep
) -> TargetInfo:
    return await _store(runtime).add(
        user.id, body.url, label=body.label, stream_id=stream_id, kinds=body.kinds
    )


@router.delete(STREAMS + "/{target_id}", status_code=204)
async def delete_stream_target(
    stream_id: uuid.UUID, target_id: uuid.UUID, user: ReleasedUser, runtime: RuntimeDep
) -> Response:
    await _store(runtime).delete(user.id, target_id, stream_id=stream_id)
    return Response(status_code=204)


@router.post(STREAMS + "/{target_id}/test", response_model=Delivery)
async def test_stream_target(
    stream_id: uuid.UUID, target_id: uuid.UUID, user: ReleasedUser, runtime: RuntimeDep
) -> Delivery:
    return await _send_test(runtime, user.id, target_id, stream_id)
