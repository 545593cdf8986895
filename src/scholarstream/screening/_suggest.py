"""Asking a model for a screening suggestion (the ``fast`` role, feature
``screening.suggest``), and the ranker standing in when there is no model or its answer
cannot be used. The model's answer is validated by its schema (pydantic-ai asks again
once, then gives up), bounded by the answer budget and the call's deadline, and checked
by ``core.check_answer`` (label, criterion, quote)."""

from __future__ import annotations

from dataclasses import dataclass

from pydantic_ai import Agent

from scholarstream.errors import ScholarStreamError
from scholarstream.papers import Record
from scholarstream.screening.core import (
    INSTRUCTIONS,
    ModelAnswer,
    ProjectSettings,
    Suggestion,
    UnusableAnswerError,
    check_answer,
    suggestion_prompt,
)
from scholarstream.search import FALLBACK_ERRORS, SkillLLM, fallback_reason

FEATURE = "screening.suggest"
ROLE = "fast"

_AGENT: Agent[None, ModelAnswer] = Agent(output_type=ModelAnswer, instructions=INSTRUCTIONS)

_WHY: dict[str, str] = {
    "unusable": "the model's answer could not be used (not the JSON asked for, or cut off)",
    "late": "the model did not answer in time",
    "failed": "the model call failed",
    "not_configured": "no model is set up for suggestions",
}

NO_MODEL = "No model is configured (offline mode): the ranker's score stands in."


def fallback_note(exc: BaseException) -> str:
    """Why the ranker stands in for the model, in words."""
    if isinstance(exc, UnusableAnswerError):
        why = exc.reason
    else:
        why = _WHY[fallback_reason(exc)]
        if isinstance(exc, ScholarStreamError) and fallback_reason(exc) == "failed":
            why = f"{why}: {exc.message.rstrip('.')}"
    return f"No model suggestion: {why}; the ranker's score stands in."


@dataclass(frozen=True)
class Suggester:
    """A user's model, asked for suggestions."""

    llm: SkillLLM
    model: str
    role: str = ROLE

    async def suggest(self, settings: ProjectSettings, record: Record) -> Suggestion:
        """The checked suggestion; raises one of ``FALLBACK_ERRORS`` when there is none."""
        answer = await self.llm.structured(
            _AGENT, suggestion_prompt(settings, record), feature=FEATURE, role=self.role
        )
        return check_answer(answer, record, settings, self.model)


async def model_suggestion(
    suggester: Suggester, settings: ProjectSettings, record: Record
) -> Suggestion | str:
    """The model's suggestion, or (it failed) the note saying why it is missing."""
    try:
        return await suggester.suggest(settings, record)
    except FALLBACK_ERRORS as exc:
        return fallback_note(exc)
