"""Follow-up continuity (seed 004): each turn is classified against the thread's state,
its retrieval queries carry the prior topic and scope on follow-ups, and the thread keeps
a master list of the user's objectives across turns."""

from scholarstream.chat.continuity.classify import classify_message
from scholarstream.chat.continuity.reframe import reframe_for_retrieval
from scholarstream.chat.continuity.state import (
    Classification,
    Intent,
    Objective,
    QuerySent,
    RetrievalContext,
    Scope,
    ThreadState,
)

__all__ = [
    "Classification",
    "Intent",
    "Objective",
    "QuerySent",
    "RetrievalContext",
    "Scope",
    "ThreadState",
    "classify_message",
    "reframe_for_retrieval",
]
