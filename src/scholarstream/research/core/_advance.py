"""The transitions nobody has to ask for, applied right after a change in the same
transaction: completion detection once a result is recorded, then the synthesis skip
logic once the research is ``synthesizing``.

=============  ================================================================
status         automatic step
=============  ================================================================
processing     ``completion.apply_completion`` (the decision matrix)
synthesizing   ``synthesis.begin_synthesis`` (skip -> completed, error -> failed)
=============  ================================================================

Steps are applied until one changes nothing: a research left ``synthesizing`` is one
whose synthesis must run; one left ``processing`` still waits for models.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from scholarstream.research.core._base import utc_now
from scholarstream.research.core._changes import ResearchChange
from scholarstream.research.core._completion import apply_completion
from scholarstream.research.core._lifecycle import ResearchStatus
from scholarstream.research.core._records import Research
from scholarstream.research.core._synthesis import begin_synthesis

__all__ = ["AUTOMATIC_STEPS", "advance", "followed_by"]


def _synthesis_skip_logic(research: Research, now: datetime) -> ResearchChange:
    _decision, change = begin_synthesis(research, now=now)
    return change


AUTOMATIC_STEPS: dict[ResearchStatus, Callable[[Research, datetime], ResearchChange]] = {
    ResearchStatus.PROCESSING: lambda research, now: apply_completion(research, now=now),
    ResearchStatus.SYNTHESIZING: _synthesis_skip_logic,
}


def followed_by(first: ResearchChange, second: ResearchChange) -> ResearchChange:
    """``second`` (computed from ``first.research``) with ``first``'s events and calls
    before its own."""
    return ResearchChange(
        research=second.research,
        events=[*first.events, *second.events],
        llm_calls=[*first.llm_calls, *second.llm_calls],
    )


def advance(change: ResearchChange, *, now: datetime | None = None) -> ResearchChange:
    """``change`` followed by every automatic step its research is due."""
    moment = utc_now(now)
    while (step := AUTOMATIC_STEPS.get(change.research.status)) is not None:
        following = step(change.research, moment)
        if following.research == change.research:
            return change
        change = followed_by(change, following)
    return change
