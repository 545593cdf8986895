"""The durable engine: DBOS launched from here, with the queues and schedules of the
registry (``DurableRegistry``) it is given.

DBOS keeps workflow state in its system database (SQLite in the data directory, or the
PostgreSQL app database, in its own ``dbos`` schema). A workflow interrupted by a crash
resumes when a process with the same executor id and the same release starts again; its
completed steps are not run again.

Executor ids (the rules for operators: docs/deployment.md) are leased while a process
runs (``_leases``). Every process looks every few seconds for interrupted workflows
whose executor's lease is free, and puts them back on their queues: a CLI run's at once,
the others after ``engine.recovery_grace_seconds``. Work of an executor that never comes
back is not lost.

Queues: a process works the product queues it is given (all for a worker and for ``serve``
unless ``engine.run_queues`` is off; ``llm-calls`` for the CLI). Scheduled workflows go to
the ``schedules`` queue, so only processes working it run them; a slot is one workflow id,
run once whatever the number of processes.

The engine imports no feature: the modules that declare workflows (and register their
schedules) are imported before launch, by ``scholarstream.bootstrap``. Workflow functions
are module-level (DBOS registers them by name), so they reach the process's ``Runtime``
through ``current_runtime()``, which the engine's ``RuntimeHolder`` answers while it runs.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Collection

from dbos import DBOS, DBOSConfig

from scholarstream import __version__
from scholarstream.durable._dbos_private import check_dbos_version, recover_pending_workflows
from scholarstream.durable._holder import RuntimeHolder, runtime_holder
from scholarstream.durable._leases import (
    LEASE_WAIT_SEC,
    MAX_SLOTS,
    SLOT_RECHECK_SEC,
    Lease,
    Leases,
    is_per_run,
    leases_for,
    per_run_executor_id,
    slot_executor_id,
)
from scholarstream.durable._queues import SCHEDULE_QUEUE
from scholarstream.durable._registry import DurableRegistry, default_registry
from scholarstream.errors import EngineError
from scholarstream.runtime import Runtime
from scholarstream.settings import Settings, mask_url_password

__all__ = [
    "CLI",
    "PER_RUN_ROLES",
    "SERVE",
    "WORKER",
    "Engine",
    "dbos_config",
    "recovery_interval",
    "scheduled_crons",
]

log = logging.getLogger(__name__)

SERVE = "serve"
WORKER = "worker"
CLI = "cli"
# Roles whose every run takes a new executor id: nobody waits for them to come back.
PER_RUN_ROLES = frozenset({CLI})


def scheduled_crons(settings: Settings, registry: DurableRegistry | None = None) -> dict[str, str]:
    """Each registered schedule's cron: the registered one unless ``engine.schedules``
    replaces it."""
    return (registry or default_registry()).crons(settings.engine.schedules)


# --- the engine ------------------------------------------------------------------------------


def _dbos_logs_through_ours() -> None:
    """DBOS's records go through the product's logging (its format, its streams). Left to
    itself DBOS binds a console handler to whatever ``sys.stderr`` is at its first launch;
    a handler of ours first stops that (it only adds one to a logger without handlers)."""
    dbos_log = logging.getLogger("dbos")
    if not dbos_log.handlers:
        dbos_log.addHandler(logging.NullHandler())
    dbos_log.propagate = True


def dbos_config(settings: Settings, *, name: str, executor_id: str) -> DBOSConfig:
    return {
        "name": name,
        "system_database_url": settings.system_database_url,
        "executor_id": executor_id,
        # The release, not DBOS's default hash of the workflow code: a restart of the same
        # release resumes its workflows whatever else changed in the process.
        "application_version": __version__,
        "enable_otlp": False,
        "log_level": "WARNING",
    }


def recovery_interval(grace_seconds: float) -> float:
    """How often a process looks for the interrupted workflows of processes gone."""
    return min(15.0, max(0.5, grace_seconds / 4))


class Engine:
    """Owns the DBOS instance of this process.

    ``role`` ("serve", "worker" or "cli") names the process in its default executor id.
    ``queues``: the product queues it works; ``None`` (the default) all of them, the
    scheduled workflows included; ``()`` none (it still enqueues, and runs the workflows it
    starts itself). ``executor_id`` replaces ``engine.executor_id`` (ignored by the CLI).
    ``registry``: the queues and schedules it declares (default: the process's, which the
    features' registration modules fill); ``holder``: where it installs ``runtime`` while it
    runs (default: the process's, which ``current_runtime()`` reads). ``lease_wait_seconds``:
    how long an explicit ``executor_id`` waits for its lease before the launch is refused."""

    def __init__(
        self,
        runtime: Runtime,
        *,
        name: str = "scholarstream",
        role: str = SERVE,
        queues: Collection[str] | None = None,
        executor_id: str | None = None,
        registry: DurableRegistry | None = None,
        holder: RuntimeHolder | None = None,
        lease_wait_seconds: float = LEASE_WAIT_SEC,
    ) -> None:
        self.lease_wait_seconds = lease_wait_seconds
        self.registry = registry or default_registry()
        self.holder = holder or runtime_holder()
        unknown = sorted(set(queues or ()) - self.registry.queue_names)
        if unknown:
            raise ValueError(f"unknown queues: {unknown}")
        self.runtime = runtime
        self.name = name
        self.role = role
        self.queues: frozenset[str] | None = None if queues is None else frozenset(queues)
        self.requested_executor_id = (
            None if role in PER_RUN_ROLES else executor_id or runtime.settings.engine.executor_id
        )
        self.executor_id: str | None = None
        self.running = False
        self._leases: Leases | None = None
        self._lease: Lease | None = None
        self._recovery: asyncio.Task[None] | None = None
        self._free_since: dict[str, float] = {}

    async def launch(self) -> None:
        check_dbos_version()
        settings = self.runtime.settings
        crons = scheduled_crons(settings, self.registry)
        self.holder.install(self.runtime)
        _dbos_logs_through_ours()
        try:
            self._leases = leases_for(settings, self.name)
            # Not in a thread: the loop's default executor may be the one a previous DBOS
            # instance of this process shut down; the new instance installs its own.
            executor_id, self._lease = self._claim_executor_id()
            self.executor_id = executor_id
            DBOS(config=dbos_config(settings, name=self.name, executor_id=executor_id))
            if self.queues is not None:
                DBOS.listen_queues(sorted(self.queues))
            DBOS.launch()
            await self._declare(crons)
        except BaseException as exc:
            # DBOS is one instance per process: a half-launched one would be silently
            # reused, with this configuration, by the next launch.
            DBOS.destroy(destroy_registry=False)
            self._release()
            self.holder.clear()
            if not isinstance(exc, Exception):
                raise
            if isinstance(exc, EngineError):
                raise
            raise EngineError(
                f"The durable engine could not start: {exc}",
                hint="Check that its database "
                f"({mask_url_password(settings.system_database_url)}) "
                "is reachable and writable; SCHOLARSTREAM_ENGINE__SYSTEM_DATABASE_URL sets it.",
            ) from exc
        self.running = True
        grace = settings.engine.recovery_grace_seconds
        self._recovery = asyncio.create_task(
            self._recover_forever(recovery_interval(grace)), name="engine-recovery"
        )
        works = "all" if self.queues is None else ", ".join(sorted(self.queues)) or "none"
        log.info(
            "durable engine started (%s, executor %s, queues: %s)",
            "PostgreSQL" if settings.is_postgres else "SQLite",
            self.executor_id,
            works,
        )

    def _claim_executor_id(self) -> tuple[str, Lease]:
        assert self._leases is not None
        if self.role in PER_RUN_ROLES:
            executor_id = per_run_executor_id(self.role)
            lease = self._leases.acquire(executor_id)
            assert lease is not None  # a fresh random id
            return executor_id, lease
        if self.requested_executor_id:
            deadline = time.monotonic() + self.lease_wait_seconds
            while (lease := self._leases.acquire(self.requested_executor_id)) is None:
                if time.monotonic() > deadline:
                    raise EngineError(
                        f"Executor id {self.requested_executor_id!r} is in use by another "
                        "running process.",
                        hint="Give every process its own id (--executor-id or "
                        "SCHOLARSTREAM_ENGINE__EXECUTOR_ID), or leave it unset for a distinct "
                        "default.",
                    )
                time.sleep(0.2)
            return self.requested_executor_id, lease
        for slot in range(MAX_SLOTS):
            executor_id = slot_executor_id(self.role, slot)
            if (lease := self._leases.acquire(executor_id)) is not None:
                return self._lowest_slot(slot, executor_id, lease)
        raise EngineError(
            f"{MAX_SLOTS} '{self.role}' processes already run on this host.",
            hint="Stop some, or give this one an id of its own with --executor-id.",
        )

    def _lowest_slot(self, slot: int, executor_id: str, lease: Lease) -> tuple[str, Lease]:
        """Slot ``slot`` is ours; a lower one that was busy may have been held only for a
        moment, by another process checking whether its process is gone (this one,
        restarting): asked once more, it is taken instead."""
        assert self._leases is not None
        if slot == 0:
            return executor_id, lease
        time.sleep(SLOT_RECHECK_SEC)
        for lower in range(slot):
            lower_id = slot_executor_id(self.role, lower)
            if (lower_lease := self._leases.acquire(lower_id)) is not None:
                lease.release()
                return lower_id, lower_lease
        return executor_id, lease

    async def _declare(self, crons: dict[str, str]) -> None:
        for queue in self.registry.queues:
            await DBOS.register_queue_async(
                queue.name,
                worker_concurrency=queue.worker_concurrency,
                global_concurrency=queue.global_concurrency,
                partition_concurrency=queue.partition_concurrency,
                polling_interval_sec=queue.polling_interval_sec,
            )
        await DBOS.apply_schedules_async(
            [
                {
                    "schedule_name": s.name,
                    "workflow_fn": s.workflow,
                    "schedule": crons[s.name],
                    "queue_name": SCHEDULE_QUEUE,
                }
                for s in self.registry.schedules
            ]
        )
        # apply_schedules only adds and updates: drop the ones no longer declared.
        declared = {s.name for s in self.registry.schedules}
        for stale in await DBOS.list_schedules_async(application_name=self.name):
            if stale["schedule_name"] not in declared:
                await DBOS.delete_schedule_async(stale["schedule_name"])

    # --- recovery of the workflows of processes gone --------------------------------------

    async def _recover_forever(self, interval: float) -> None:
        """A first pass at once (a CLI run picks up what the last one left), then every
        ``interval`` seconds."""
        while True:
            try:
                await self._keep_lease()
                await self.recover_abandoned()
            except Exception:
                log.warning("looking for interrupted workflows failed", exc_info=True)
            await asyncio.sleep(interval)

    async def _keep_lease(self) -> None:
        """A database lock lives as long as its connection: one lost is taken again."""
        if self._leases is None or self.executor_id is None:
            return
        if self._lease is not None and await asyncio.to_thread(self._lease.held):
            return
        if self._lease is not None:
            await asyncio.to_thread(self._lease.release)
        self._lease = await asyncio.to_thread(self._leases.acquire, self.executor_id)
        if self._lease is None:
            log.error(
                "executor %s lost its lease and another process holds it now: its "
                "workflows may run twice; restart this process",
                self.executor_id,
            )

    async def recover_abandoned(self) -> list[str]:
        """Puts back on their queues the interrupted workflows of every executor whose
        process is gone: a per-run (CLI) one at once, any other once it has been gone for
        ``engine.recovery_grace_seconds``. Returns the executors recovered. The CLI
        recovers only per-run executors."""
        leases = self._leases
        if leases is None:
            return []
        pending = await DBOS.list_workflows_async(
            status="PENDING",
            app_version=__version__,
            application_name=self.name,
            load_input=False,
            load_output=False,
        )
        executors = {w.executor_id for w in pending if w.executor_id} - {self.executor_id}
        for gone in set(self._free_since) - executors:  # nothing of theirs is pending now
            del self._free_since[gone]
        grace = self.runtime.settings.engine.recovery_grace_seconds
        recovered: list[str] = []
        now = time.monotonic()
        for executor in sorted(e for e in executors if e is not None):
            per_run = is_per_run(executor)
            if self.role in PER_RUN_ROLES and not per_run:
                continue
            lease = await asyncio.to_thread(leases.acquire, executor)
            if lease is None:  # its process runs
                self._free_since.pop(executor, None)
                continue
            try:
                gone_since = self._free_since.setdefault(executor, now)
                if per_run or now - gone_since >= grace:
                    handles = await asyncio.to_thread(recover_pending_workflows, [executor])
                    self._free_since.pop(executor, None)
                    recovered.append(executor)
                    if handles:
                        log.warning(
                            "executor %s is gone: recovered its %d interrupted workflows",
                            executor,
                            len(handles),
                        )
            finally:
                await asyncio.to_thread(lease.release)
        return recovered

    def _release(self) -> None:
        if self._lease is not None:
            self._lease.release()
            self._lease = None
        if self._leases is not None:
            self._leases.close()
            self._leases = None

    async def shutdown(self) -> None:
        if self._recovery is not None:
            self._recovery.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._recovery
            self._recovery = None
        if self.running:
            # Off the event loop: the workflows it waits for run on this very loop.
            await asyncio.to_thread(DBOS.destroy, workflow_completion_timeout_sec=5)
            self.running = False
        # Only now: no other process may recover what this one was still finishing. Not in
        # a thread: DBOS shut down the loop's default executor, which was its own.
        self._release()
        self.holder.clear()
