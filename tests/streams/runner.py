"""What a stream's run works with, unpacked from a test's runtime: the product's own
``stream_runner``, as the durable step builds it."""

from __future__ import annotations

from scholarstream.streams.monitoring import stream_runner as runner

__all__ = ["runner"]
