"""Follow-up continuity (seed 004): each turn is classified against the thread's state,
its retrieval queries carry the prior topic and scope on follow-ups, and the thread keeps
a master list of the user's objectives across turns."""

from scholarstream.chat.continuity._classify import classify_message
from scholarstream.chat.continuity._engine import (
    RewrittenQuery,
    TurnContinuity,
    begin_turn,
    context_pack,
    finish_turn,
    recites_context_pack,
    report,
)
from scholarstream.chat.continuity._objectives import (
    ObjectiveChange,
    ObjectiveIn,
    add_objective,
    change_objective,
    remove_objective,
)
from scholarstream.chat.continuity._plan import build_plan
from scholarstream.chat.continuity._reframe import reframe_for_retrieval
from scholarstream.chat.continuity._state import (
    Classification,
    ContinuityReport,
    Intent,
    Objective,
    QuerySent,
    RetrievalContext,
    Scope,
    SuggestedValue,
    ThreadState,
    TurnRecord,
    published,
)

__all__ = [
    "Classification",
    "ContinuityReport",
    "Intent",
    "Objective",
    "ObjectiveChange",
    "ObjectiveIn",
    "QuerySent",
    "RetrievalContext",
    "RewrittenQuery",
    "Scope",
    "SuggestedValue",
    "ThreadState",
    "TurnContinuity",
    "TurnRecord",
    "add_objective",
    "begin_turn",
    "build_plan",
    "change_objective",
    "classify_message",
    "context_pack",
    "finish_turn",
    "published",
    "recites_context_pack",
    "reframe_for_retrieval",
    "remove_objective",
    "report",
]
