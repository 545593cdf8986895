"""The durable engine: DBOS launched from here, with every queue and schedule declared here.

DBOS keeps workflow state in its system database (SQLite in the data directory, or the
PostgreSQL app database, in its own ``dbos`` schema). A workflow interrupted by a crash
resumes on the next launch; its completed steps are not run again.

Workflow functions are module-level (DBOS registers them by name), so they reach the
process's ``Runtime`` through ``current_runtime()`` rather than through arguments.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from dbos import DBOS, DBOSConfig

from scholarstream.errors import EngineError
from scholarstream.runtime import Runtime
from scholarstream.settings import Settings

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class QueueSpec:
    name: str
    purpose: str
    worker_concurrency: int | None = None
    global_concurrency: int | None = None
    polling_interval_sec: float = 1.0


@dataclass(frozen=True)
class ScheduleSpec:
    name: str
    cron: str  # six fields: seconds first
    workflow: Any


# Every queue of the product. Features enqueue by these names; limits live only here.
QUEUES: tuple[QueueSpec, ...] = (
    QueueSpec(
        "llm-calls",
        "one provider call of a multi-LLM research run",
        worker_concurrency=8,
        polling_interval_sec=0.25,
    ),
    QueueSpec(
        "source-requests",
        "literature source searches",
        worker_concurrency=4,
        polling_interval_sec=0.25,
    ),
    QueueSpec(
        "stream-runs",
        "scheduled and on-demand research stream runs",
        worker_concurrency=2,
        global_concurrency=4,
    ),
    QueueSpec("maintenance", "housekeeping", worker_concurrency=1, global_concurrency=1),
)

_runtime: Runtime | None = None


def current_runtime() -> Runtime:
    if _runtime is None:
        raise EngineError(
            "The durable engine is not running in this process.",
            hint="Start it with 'scholarstream serve' or 'scholarstream worker'.",
        )
    return _runtime


@DBOS.step()
async def _purge_sessions_step() -> int:
    from scholarstream.accounts import purge_expired_sessions

    async with current_runtime().database.session() as session:
        return await purge_expired_sessions(session)


@DBOS.workflow()
async def purge_expired_sessions_workflow(scheduled_at: datetime, context: Any) -> None:
    removed = await _purge_sessions_step()
    if removed:
        log.info("removed %d expired web sessions", removed)


# Every schedule of the product. Stored in the system database, so several processes
# sharing it fire each slot once.
SCHEDULES: tuple[ScheduleSpec, ...] = (
    ScheduleSpec("purge-expired-sessions", "0 17 * * * *", purge_expired_sessions_workflow),
)


def dbos_config(settings: Settings, *, name: str = "scholarstream") -> DBOSConfig:
    return {
        "name": name,
        "system_database_url": settings.system_database_url,
        "enable_otlp": False,
        "log_level": "WARNING",
    }


class Engine:
    """Owns the DBOS instance of this process."""

    def __init__(self, runtime: Runtime, *, name: str = "scholarstream") -> None:
        self.runtime = runtime
        self.name = name
        self.running = False

    async def launch(self) -> None:
        global _runtime
        _runtime = self.runtime
        DBOS(config=dbos_config(self.runtime.settings, name=self.name))
        DBOS.launch()
        for queue in QUEUES:
            await DBOS.register_queue_async(
                queue.name,
                worker_concurrency=queue.worker_concurrency,
                global_concurrency=queue.global_concurrency,
                polling_interval_sec=queue.polling_interval_sec,
            )
        await DBOS.apply_schedules_async(
            [
                {"schedule_name": s.name, "workflow_fn": s.workflow, "schedule": s.cron}
                for s in SCHEDULES
            ]
        )
        self.running = True
        log.info(
            "durable engine started (%s)",
            "PostgreSQL" if self.runtime.settings.is_postgres else "SQLite",
        )

    def shutdown(self) -> None:
        global _runtime
        if self.running:
            DBOS.destroy(workflow_completion_timeout_sec=5)
            self.running = False
        _runtime = None
