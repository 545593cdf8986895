"""The durable engine: DBOS launched from here, with every queue and schedule declared here.

DBOS keeps workflow state in its system database (SQLite in the data directory, or the
PostgreSQL app database, in its own ``dbos`` schema). A workflow interrupted by a crash
resumes when a process with the same executor id and the same release starts again; its
completed steps are not run again. Processes sharing a database need distinct executor
ids, or each launch would also take over the workflows the others are running.

Workflow functions are module-level (DBOS registers them by name), so they reach the
process's ``Runtime`` through ``current_runtime()`` rather than through arguments.
"""

from __future__ import annotations

import asyncio
import logging
import socket
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from dbos import DBOS, DBOSConfig

from scholarstream import __version__
from scholarstream.errors import EngineError
from scholarstream.research.execution import SWEEP_CRON as RESEARCH_SWEEP_CRON
from scholarstream.research.execution import research_sweep_workflow
from scholarstream.runtime import Runtime
from scholarstream.settings import Settings, mask_url_password
from scholarstream.streams.monitoring.schedule import CRON as STREAMS_CRON
from scholarstream.streams.monitoring.schedule import run_due_streams_workflow

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class QueueSpec:
    name: str
    purpose: str
    worker_concurrency: int | None = None
    global_concurrency: int | None = None
    polling_interval_sec: float = 1.0
    # Set: the queue is partitioned (every enqueue names a partition key) and at most this
    # many workflows of one partition run at once, across all processes.
    partition_concurrency: int | None = None


@dataclass(frozen=True)
class ScheduleSpec:
    name: str
    cron: str  # six fields: seconds first
    workflow: Any


# Every queue of the product. Features enqueue by these names; limits live only here.
QUEUES: tuple[QueueSpec, ...] = (
    QueueSpec(
        "llm-calls",
        "one provider call of a multi-LLM research run; partitioned by provider",
        worker_concurrency=8,
        # A research waits on this queue twice (its calls, then its synthesis): at 0.25 s
        # that alone was ~0.45 s of the 1 s overhead budget (bench/research_run.py).
        polling_interval_sec=0.05,
        partition_concurrency=4,
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
    # Runs due research streams (streams.scheduler_enabled turns it into a no-op).
    ScheduleSpec("run-due-streams", STREAMS_CRON, run_due_streams_workflow),
    # Re-enqueues the calls of research in flight that a stopped process never enqueued.
    ScheduleSpec("redispatch-research", RESEARCH_SWEEP_CRON, research_sweep_workflow),
)


def executor_id(settings: Settings, role: str) -> str:
    return settings.engine.executor_id or f"{socket.gethostname()}-{role}"


def _dbos_logs_through_ours() -> None:
    """DBOS's records go through the product's logging (its format, its streams). Left to
    itself DBOS binds a console handler to whatever ``sys.stderr`` is at its first launch;
    a handler of ours first stops that (it only adds one to a logger without handlers)."""
    dbos_log = logging.getLogger("dbos")
    if not dbos_log.handlers:
        dbos_log.addHandler(logging.NullHandler())
    dbos_log.propagate = True


def dbos_config(settings: Settings, *, name: str, role: str) -> DBOSConfig:
    return {
        "name": name,
        "system_database_url": settings.system_database_url,
        "executor_id": executor_id(settings, role),
        # The release, not DBOS's default hash of the workflow code: a restart of the same
        # release resumes its workflows whatever else changed in the process.
        "application_version": __version__,
        "enable_otlp": False,
        "log_level": "WARNING",
    }


class Engine:
    """Owns the DBOS instance of this process. ``role`` ("serve" or "worker") names the
    process in the default executor id."""

    def __init__(
        self, runtime: Runtime, *, name: str = "scholarstream", role: str = "serve"
    ) -> None:
        self.runtime = runtime
        self.name = name
        self.role = role
        self.running = False

    async def launch(self) -> None:
        global _runtime
        _runtime = self.runtime
        # Registers the product's workflows with DBOS before launch recovers any of them.
        import scholarstream.search.durable  # noqa: F401

        _dbos_logs_through_ours()
        DBOS(config=dbos_config(self.runtime.settings, name=self.name, role=self.role))
        try:
            DBOS.launch()
            await self._declare()
        except BaseException as exc:
            # DBOS is one instance per process: a half-launched one would be silently
            # reused, with this configuration, by the next launch.
            DBOS.destroy(destroy_registry=False)
            _runtime = None
            if not isinstance(exc, Exception):
                raise
            raise EngineError(
                f"The durable engine could not start: {exc}",
                hint="Check that its database "
                f"({mask_url_password(self.runtime.settings.system_database_url)}) "
                "is reachable and writable; SCHOLARSTREAM_ENGINE__SYSTEM_DATABASE_URL sets it.",
            ) from exc
        self.running = True
        log.info(
            "durable engine started (%s, executor %s)",
            "PostgreSQL" if self.runtime.settings.is_postgres else "SQLite",
            executor_id(self.runtime.settings, self.role),
        )

    async def _declare(self) -> None:
        for queue in QUEUES:
            await DBOS.register_queue_async(
                queue.name,
                worker_concurrency=queue.worker_concurrency,
                global_concurrency=queue.global_concurrency,
                partition_concurrency=queue.partition_concurrency,
                polling_interval_sec=queue.polling_interval_sec,
            )
        await DBOS.apply_schedules_async(
            [
                {"schedule_name": s.name, "workflow_fn": s.workflow, "schedule": s.cron}
                for s in SCHEDULES
            ]
        )
        # apply_schedules only adds and updates: drop the ones no longer declared.
        declared = {s.name for s in SCHEDULES}
        for stale in await DBOS.list_schedules_async(application_name=self.name):
            if stale["schedule_name"] not in declared:
                await DBOS.delete_schedule_async(stale["schedule_name"])

    async def shutdown(self) -> None:
        global _runtime
        if self.running:
            # Off the event loop: the workflows it waits for run on this very loop.
            await asyncio.to_thread(DBOS.destroy, workflow_completion_timeout_sec=5)
            self.running = False
        _runtime = None
