"""Follow-up continuity (seed 004): classification, reframing, routing, objectives."""

from __future__ import annotations

import pytest

from scholarstream.chat.continuity import ThreadState, classify_message, reframe_for_retrieval
from scholarstream.chat.continuity.engine import begin_turn, finish_turn
from scholarstream.chat.continuity.plan import build_plan
from scholarstream.chat.continuity.state import QuerySent, TurnRecord

TOPIC = "income criteria Florida Medicaid"


def _after_a_substantive_turn() -> ThreadState:
    return ThreadState(
        refined_query=TOPIC, last_turns=[TurnRecord(user="q", assistant="An answer.")]
    )


@pytest.mark.parametrize(
    ("message", "intent"),
    [
        ("what about in Texas?", "slot_fill"),
        ("only since 2020", "slot_fill"),
        ("just phase 3", "slot_fill"),
        ("can you search the web for it", "followup_continuation"),
        ("can you read their website", "followup_continuation"),
        ("What about lecanemab for Alzheimer's disease?", "new_question"),
        ("Which GLP-1 agonists reduce cardiovascular events?", "new_question"),
    ],
)
def test_classification(message: str, intent: str) -> None:
    assert classify_message(message, _after_a_substantive_turn()).intent == intent


def test_a_first_message_is_a_new_question_whatever_it_says() -> None:
    assert classify_message("search the web for it", ThreadState()).intent == "new_question"


def test_a_back_reference_after_an_empty_turn_is_not_a_continuation() -> None:
    state = ThreadState(refined_query=TOPIC, last_turns=[TurnRecord(user="q")])
    assert classify_message("what are its side effects?", state).intent == "new_question"


def test_reframing_merges_the_prior_topic_on_follow_ups_only() -> None:
    assert (
        reframe_for_retrieval(
            "can you search the web for it", "followup_continuation", TOPIC, "Florida", True
        )
        == TOPIC
    )
    assert (
        reframe_for_retrieval("what about in Texas?", "slot_fill", TOPIC, "Texas", True)
        == "income criteria Medicaid Texas"
    )
    switch = reframe_for_retrieval(
        "Biosimilar interchangeability rules at the FDA?", "new_question", TOPIC, "", False
    )
    assert switch == "Biosimilar interchangeability rules FDA"


def test_a_new_date_range_replaces_the_old_one() -> None:
    query = reframe_for_retrieval(
        "only since 2020", "slot_fill", "pembrolizumab melanoma since 2015", "since 2020", True
    )
    assert query == "pembrolizumab melanoma since 2020"


def test_routing() -> None:
    assert [s.tool for s in build_plan("look it up in my library").subquestions] == [
        "search_library"
    ]
    assert [s.tool for s in build_plan("find trials for that").subquestions] == ["search_trials"]
    assert [s.tool for s in build_plan("semaglutide and kidney disease").subquestions] == [
        "search_library",
        "search_literature",
    ]
    assert [s.route for s in build_plan("Thanks!").subquestions] == ["reasoning"]


def test_objectives_open_progress_block_with_an_ask_and_are_achieved() -> None:
    state = ThreadState()
    first = begin_turn(state, "What are the income criteria for Florida Medicaid?")
    assert [(o.text, o.status) for o in state.objectives] == [
        ("What are the income criteria for Florida Medicaid?", "open")
    ]
    first.queries = [QuerySent(tool="search_literature", query=first.refined_query, results=4)]
    assert finish_turn(state, first, "What are ...?", "Four papers.") == []
    assert state.objectives[0].status == "in_progress"
    assert "4 from search_literature" in state.objectives[0].evidence[0]

    second = begin_turn(state, "can you read their website")
    assert len(state.objectives) == 1  # a follow-up works on the same objective
    second.queries = [QuerySent(tool="search_literature", query=second.refined_query, results=0)]
    chips = finish_turn(state, second, "can you read their website", "Nothing.")
    assert [o.status for o in state.objectives] == ["blocked"]
    assert "link, a document, a name" in state.objectives[0].asks[0]
    assert [c.label for c in chips] == ["Try broader terms", "I have a link", "Try another name"]

    begin_turn(state, "Thanks, that's it")
    assert [o.status for o in state.objectives] == ["achieved"]
    assert state.open_objectives() == []
