"""Follow-up continuity (seed 004): classification, reframing, routing, objectives."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from scholarstream.chat.continuity import (
    ObjectiveChange,
    QuerySent,
    ThreadState,
    TurnRecord,
    add_objective,
    begin_turn,
    build_plan,
    change_objective,
    classify_message,
    finish_turn,
    reframe_for_retrieval,
    remove_objective,
)
from scholarstream.errors import NotFoundError
from scholarstream.understanding import MAX_QUERY_WORDS

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


def test_a_back_reference_is_a_continuation() -> None:
    state = ThreadState(refined_query=TOPIC, last_turns=[TurnRecord(user="q")])
    assert classify_message("what are its side effects?", state).intent == ("followup_continuation")


def test_reframing_renders_the_updated_topic_on_follow_ups_only() -> None:
    assert (
        reframe_for_retrieval(
            "can you search the web for it", "followup_continuation", TOPIC, "Florida", True
        )
        == "income criteria Florida Medicaid"
    )
    assert (
        reframe_for_retrieval("what about in Texas?", "slot_fill", TOPIC, "Texas", True)
        == "income criteria Texas Medicaid"
    )
    switch = reframe_for_retrieval(
        "Biosimilar interchangeability rules at the FDA?", "new_question", TOPIC, "", False
    )
    assert switch == "Biosimilar interchangeability rules FDA"


def test_a_date_is_a_filter_and_a_new_range_replaces_the_old_one() -> None:
    state = ThreadState()
    _turn(state, "pembrolizumab in melanoma since 2015", 4)
    assert (state.reading.year_from if state.reading else None) == 2015
    turn = begin_turn(state, "only since 2020")
    assert turn.classification.intent == "slot_fill"
    assert turn.refined_query == "pembrolizumab melanoma"
    assert {(s.year_from, s.year_to) for s in turn.steps} == {(2020, None)}
    before = begin_turn(state, "what about before 2010?")
    assert {(s.year_from, s.year_to) for s in before.steps} == {(None, 2009)}


def test_routing() -> None:
    assert [s.tool for s in build_plan("look it up in my library").subquestions] == [
        "search_library"
    ]
    # Trials: the registry, and the library, which answers when the registry cannot.
    assert [s.tool for s in build_plan("find trials for that").subquestions] == [
        "search_trials",
        "search_library",
    ]
    # A regulator's question about trials is one for the literature too.
    regulatory = build_plan("What has the FDA required for confirmatory trials?")
    assert [s.tool for s in regulatory.subquestions] == [
        "search_trials",
        "search_library",
        "search_literature",
    ]
    assert [s.tool for s in build_plan("semaglutide and kidney disease").subquestions] == [
        "search_library",
        "search_literature",
    ]
    assert [s.route for s in build_plan("Thanks!").subquestions] == ["reasoning"]
    # A pasted abstract is routed by what its opening asks for, not by a word inside it.
    pasted = "Find papers similar to this abstract: Background: " + "In this trial. " * 30
    assert [s.tool for s in build_plan(pasted).subquestions] == [
        "search_library",
        "search_literature",
    ]


def _turn(state: ThreadState, message: str, *results: int | None) -> list[str]:
    """One turn whose queries found ``results`` (None: the source failed); its chips."""
    turn = begin_turn(state, message)
    queries = [
        QuerySent(tool="search_literature", query=turn.refined_query, results=n, ok=n is not None)
        for n in results
    ]
    return [chip.label for chip in finish_turn(state, turn, queries, "An answer.")]


def test_objectives_open_progress_block_with_an_ask_and_are_achieved() -> None:
    state = ThreadState()
    begin_turn(state, "What are the income criteria for Florida Medicaid?")
    assert state.objectives == []  # reading a message changes nothing

    assert _turn(state, "What are the income criteria for Florida Medicaid?", 4) == []
    assert [(o.text, o.status) for o in state.objectives] == [
        ("What are the income criteria for Florida Medicaid?", "in_progress")
    ]
    assert "4 from search_literature" in state.objectives[0].evidence[0]

    chips = _turn(state, "what about in Texas?", 0)
    assert len(state.objectives) == 1  # a follow-up works on the same objective
    assert [o.status for o in state.objectives] == ["blocked"]
    assert "link, a document, a name" in state.objectives[0].asks[0]
    assert chips == ["Try broader terms", "I have a link", "Try another name"]

    _turn(state, "what about in Florida again?", 3)
    assert [o.status for o in state.objectives] == ["in_progress"]
    _turn(state, "Thanks, that's it")
    assert [o.status for o in state.objectives] == ["achieved"]
    assert state.open_objectives() == []


def test_an_empty_dated_search_offers_any_year_and_objectives_read_cleanly() -> None:
    state = ThreadState()
    _turn(state, "new question: melatonin for delirium in ICU patients", 12)
    assert state.objectives[0].text == "melatonin for delirium in ICU patients"
    dated = begin_turn(state, "only since 2025")
    queries = [
        QuerySent(tool="search_literature", query=s.query, results=0, year_from=2025)
        for s in dated.steps
    ]
    chips = finish_turn(state, dated, queries, "Nothing.")
    assert (chips[0].label, chips[0].value) == ("Any year", "Any year is fine")
    long = begin_turn(state, "Different topic: " + "word " * 80)
    finish_turn(state, long, [], "ok")
    assert state.objectives[-1].text.endswith("word…") and len(state.objectives[-1].text) <= 200


def test_saying_the_search_is_stuck_asks_once_and_adds_no_words() -> None:
    state = ThreadState()
    _turn(state, "hi, can you find me papers on taurine and dilated cardiomyopathy in dogs?", 0)
    assert state.objectives[0].text == "taurine and dilated cardiomyopathy in dogs?"
    stuck = begin_turn(state, "I'm stuck, still nothing useful")
    assert stuck.refined_query == "taurine dilated cardiomyopathy dogs"
    _turn(state, "I'm stuck, still nothing useful", 0)
    _turn(state, "this isn't helping", 0)
    (objective,) = state.objectives
    assert objective.status == "blocked"
    assert len(objective.asks) == 1  # asked again, not piled up


def test_thanks_with_one_more_thing_closes_one_objective_and_opens_the_next() -> None:
    state = ThreadState()
    _turn(state, "coral bleaching on the great barrier reef", 3)
    _turn(state, "thanks, one more thing: tau PET imaging in CTE", 2)
    assert [(o.text, o.status) for o in state.objectives] == [
        ("coral bleaching on the great barrier reef", "achieved"),
        ("tau PET imaging in CTE", "in_progress"),
    ]
    assert begin_turn(state, "\U0001f64f").classification.intent == "closing"


def test_a_greeting_opens_no_objective() -> None:
    state = ThreadState()
    _turn(state, "hi \U0001f642")
    assert state.objectives == []


def test_lifting_the_date_limit_is_read_as_such() -> None:
    state = ThreadState()
    _turn(state, "melatonin for delirium in ICU patients since 2020", 12)
    lifted = begin_turn(state, "any year is fine")
    assert (lifted.classification.intent, lifted.classification.reason) == (
        "slot_fill",
        "lifts the date limit",
    )
    assert [(s.year_from, s.year_to) for s in lifted.steps] == [(None, None)] * len(lifted.steps)


def test_a_closing_after_a_narrower_turn_found_nothing_still_achieves_the_objective() -> None:
    state = ThreadState()
    _turn(state, "melatonin for delirium in ICU patients", 12)
    _turn(state, "only since 2025", 0)  # the narrower search found nothing
    closing = begin_turn(state, "thx thats all")
    assert closing.closing_reply.startswith("You're welcome.")
    finish_turn(state, closing, [], closing.closing_reply)
    assert [o.status for o in state.objectives] == ["achieved"]


def test_a_closing_after_nothing_was_found_closes_the_objective_unresolved() -> None:
    state = ThreadState()
    _turn(state, "Sunshine Health Medicaid dental coverage", 0)
    closing = begin_turn(state, "ok thanks, that's all")
    assert "without an answer" in closing.closing_reply
    assert "Sunshine Health Medicaid dental coverage" in closing.closing_reply
    finish_turn(state, closing, [], closing.closing_reply)
    assert [o.status for o in state.objectives] == ["closed"]
    assert state.open_objectives() == []


def test_a_failed_source_blocks_the_objective_and_asks_for_help() -> None:
    state = ThreadState()
    # No source could search the words: they are not what to change.
    assert _turn(state, "Sunshine Health Medicaid dental coverage", None) == [
        "Try again",
        "I have a link",
    ]
    assert "the sources could not be searched" in state.objectives[0].asks[0]
    assert state.objectives[0].status == "blocked"
    closing = begin_turn(state, "thanks").closing_reply
    assert closing.startswith("Closing “Sunshine Health Medicaid dental coverage” without an")
    assert "the sources could not be searched" in closing


def test_a_page_asked_for_without_its_address_asks_for_the_link() -> None:
    state = ThreadState()
    _turn(state, "Florida Medicaid income criteria", 3)
    chips = _turn(state, "can you read their website", 2)
    assert chips == ["I have the link", "Search instead"]
    objective = state.objectives[0]
    assert objective.status == "in_progress"
    assert "do you have the link?" in objective.asks[0]


def test_a_link_is_read_as_given_and_keeps_the_topic() -> None:
    state = ThreadState()
    _turn(state, "Florida Medicaid income criteria", 3)
    turn = begin_turn(state, "here is the link: https://www.sunshinehealth.com/medicaid.html.")
    assert turn.classification.intent == "followup_continuation"
    assert [(s.tool, s.query) for s in turn.steps] == [
        ("read_web_page", "https://www.sunshinehealth.com/medicaid.html")
    ]
    assert turn.refined_query == "Florida Medicaid income criteria"


def test_a_model_query_is_corrected_only_when_it_lost_the_topic_or_kept_a_replaced_value() -> None:
    state = ThreadState()
    _turn(state, "taurine and dilated cardiomyopathy in dogs", 5)
    turn = begin_turn(state, "can you search the web for it")
    # The model passed the message through: the topic is put back, and the user is told.
    lost = turn.rewrite("web")
    assert lost.query == "taurine dilated cardiomyopathy dogs"
    assert lost.corrections
    # The model carried the topic in its own terms: trusted as written.
    kept = turn.rewrite("taurine deficiency and dilated cardiomyopathy in dogs")
    assert (kept.query, kept.corrections) == (
        "taurine deficiency and dilated cardiomyopathy in dogs",
        [],
    )
    assert turn.rewrite("https://acme.com/pipeline").query == "https://acme.com/pipeline"
    _turn(state, "can you search the web for it", 3)
    cats = begin_turn(state, "what about in cats?")
    stale = cats.rewrite("taurine dilated cardiomyopathy dogs cats")
    assert "dogs" not in stale.query and "cats" in stale.query
    assert any("replaced" in c for c in stale.corrections)
    # Dates are the user's to set: the model's date words leave the query, and the
    # years are the conversation's.
    invented = cats.rewrite("taurine cardiomyopathy cats since 2015")
    assert (invented.query, invented.year_from) == ("taurine cardiomyopathy cats", None)
    assert any("dates" in c for c in invented.corrections)
    _turn(state, "what about in cats?", 2)
    since = begin_turn(state, "only since 2019")
    assert since.rewrite("taurine cardiomyopathy cats since 2015").year_from == 2019
    # A bare year the filter already holds is no query word; one outside it stays.
    bare = since.rewrite("taurine cardiomyopathy cats 2021")
    assert (bare.query, bare.year_from) == ("taurine cardiomyopathy cats", 2019)
    assert since.rewrite("taurine cardiomyopathy cats 1999").query.endswith("1999")
    new = begin_turn(state, "What does amyloid PET imaging show after lecanemab treatment?")
    assert new.classification.intent == "new_question"
    # A new question keeps what the user asked in it, whatever the model left out.
    shortened = new.rewrite("lecanemab")
    assert "lecanemab" in shortened.query and "amyloid PET imaging" in shortened.query
    assert new.rewrite("lecanemab amyloid PET").corrections == []


def test_user_edits_of_objectives() -> None:
    state = ThreadState()
    first = add_objective(state, "  Find  Florida Medicaid income limits ")
    second = add_objective(state, "Find the Texas limits")
    remove_objective(state, first.id)
    third = add_objective(state, "Compare them")
    assert [o.id for o in state.objectives] == [second.id, third.id]
    assert third.id == 3  # never reuses an id
    # Not even the latest one's: ids are never reused within a conversation, also across
    # a save and a reload of the thread (the stored state keeps the next id).
    remove_objective(state, third.id)
    fourth = add_objective(state, "Compare them again")
    assert fourth.id == 4
    stored = ThreadState.model_validate(state.model_dump(mode="json"))
    remove_objective(stored, fourth.id)
    remove_objective(stored, second.id)
    assert stored.objectives == []
    reloaded = ThreadState.model_validate(stored.model_dump(mode="json"))
    assert add_objective(reloaded, "Start again").id == 5
    # A thread stored before the next id was kept continues after its highest id.
    older = ThreadState.model_validate({"objectives": [{"id": 7, "text": "Find the limits"}]})
    assert add_objective(older, "And the assets test").id == 8
    edited = change_objective(state, second.id, ObjectiveChange(status="achieved"))
    assert edited.status == "achieved"
    assert edited.evidence == ["Marked achieved by the user"]
    with pytest.raises(NotFoundError):
        change_objective(state, 99, ObjectiveChange(text="x"))
    with pytest.raises(ValidationError):
        ObjectiveChange()


def test_a_closing_achieves_the_objective_and_searches_nothing() -> None:
    state = ThreadState()
    _turn(state, "melatonin for delirium in ICU patients", 3)
    closing = begin_turn(state, "great, done.")
    assert (closing.classification.intent, closing.steps) == ("closing", [])
    assert closing.closing_reply.startswith("You're welcome.")
    finish_turn(state, closing, [], "You're welcome.")
    assert [o.status for o in state.objectives] == ["achieved"]
    assert state.refined_query == "melatonin delirium ICU patients"  # the topic stays


def test_a_model_query_that_kept_part_of_a_value_gets_the_rest_back() -> None:
    state = ThreadState()
    _turn(state, "Philips CPAP recall health outcomes", 1)
    turn = begin_turn(state, "did the FDA do anything about it")
    fixed = turn.rewrite("FDA actions on the recall")
    assert "CPAP" in fixed.query and "FDA" in fixed.query
    assert fixed.query.count("recall") == 1


def test_a_value_the_message_replaced_is_not_put_back() -> None:
    state = ThreadState()
    _turn(state, "Novo Nordisk obesity pipeline phase 2", 1)
    turn = begin_turn(state, "and Eli Lilly's?")
    fixed = turn.rewrite("Eli Lilly obesity pipeline phase 2 Novo Nordisk")
    assert "Novo" not in fixed.query and "Lilly" in fixed.query


def test_cue_words_a_model_copies_into_its_query_are_taken_out() -> None:
    state = ThreadState()
    _turn(state, "polygenic risk scores for schizophrenia in African ancestry", 4)
    turn = begin_turn(state, "what about depression")
    cued = turn.rewrite("what about depression polygenic risk scores African ancestry")
    assert cued.query == "depression polygenic risk scores African ancestry"
    assert any("cue words" in c for c in cued.corrections)
    _turn(state, "what about depression", 3)
    dated = begin_turn(state, "published after 2019")
    rewritten = dated.rewrite("depression polygenic risk scores African ancestry published 2020")
    assert "published" not in rewritten.query and rewritten.year_from == 2020


def test_a_model_query_longer_than_the_bound_is_shortened_from_its_least_specific_parts() -> None:
    state = ThreadState()
    turn = begin_turn(state, "SGLT2 inhibitors in heart failure with preserved ejection fraction")
    long = (
        "SGLT2 inhibitors dapagliflozin empagliflozin heart failure with preserved ejection "
        "fraction older adults hospitalization mortality quality of life adverse events "
        "randomized controlled trials meta-analyses"
    )
    rewritten = turn.rewrite(long)
    assert len(rewritten.query.split()) <= MAX_QUERY_WORDS
    assert "SGLT2" in rewritten.query and "heart failure" in rewritten.query
    assert any("shortened" in c for c in rewritten.corrections)


def test_what_the_user_asked_to_leave_out_is_taken_out_of_a_model_s_query() -> None:
    state = ThreadState()
    _turn(state, "social media use and depression in adolescent boys", 4)
    turn = begin_turn(state, "what about anxiety instead of depression")
    rewritten = turn.rewrite("social media use anxiety depression adolescent boys")
    assert "depression" not in rewritten.query and "anxiety" in rewritten.query
    assert any("leave out" in c for c in rewritten.corrections)


def test_a_replaced_person_run_together_with_the_new_one_is_taken_out() -> None:
    state = ThreadState()
    _turn(state, "PM2.5 exposure and asthma in children in Lagos", 4)
    turn = begin_turn(state, "adults")
    rewritten = turn.rewrite("PM2.5 asthma children adults Lagos")
    assert "children" not in rewritten.query
    assert "adults" in rewritten.query and "Lagos" in rewritten.query
    assert any("replaced" in c for c in rewritten.corrections)


def test_a_follow_up_to_a_search_of_the_registry_searches_it_again() -> None:
    state = ThreadState()
    first = begin_turn(state, "Are there ongoing trials of psilocybin for depression?")
    assert "search_trials" in [s.tool for s in first.steps]
    sent = [QuerySent(tool=s.tool, query=s.query, results=3) for s in first.steps]
    finish_turn(state, first, sent, "An answer.")
    follow = begin_turn(state, "what about PTSD?")
    assert "search_trials" in [s.tool for s in follow.steps]
    assert "PTSD" in follow.refined_query and "psilocybin" in follow.refined_query
