"""Executor ids: every process holds a lease on its id (a PostgreSQL advisory lock, or a
file lock beside the SQLite system database), so two running processes never share one,
a default id is the lowest free slot of its role, and a restarted process gets its slot
back. Runs on SQLite and on PostgreSQL (``db_settings``)."""

from __future__ import annotations

import pytest
from dbos import DBOS

from scholarstream.bootstrap import load_registrations
from scholarstream.durable import CLI, SERVE, Engine, is_per_run, scheduled_crons
from scholarstream.durable._leases import leases_for, per_run_executor_id, slot_executor_id
from scholarstream.errors import ConfigurationError, EngineError
from scholarstream.runtime import build_runtime
from scholarstream.settings import Settings, load_settings


def test_a_lease_is_held_by_one_holder_at_a_time(db_settings: Settings) -> None:
    leases = leases_for(db_settings, "scholarstream")
    try:
        first = leases.acquire("host-worker-0")
        assert first is not None
        assert first.held()
        # Another holder (another process; here another file description or connection).
        assert leases.acquire("host-worker-0") is None
        other = leases.acquire("host-worker-1")
        assert other is not None
        first.release()
        again = leases.acquire("host-worker-0")
        assert again is not None
        for lease in (again, other):
            lease.release()
    finally:
        leases.close()


def test_per_run_ids_are_new_every_run_and_recognised() -> None:
    first, second = per_run_executor_id(CLI), per_run_executor_id(CLI)
    assert first != second
    assert is_per_run(first)
    assert not is_per_run(slot_executor_id("worker", 3))
    assert not is_per_run("pod-worker-7")


async def test_a_default_id_is_the_lowest_free_slot_and_an_explicit_one_is_exclusive(
    db_settings: Settings,
) -> None:
    load_registrations()  # the product's schedules, as bootstrap declares them
    settings = load_settings(
        data_dir=db_settings.data_dir,
        database_url=db_settings.database_url,
        engine={"schedules": {"run-due-streams": "*/7 * * * * *"}},
    )
    leases = leases_for(settings, "scholarstream")
    slot0, slot1 = slot_executor_id(SERVE, 0), slot_executor_id(SERVE, 1)
    held = leases.acquire(slot0)  # a running 'serve' on this host
    assert held is not None
    runtime = build_runtime(settings)
    DBOS.destroy(destroy_registry=False)
    try:
        with pytest.raises(EngineError, match="in use by another running process") as refused:
            await Engine(runtime, executor_id=slot0, lease_wait_seconds=0.3).launch()
        assert refused.value.hint is not None and "--executor-id" in refused.value.hint

        engine = Engine(runtime)
        await engine.launch()
        try:
            assert engine.executor_id == slot1
            assert leases.acquire(slot1) is None  # held while it runs
            crons = {s["schedule_name"]: s["schedule"] for s in await DBOS.list_schedules_async()}
            assert crons["run-due-streams"] == "*/7 * * * * *"
        finally:
            await engine.shutdown()
        freed = leases.acquire(slot1)
        assert freed is not None
        freed.release()
    finally:
        held.release()
        leases.close()
        DBOS.destroy(destroy_registry=False)
        await runtime.close()


def test_unknown_schedules_are_refused(settings: Settings) -> None:
    load_registrations()
    bad = load_settings(
        data_dir=settings.data_dir, engine={"schedules": {"nightly": "0 0 3 * * *"}}
    )
    with pytest.raises(ConfigurationError, match="nightly") as refused:
        scheduled_crons(bad)
    assert refused.value.hint is not None and "run-due-streams" in refused.value.hint


def test_the_lock_file_of_a_per_run_id_goes_with_its_lease(settings: Settings) -> None:
    """SQLite: one lock file per executor id; a 'research' command's id is never used
    again, so its file is removed when its lease is released (they would pile up)."""
    leases = leases_for(settings, "scholarstream")
    directory = settings.data_dir / "executors"
    per_run = leases.acquire(per_run_executor_id(CLI))
    slot = leases.acquire(slot_executor_id(SERVE, 0))
    assert per_run is not None and slot is not None
    assert len(list(directory.iterdir())) == 2
    per_run.release()
    slot.release()
    (kept,) = directory.iterdir()  # a slot's file stays: its id comes back
    assert kept.name.startswith(f"{slot_executor_id(SERVE, 0)}-")
