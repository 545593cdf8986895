"""The durable registry: the product's queues, the schedules features register, and the
crons the settings may replace."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import pytest

from scholarstream.bootstrap import REGISTRATIONS, load_registrations
from scholarstream.durable import (
    QUEUES,
    SCHEDULE_QUEUE,
    DurableRegistry,
    Engine,
    QueueSpec,
    ScheduleSpec,
    default_registry,
    scheduled_crons,
)
from scholarstream.errors import ConfigurationError
from scholarstream.runtime import build_runtime
from scholarstream.settings import Settings, load_settings


async def nightly(scheduled_at: datetime, context: Any) -> None:
    return None


async def hourly(scheduled_at: datetime, context: Any) -> None:
    return None


def test_a_new_registry_has_the_product_queues_and_no_schedule() -> None:
    registry = DurableRegistry()
    assert registry.queues == QUEUES
    assert SCHEDULE_QUEUE in registry.queue_names
    assert registry.schedules == ()


def test_the_same_spec_twice_changes_nothing_and_another_under_its_name_is_refused() -> None:
    registry = DurableRegistry()
    spec = ScheduleSpec("nightly", "0 0 3 * * *", nightly)
    assert registry.register_schedule(spec) is spec
    registry.register_schedule(ScheduleSpec("nightly", "0 0 3 * * *", nightly))  # re-import
    assert registry.schedules == (spec,)
    with pytest.raises(ValueError, match="nightly"):
        registry.register_schedule(ScheduleSpec("nightly", "0 0 4 * * *", nightly))
    with pytest.raises(ValueError, match="nightly"):
        registry.register_schedule(ScheduleSpec("nightly", "0 0 3 * * *", hourly))

    own = QueueSpec("feature-queue", "a feature's own queue", worker_concurrency=1)
    registry.register_queue(own)
    registry.register_queue(QueueSpec("feature-queue", "a feature's own queue", 1))
    assert registry.queues == (*QUEUES, own)
    with pytest.raises(ValueError, match="llm-calls"):
        registry.register_queue(QueueSpec("llm-calls", "another"))


def test_crons_are_the_registered_ones_unless_the_settings_replace_them() -> None:
    registry = DurableRegistry()
    registry.register_schedule(ScheduleSpec("nightly", "0 0 3 * * *", nightly))
    registry.register_schedule(ScheduleSpec("hourly", "0 0 * * * *", hourly))
    assert registry.crons({}) == {"nightly": "0 0 3 * * *", "hourly": "0 0 * * * *"}
    assert registry.crons({"hourly": "0 30 * * * *"})["hourly"] == "0 30 * * * *"
    with pytest.raises(ConfigurationError, match="weekly") as refused:
        registry.crons({"weekly": "0 0 0 * * 1"})
    assert refused.value.hint == "Schedules: nightly, hourly."


def test_every_feature_registers_its_schedules_from_its_registration_module(
    settings: Settings,
) -> None:
    load_registrations()
    names = {spec.name for spec in default_registry().schedules}
    assert {"purge-expired-sessions", "redispatch-research", "run-due-streams"} <= names
    assert scheduled_crons(settings).keys() == names
    assert "scholarstream.accounts._workflows" in REGISTRATIONS


async def test_an_engine_knows_only_the_queues_of_its_registry(settings: Settings) -> None:
    runtime = build_runtime(load_settings(data_dir=settings.data_dir))
    try:
        with pytest.raises(ValueError, match="feature-queue"):
            Engine(runtime, queues=("feature-queue",), registry=DurableRegistry())
        registry = DurableRegistry()
        registry.register_queue(QueueSpec("feature-queue", "a feature's own queue"))
        engine = Engine(runtime, queues=("feature-queue",), registry=registry)
        assert engine.queues == frozenset({"feature-queue"})
    finally:
        await runtime.close()
