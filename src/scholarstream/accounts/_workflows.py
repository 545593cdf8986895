"""The accounts' durable work: a schedule that purges expired web sessions.

A registration module (``scholarstream.bootstrap.REGISTRATIONS``): importing it declares
the workflow to DBOS and registers its schedule with the durable layer."""

from __future__ import annotations

import logging
from datetime import datetime
from typing import Any

from dbos import DBOS

from scholarstream.accounts._web_sessions import purge_expired_sessions
from scholarstream.durable import ScheduleSpec, current_runtime, register_schedule

__all__ = ["PURGE_SESSIONS", "purge_expired_sessions_workflow"]

log = logging.getLogger(__name__)


@DBOS.step()
async def _purge_sessions_step() -> int:
    async with current_runtime().database.session() as session:
        return await purge_expired_sessions(session)


@DBOS.workflow()
async def purge_expired_sessions_workflow(scheduled_at: datetime, context: Any) -> None:
    removed = await _purge_sessions_step()
    if removed:
        log.info("removed %d expired web sessions", removed)


PURGE_SESSIONS = register_schedule(
    ScheduleSpec("purge-expired-sessions", "0 17 * * * *", purge_expired_sessions_workflow)
)
