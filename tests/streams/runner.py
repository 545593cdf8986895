"""What a stream's run works with, unpacked from a test's runtime (as the durable step does)."""

from __future__ import annotations

from scholarstream.runtime import Runtime
from scholarstream.streams.monitoring import StreamRunner


def runner(runtime: Runtime) -> StreamRunner:
    return StreamRunner(
        database=runtime.database,
        sources=runtime.sources,
        library=runtime.library,
        llm=runtime.llm,
        notifier=runtime.notifier,
        settings=runtime.settings,
    )
