"""When a model's answer is not used: which AI step fell back to its offline counterpart,
why, and the plain words the user reads about it.

Every LLM skill (search, the stream guide, monitoring relevance, AI columns) records one
``ModelFallback`` per skill per run, however many of its calls fell back: the user is told
once, the run keeps the record (the benchmark counts "fell back" against "completed with
the model"), and the next call tries the model again.

=================  ========================================================================
reason             what happened
=================  ========================================================================
``unusable``       the model answered, but not in a form that could be used (invalid JSON,
                   an answer outside the schema, a tool call written as text)
``late``           the model did not answer within the time allowed
``failed``         the call failed (the provider refused it or could not be reached)
``not_configured`` no model is set up for this step (offline mode, a missing key)
=================  ========================================================================
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

FallbackReason = Literal["unusable", "late", "failed", "not_configured"]

# What each skill does, as the notice names it ("... for understanding the question").
SKILL_TASKS: dict[str, str] = {
    "search.intent": "understanding the question",
    "search.query": "writing the search strategy",
    "search.score": "scoring the papers' relevance",
    "search.organize": "naming the themes of the results",
    "search.dedup": "checking possible duplicates",
    "stream_guide": "the guide's answer",
    "streams.relevance": "judging the new items' relevance",
    "ai_columns": "this column",
}

# What the product did instead, where it is not "the offline step".
OFFLINE_STEPS: dict[str, str] = {
    "search.dedup": "the uncertain pairs were kept as separate records",
    "stream_guide": "the offline guide answered this turn",
    "ai_columns": "the cells it could not fill show 'not available' (press Retry)",
}
_OFFLINE_STEP = "the offline step was used"

_WHAT_HAPPENED: dict[FallbackReason, str] = {
    "unusable": "The model's answer could not be used for {task}",
    "late": "The model did not answer in time for {task}",
    "failed": "The model call failed for {task}",
    "not_configured": "No model is set up for {task}",
}


class ModelFallback(BaseModel):
    """One AI step that did without its model's answer in a run."""

    model_config = ConfigDict(extra="forbid")

    skill: str = Field(description="The step, e.g. 'search.intent', 'stream_guide'.")
    reason: FallbackReason = Field(
        description="unusable: the answer could not be used; late: no answer in time; "
        "failed: the call failed; not_configured: no model is set up for the step."
    )
    message: str = Field(description="What happened and what was done instead, in plain words.")
    hint: str | None = Field(default=None, description="What you can do about it, if anything.")


def fallback_message(skill: str, reason: FallbackReason) -> str:
    task = SKILL_TASKS.get(skill, "this step")
    offline = OFFLINE_STEPS.get(skill, _OFFLINE_STEP)
    return f"{_WHAT_HAPPENED[reason].format(task=task)}; {offline}."


def model_fallback(skill: str, reason: FallbackReason, hint: str | None = None) -> ModelFallback:
    return ModelFallback(
        skill=skill, reason=reason, message=fallback_message(skill, reason), hint=hint
    )


def merge_fallbacks(known: list[ModelFallback], more: list[ModelFallback]) -> list[ModelFallback]:
    """``known`` plus the skills of ``more`` it does not have yet: one record per skill."""
    skills = {f.skill for f in known}
    merged = list(known)
    for fallback in more:
        if fallback.skill not in skills:
            skills.add(fallback.skill)
            merged.append(fallback)
    return merged
