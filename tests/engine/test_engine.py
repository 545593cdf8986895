"""The engine launched in this process: every queue of the registry declared with its
limits, every registered schedule applied, and a workflow enqueued on each product queue run
by this process's workers. Runs on SQLite and on PostgreSQL (``database_url``)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from dbos import DBOS, DBOSClient, SetEnqueueOptions

from scholarstream.bootstrap import build_engine, load_registrations
from scholarstream.durable import (
    SCHEDULE_QUEUE,
    DurableRegistry,
    Engine,
    QueueSpec,
    ScheduleSpec,
    current_runtime,
    default_registry,
)
from scholarstream.errors import EngineError
from scholarstream.runtime import build_runtime
from scholarstream.settings import Settings, load_settings

RUN_TIMEOUT_SEC = 30.0

# What the product's engine declares: the registry once every feature has registered.
load_registrations()
QUEUES: tuple[QueueSpec, ...] = default_registry().queues
SCHEDULES: tuple[ScheduleSpec, ...] = default_registry().schedules


@DBOS.workflow()
async def engine_probe_workflow(queue_name: str) -> str:
    # Workflows reach the process's runtime through the engine, not through arguments.
    return f"{queue_name} ran in {current_runtime().settings.data_dir}"


@pytest.fixture
async def engine(db_settings: Settings) -> AsyncIterator[Engine]:
    # DBOS is a process-wide singleton: an instance left over by another test would be
    # reused with its old configuration, so there must be none.
    DBOS.destroy(destroy_registry=False)
    runtime = build_runtime(db_settings)
    engine = build_engine(runtime)
    try:
        await engine.launch()
        yield engine
    finally:
        await engine.shutdown()
        # In case launch failed half-way (Engine.shutdown only destroys a running engine).
        DBOS.destroy(destroy_registry=False)
        await runtime.close()


async def test_launched_engine_has_every_queue_and_schedule_and_runs_queued_workflows(
    engine: Engine, db_settings: Settings
) -> None:
    # One launch for all three checks: each launch and shutdown costs seconds.
    assert engine.running

    # Queues: exactly the declared ones, each with its declared limits.
    listed = {queue.name: queue for queue in await DBOS.list_queues_async()}
    assert sorted(listed) == sorted(spec.name for spec in QUEUES)
    for spec in QUEUES:
        queue = listed[spec.name]
        assert queue.application_name == engine.name
        registered = (
            await queue.get_worker_concurrency_async(),
            await queue.get_global_concurrency_async(),
            await queue.get_polling_interval_sec_async(),
            await queue.get_partition_concurrency_async(),
        )
        declared = (
            spec.worker_concurrency,
            spec.global_concurrency,
            spec.polling_interval_sec,
            spec.partition_concurrency,
        )
        assert registered == declared, spec.name

    # Schedules: exactly the declared ones, active.
    schedules = {s["schedule_name"]: s for s in await DBOS.list_schedules_async()}
    assert sorted(schedules) == sorted(spec.name for spec in SCHEDULES)
    for schedule_spec in SCHEDULES:
        schedule = schedules[schedule_spec.name]
        assert schedule["schedule"] == schedule_spec.cron
        assert schedule["workflow_name"] == schedule_spec.workflow.__qualname__
        assert schedule["status"] == "ACTIVE"
        # Run only by processes that work the queues (not by 'serve --no-workers', the CLI).
        assert schedule["queue_name"] == SCHEDULE_QUEUE

    # A workflow enqueued on each product queue is run by this process's workers.
    handles = []
    for spec in QUEUES:
        product_queue = await DBOS.retrieve_queue_async(spec.name)
        assert product_queue is not None, spec.name
        # A partitioned queue runs only work enqueued under a partition key.
        key = "probe" if spec.partition_concurrency is not None else None
        with SetEnqueueOptions(queue_partition_key=key):
            handles.append(await product_queue.enqueue_async(engine_probe_workflow, spec.name))

    results = await asyncio.wait_for(
        asyncio.gather(*(handle.get_result() for handle in handles)), timeout=RUN_TIMEOUT_SEC
    )

    assert results == [f"{spec.name} ran in {db_settings.data_dir}" for spec in QUEUES]
    for spec, handle in zip(QUEUES, handles, strict=True):
        status = await handle.get_status()
        assert (status.status, status.queue_name) == ("SUCCESS", spec.name)


@DBOS.workflow()
async def engine_slow_workflow() -> str:
    await asyncio.sleep(0.5)
    return "finished"


@DBOS.workflow()
async def engine_retired_schedule_workflow(scheduled_at: datetime, context: Any) -> None:
    return None


async def test_shutdown_lets_running_workflows_finish(db_settings: Settings) -> None:
    DBOS.destroy(destroy_registry=False)
    runtime = build_runtime(db_settings)
    engine = build_engine(runtime)
    await engine.launch()
    try:
        handle = await DBOS.start_workflow_async(engine_slow_workflow)
        await asyncio.sleep(0.05)
    finally:
        await engine.shutdown()
        await runtime.close()
    assert not engine.running
    client = DBOSClient(system_database_url=db_settings.system_database_url)
    try:
        status = client.retrieve_workflow(handle.workflow_id).get_status()
        assert (status.status, status.output) == ("SUCCESS", "finished")
    finally:
        client.destroy()


async def test_failed_launch_leaves_nothing_behind(data_dir: Path, db_settings: Settings) -> None:
    DBOS.destroy(destroy_registry=False)
    broken = build_runtime(
        load_settings(
            data_dir=data_dir,
            database_url=db_settings.database_url,
            engine={"system_database_url": "sqlite:////nonexistent-dir/dbos.sqlite"},
        )
    )
    with pytest.raises(EngineError, match="could not start") as caught:
        await build_engine(broken).launch()
    assert caught.value.hint is not None and "SYSTEM_DATABASE_URL" in caught.value.hint
    await broken.close()
    with pytest.raises(EngineError):
        current_runtime()
    # The next launch gets a fresh instance with its own configuration.
    runtime = build_runtime(db_settings)
    engine = build_engine(runtime)
    await engine.launch()
    try:
        assert current_runtime() is runtime
        assert {q.name for q in await DBOS.list_queues_async()} == {q.name for q in QUEUES}
    finally:
        await engine.shutdown()
        await runtime.close()


async def test_schedules_no_longer_declared_are_removed(db_settings: Settings) -> None:
    retired = ScheduleSpec("retired-schedule", "0 0 3 * * *", engine_retired_schedule_workflow)
    for schedules in ((*SCHEDULES, retired), SCHEDULES):
        registry = DurableRegistry(QUEUES)
        for spec in schedules:
            registry.register_schedule(spec)
        DBOS.destroy(destroy_registry=False)
        runtime = build_runtime(db_settings)
        engine = Engine(runtime, registry=registry)
        await engine.launch()
        try:
            names = {s["schedule_name"] for s in await DBOS.list_schedules_async()}
        finally:
            await engine.shutdown()
            await runtime.close()
        assert names == {s.name for s in schedules}
