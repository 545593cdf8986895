"""A reviewer's progress and the stopping aid: how many records they screened and how
many they included as they went (the chart), how many they screened since their last
include, and an estimate of the relevant records still among those not screened."""

from __future__ import annotations

import math
import uuid
from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict, Field

from scholarstream.screening.core._decisions import screened_order
from scholarstream.screening.core._models import DecisionEvent
from scholarstream.screening.core._words import counted

ESTIMATE_WINDOW = 50
"""The estimate reads the inclusion rate of this many of the reviewer's latest decisions."""
ESTIMATE_LEAST = 10
"""Fewer decisions than this say too little to estimate from."""
MAX_POINTS = 200
"""The chart's series is thinned to at most this many points (the last always kept)."""


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ProgressPoint(_Model):
    screened: int
    included: int


class RelevantLeft(_Model):
    """An estimate of the relevant records among those not screened, and how it is made."""

    value: int | None = Field(description="None until there is anything to estimate from.")
    window: int = Field(description="How many of your latest decisions the rate comes from.")
    included_in_window: int
    explanation: str


class Progress(_Model):
    total: int
    screened: int
    included: int
    excluded: int
    maybe: int
    unscreened: int
    since_last_include: int = Field(
        description="Records you screened after your last include (all of them if none)."
    )
    relevant_left: RelevantLeft
    series: list[ProgressPoint] = Field(
        description="Includes found against records screened, in the order you screened."
    )


def _thin(points: list[ProgressPoint]) -> list[ProgressPoint]:
    if len(points) <= MAX_POINTS:
        return points
    step = math.ceil(len(points) / MAX_POINTS)
    thinned = points[::step]
    if thinned[-1] is not points[-1]:
        thinned.append(points[-1])
    return thinned


def _relevant_left(order: Sequence[DecisionEvent], unscreened: int) -> RelevantLeft:
    window = min(ESTIMATE_WINDOW, len(order))
    recent = order[len(order) - window :]
    included = sum(1 for e in recent if e.decision == "include")
    if window < ESTIMATE_LEAST and unscreened > 0:
        return RelevantLeft(
            value=None,
            window=window,
            included_in_window=included,
            explanation=f"Not yet known: the estimate needs at least {ESTIMATE_LEAST} of "
            f"your decisions ({window} so far).",
        )
    value = round(included / window * unscreened)
    explanation = (
        f"About {value}: the share of includes among your last {window} decisions "
        f"({included} of {window}) applied to the {counted(unscreened)} not screened. "
        "The ranker shows the likeliest records first, so the records left are less likely "
        "to be relevant than those you just screened: read this as an upper estimate."
    )
    if unscreened == 0:
        explanation = "None: every record is screened."
    return RelevantLeft(
        value=value, window=window, included_in_window=included, explanation=explanation
    )


def progress(total: int, events: Sequence[DecisionEvent], reviewer: uuid.UUID) -> Progress:
    """``reviewer``'s own progress through the ``total`` records (others' decisions are
    not read: blind screening)."""
    order = screened_order(events, reviewer)
    series = [ProgressPoint(screened=0, included=0)]
    included = 0
    for count, event in enumerate(order, start=1):
        included += event.decision == "include"
        series.append(ProgressPoint(screened=count, included=included))
    last_include = max((i for i, e in enumerate(order) if e.decision == "include"), default=-1)
    unscreened = total - len(order)
    return Progress(
        total=total,
        screened=len(order),
        included=included,
        excluded=sum(1 for e in order if e.decision == "exclude"),
        maybe=sum(1 for e in order if e.decision == "maybe"),
        unscreened=unscreened,
        since_last_include=len(order) - 1 - last_include,
        relevant_left=_relevant_left(order, unscreened),
        series=_thin(series),
    )
