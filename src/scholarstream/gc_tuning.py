"""The garbage collector of a long-running server process.

Streaming answers allocate many short-lived objects, so CPython's default thresholds run
collections hundreds of times a second, and each full collection walks everything start-up
loaded (modules, registries, schemas). Measured with ``bench/chat_sse.py`` at 50 streams,
the pauses were most of the p95 delay between tokens (178 ms, 3 ms after tuning)."""

from __future__ import annotations

import gc

# Young collections every 10,000 allocations (not 700); middle and full ones rarer too.
THRESHOLDS = (10_000, 50, 100)


def tune_for_serving() -> None:
    """Call once start-up has imported what the process keeps: that is moved out of the
    collector's sight, and collections run less often."""
    gc.freeze()
    gc.set_threshold(*THRESHOLDS)
