"""The engine launched in this process: every queue of QUEUES registered with its limits,
every schedule of SCHEDULES applied, and a workflow enqueued on each product queue run by
this process's workers. Runs on SQLite and on PostgreSQL (``database_url``)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest
from dbos import DBOS

from scholarstream.engine import QUEUES, SCHEDULES, Engine, current_runtime
from scholarstream.runtime import build_runtime
from scholarstream.settings import Settings

RUN_TIMEOUT_SEC = 30.0


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
    engine = Engine(runtime)
    try:
        await engine.launch()
        yield engine
    finally:
        engine.shutdown()
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
        )
        declared = (spec.worker_concurrency, spec.global_concurrency, spec.polling_interval_sec)
        assert registered == declared, spec.name

    # Schedules: exactly the declared ones, active.
    schedules = {s["schedule_name"]: s for s in await DBOS.list_schedules_async()}
    assert sorted(schedules) == sorted(spec.name for spec in SCHEDULES)
    for schedule_spec in SCHEDULES:
        schedule = schedules[schedule_spec.name]
        assert schedule["schedule"] == schedule_spec.cron
        assert schedule["workflow_name"] == schedule_spec.workflow.__qualname__
        assert schedule["status"] == "ACTIVE"

    # A workflow enqueued on each product queue is run by this process's workers.
    handles = []
    for spec in QUEUES:
        product_queue = await DBOS.retrieve_queue_async(spec.name)
        assert product_queue is not None, spec.name
        handles.append(await product_queue.enqueue_async(engine_probe_workflow, spec.name))

    results = await asyncio.wait_for(
        asyncio.gather(*(handle.get_result() for handle in handles)), timeout=RUN_TIMEOUT_SEC
    )

    assert results == [f"{spec.name} ran in {db_settings.data_dir}" for spec in QUEUES]
    for spec, handle in zip(QUEUES, handles, strict=True):
        status = await handle.get_status()
        assert (status.status, status.queue_name) == ("SUCCESS", spec.name)
