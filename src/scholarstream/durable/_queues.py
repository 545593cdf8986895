"""The product's queues: their names and limits live only here."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["QUEUES", "SCHEDULE_QUEUE", "QueueSpec"]


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


SCHEDULE_QUEUE = "schedules"
# Every queue of the product. Features enqueue by these names; a feature may add one of its
# own with ``register_queue``.
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
        "stream-runs",
        "one research stream's run, on demand or on schedule",
        worker_concurrency=2,
        global_concurrency=4,
    ),
    QueueSpec(
        SCHEDULE_QUEUE,
        "the runs of the registered schedules: only processes that work the queues run them",
        worker_concurrency=3,
    ),
)
