"""The durable layer: queue specifications, the registry where features register their
schedules (and any queue of their own), the runtime holder read by DBOS's module-level
workflow functions, and the ``Engine`` (DBOS launch, shutdown and recovery).

It imports no feature: ``scholarstream.bootstrap`` imports the features' registration
modules, then launches the engine, which declares whatever the registry holds."""

from __future__ import annotations

from scholarstream.durable._dbos_private import TESTED_DBOS_MAJOR, check_dbos_version
from scholarstream.durable._engine import (
    CLI,
    PER_RUN_ROLES,
    SERVE,
    WORKER,
    Engine,
    dbos_config,
    recovery_interval,
    scheduled_crons,
)
from scholarstream.durable._holder import (
    RuntimeHolder,
    current_runtime,
    engine_running,
    require_engine,
    runtime_holder,
)
from scholarstream.durable._leases import is_per_run
from scholarstream.durable._queues import QUEUES, SCHEDULE_QUEUE, QueueSpec
from scholarstream.durable._registry import (
    DurableRegistry,
    ScheduleSpec,
    default_registry,
    register_queue,
    register_schedule,
)

__all__ = [
    "CLI",
    "PER_RUN_ROLES",
    "QUEUES",
    "SCHEDULE_QUEUE",
    "SERVE",
    "TESTED_DBOS_MAJOR",
    "WORKER",
    "DurableRegistry",
    "Engine",
    "QueueSpec",
    "RuntimeHolder",
    "ScheduleSpec",
    "check_dbos_version",
    "current_runtime",
    "dbos_config",
    "default_registry",
    "engine_running",
    "is_per_run",
    "recovery_interval",
    "register_queue",
    "register_schedule",
    "require_engine",
    "runtime_holder",
    "scheduled_crons",
]
