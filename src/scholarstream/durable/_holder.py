"""The process's ``Runtime`` for DBOS's module-level workflow functions.

DBOS registers workflows by name, as module-level functions, so they cannot be handed the
runtime: they ask ``current_runtime()``. The engine installs its runtime in the holder at
launch and takes it out at shutdown; tests install one with ``holder.installed(runtime)``."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from scholarstream.errors import EngineError
from scholarstream.runtime import Runtime

__all__ = [
    "RuntimeHolder",
    "current_runtime",
    "engine_running",
    "require_engine",
    "runtime_holder",
]


class RuntimeHolder:
    """Holds at most one ``Runtime``: the one of the durable engine running in this process."""

    def __init__(self) -> None:
        self._runtime: Runtime | None = None

    @property
    def runtime(self) -> Runtime | None:
        """The installed runtime, or ``None``. Settable (pytest's ``monkeypatch.setattr``
        then restores the previous one after the test)."""
        return self._runtime

    @runtime.setter
    def runtime(self, runtime: Runtime | None) -> None:
        self._runtime = runtime

    def install(self, runtime: Runtime | None) -> Runtime | None:
        """Installs ``runtime`` (``None``: none) and returns the one it replaces."""
        previous, self._runtime = self._runtime, runtime
        return previous

    def clear(self) -> None:
        self._runtime = None

    @contextmanager
    def installed(self, runtime: Runtime | None) -> Iterator[Runtime | None]:
        """``runtime`` (``None``: no engine) while the block runs; the previous one after."""
        previous = self.install(runtime)
        try:
            yield runtime
        finally:
            self._runtime = previous

    def get(self) -> Runtime:
        """The runtime; ``EngineError`` (503 over HTTP) when no engine runs here."""
        if self._runtime is None:
            raise EngineError(
                "The durable engine is not running in this process.",
                hint="Start it with 'scholarstream serve' or 'scholarstream worker'.",
            )
        return self._runtime

    @property
    def running(self) -> bool:
        return self._runtime is not None


_HOLDER = RuntimeHolder()


def runtime_holder() -> RuntimeHolder:
    """The process's holder: the one the engine fills and workflow functions read."""
    return _HOLDER


def current_runtime() -> Runtime:
    """The running engine's runtime; ``EngineError`` when no engine runs in this process."""
    return _HOLDER.get()


def require_engine() -> None:
    """``EngineError`` (503 over HTTP) unless a durable engine runs in this process: for work
    that starts or signals a workflow, which nothing here would run otherwise."""
    _HOLDER.get()


def engine_running() -> bool:
    """Whether a durable engine runs in this process (the one place that says so)."""
    return _HOLDER.running
