"""Where features declare what the engine runs: their schedules and any queue of their own.

A feature registers from its registration module (listed in ``bootstrap.REGISTRATIONS``),
at import, so the engine, which imports no feature, launches whatever has been registered
by the time it starts."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from scholarstream.durable._queues import QUEUES, QueueSpec
from scholarstream.errors import ConfigurationError

__all__ = [
    "DurableRegistry",
    "ScheduleSpec",
    "default_registry",
    "register_queue",
    "register_schedule",
]


@dataclass(frozen=True)
class ScheduleSpec:
    """A scheduled workflow: ``workflow`` is a ``@DBOS.workflow()`` function taking
    ``(scheduled_at: datetime, context: Any)``; ``cron`` has six fields, seconds first
    (``engine.schedules`` in the settings may replace it, by ``name``)."""

    name: str
    cron: str
    workflow: Callable[..., Any]


class DurableRegistry:
    """The queues and schedules one engine declares. Registering the same spec again (a
    module imported twice) changes nothing; another spec under a taken name is refused."""

    def __init__(self, queues: Iterable[QueueSpec] = QUEUES) -> None:
        self._queues: dict[str, QueueSpec] = {}
        self._schedules: dict[str, ScheduleSpec] = {}
        for queue in queues:
            self.register_queue(queue)

    def register_queue(self, spec: QueueSpec) -> QueueSpec:
        known = self._queues.setdefault(spec.name, spec)
        if known != spec:
            raise ValueError(f"Another queue is already registered as {spec.name!r}.")
        return spec

    def register_schedule(self, spec: ScheduleSpec) -> ScheduleSpec:
        known = self._schedules.setdefault(spec.name, spec)
        if known.cron != spec.cron or _qualname(known.workflow) != _qualname(spec.workflow):
            raise ValueError(f"Another schedule is already registered as {spec.name!r}.")
        self._schedules[spec.name] = spec
        return spec

    @property
    def queues(self) -> tuple[QueueSpec, ...]:
        return tuple(self._queues.values())

    @property
    def queue_names(self) -> frozenset[str]:
        return frozenset(self._queues)

    @property
    def schedules(self) -> tuple[ScheduleSpec, ...]:
        return tuple(self._schedules.values())

    def crons(self, overrides: dict[str, str]) -> dict[str, str]:
        """Each schedule's cron: the registered one unless ``overrides`` (the settings'
        ``engine.schedules``) replaces it. ``ConfigurationError`` for an unknown name."""
        unknown = sorted(set(overrides) - set(self._schedules))
        if unknown:
            raise ConfigurationError(
                f"engine.schedules names unknown schedules: {', '.join(unknown)}.",
                hint=f"Schedules: {', '.join(self._schedules)}.",
            )
        return {name: overrides.get(name, s.cron) for name, s in self._schedules.items()}


def _qualname(fn: Callable[..., Any]) -> str:
    return f"{getattr(fn, '__module__', '')}.{getattr(fn, '__qualname__', repr(fn))}"


_DEFAULT = DurableRegistry()


def default_registry() -> DurableRegistry:
    """The process's registry: the one feature registration modules fill."""
    return _DEFAULT


def register_schedule(spec: ScheduleSpec) -> ScheduleSpec:
    """Registers ``spec`` with the process's registry (call it at import of a feature's
    registration module)."""
    return _DEFAULT.register_schedule(spec)


def register_queue(spec: QueueSpec) -> QueueSpec:
    """Adds a feature's own queue to the process's registry."""
    return _DEFAULT.register_queue(spec)
