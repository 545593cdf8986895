"""The runtime holder: what module-level workflow functions read, installed by the engine
and, in tests, through its public API."""

from __future__ import annotations

import pytest

from scholarstream.durable import (
    RuntimeHolder,
    current_runtime,
    engine_running,
    require_engine,
    runtime_holder,
)
from scholarstream.errors import EngineError
from scholarstream.runtime import build_runtime
from scholarstream.settings import Settings


def test_an_empty_holder_refuses_with_a_clear_engine_error() -> None:
    holder = RuntimeHolder()
    assert not holder.running
    assert holder.runtime is None
    with pytest.raises(EngineError, match="not running in this process") as refused:
        holder.get()
    assert refused.value.hint is not None and "scholarstream worker" in refused.value.hint
    assert refused.value.http_status == 503


async def test_installed_holds_a_runtime_for_a_block_and_restores_the_previous_one(
    settings: Settings,
) -> None:
    holder = RuntimeHolder()
    first, second = build_runtime(settings), build_runtime(settings)
    try:
        assert holder.install(first) is None
        with holder.installed(second) as installed:
            assert installed is second
            assert holder.get() is second
        assert holder.get() is first
        with holder.installed(None):
            assert not holder.running
        assert holder.get() is first
        holder.clear()
        assert not holder.running
    finally:
        await first.close()
        await second.close()


async def test_the_process_holder_answers_current_runtime_and_engine_running(
    settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    runtime = build_runtime(settings)
    try:
        monkeypatch.setattr(runtime_holder(), "runtime", None)
        assert not engine_running()
        with pytest.raises(EngineError):
            require_engine()
        with pytest.raises(EngineError):
            current_runtime()
        with runtime_holder().installed(runtime):
            assert engine_running()
            require_engine()
            assert current_runtime() is runtime
        assert not engine_running()
    finally:
        await runtime.close()
