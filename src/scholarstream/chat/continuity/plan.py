"""Planning (seed 004): the message becomes subquestions, each routed to the library, a
tool (a source search) or reasoning; the blueprint gives each retrieval step its query
through ``reframe_for_retrieval`` with the thread's retrieval context."""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel

from scholarstream.chat.continuity.reframe import reframe_for_retrieval
from scholarstream.chat.continuity.state import Classification, RetrievalContext

Route = Literal["library", "tool", "reasoning"]
_LIBRARY = re.compile(r"\b(my library|my papers|library)\b", re.I)
_TRIALS = re.compile(r"\btrials?\b", re.I)
_CLOSING = re.compile(r"^\W*(thanks?|thank you|ok(ay)?|great|perfect|that'?s (it|all))\W*$", re.I)


class SubQuestion(BaseModel):
    text: str
    route: Route
    tool: str | None = None


class Plan(BaseModel):
    subquestions: list[SubQuestion]


class BlueprintStep(BaseModel):
    route: Route
    tool: str | None
    query: str


def build_plan(message: str) -> Plan:
    """Rule-based routing: the library when the user names it, trials when they ask for
    trials, the literature sources otherwise; a closing remark needs no retrieval."""
    if _CLOSING.match(message):
        return Plan(subquestions=[SubQuestion(text=message, route="reasoning")])
    if _LIBRARY.search(message):
        return Plan(
            subquestions=[SubQuestion(text=message, route="library", tool="search_library")]
        )
    if _TRIALS.search(message):
        return Plan(subquestions=[SubQuestion(text=message, route="tool", tool="search_trials")])
    return Plan(
        subquestions=[
            SubQuestion(text=message, route="library", tool="search_library"),
            SubQuestion(text=message, route="tool", tool="search_literature"),
        ]
    )


def build_blueprint(
    plan: Plan, retrieval: RetrievalContext, classification: Classification
) -> list[BlueprintStep]:
    return [
        BlueprintStep(
            route=sq.route,
            tool=sq.tool,
            query=reframe_for_retrieval(
                sq.text,
                classification.intent,
                retrieval.last_refined_query,
                retrieval.scope_summary,
                retrieval.is_followup,
            ),
        )
        for sq in plan.subquestions
        if sq.route != "reasoning"
    ]
