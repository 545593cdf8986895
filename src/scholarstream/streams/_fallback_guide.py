"""The guide a user with a model gets: the model's guide, and for any turn whose model
answer is unusable, late or failed, the rule-based guide's answer instead (issue 22). The
next turn asks the model again.

The model's turn has a total deadline (a model that keeps writing never trips the per-read
timeout; a small local model can write for minutes): it counts only the time spent
waiting for the model, and running out cancels the request. Text already shown is voided
with a ``retry`` event whose reason is the plain-words notice, then the offline guide's
message streams, and the turn's result carries the ``fallback`` record.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator
from contextlib import aclosing

from scholarstream.search import FALLBACK_ERRORS, FallbackLog
from scholarstream.streams._model_guide import FEATURE
from scholarstream.streams.core import (
    Guide,
    GuideAnswer,
    GuideFellBack,
    GuideRequest,
    GuideRetry,
    GuideStreamItem,
    GuideTextDelta,
    RuleGuide,
)


class FallbackGuide:
    def __init__(
        self, model: Guide, *, offline: Guide | None = None, deadline_seconds: float = 300.0
    ) -> None:
        self.model = model
        self.offline = offline if offline is not None else RuleGuide()
        self.deadline_seconds = deadline_seconds

    async def respond(self, request: GuideRequest) -> AsyncGenerator[GuideStreamItem, None]:
        shown = False
        try:
            async for item in self._model_items(request):
                shown = shown or isinstance(item, GuideTextDelta)
                yield item
            return
        except FALLBACK_ERRORS as exc:
            # One log per turn: each turn is its own run of the guide.
            fallback = FallbackLog().failed(FEATURE, exc)
        if shown:  # the client clears the model's text and shows why
            yield GuideRetry(reason=fallback.message)
        yield GuideFellBack(fallback)
        async with aclosing(self.offline.respond(request)) as items:
            async for item in items:
                yield item

    async def _model_items(self, request: GuideRequest) -> AsyncGenerator[GuideStreamItem, None]:
        """The model guide's items, each awaited within what is left of the deadline
        (time spent by the client between items does not count)."""
        end = asyncio.get_running_loop().time() + self.deadline_seconds
        async with aclosing(self.model.respond(request)) as items:
            while True:
                try:
                    async with asyncio.timeout_at(end):
                        item = await anext(items)
                except StopAsyncIteration:
                    return
                yield item
                if isinstance(item, GuideAnswer):
                    return
