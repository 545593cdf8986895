"""The rule-based guide on openings it was not written for, from different fields: what
the first message already says is filled in (the aim, the topics, the organisations to
follow) and not asked again; the purpose, when it is asked, comes with distinct aims; the
keyword suggestions are search terms, never the user's role or affiliation; and no
message shows a field's name or a stored value. Each opening is walked to a created
stream, taking the first suggestion at every step."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import pytest

from scholarstream.streams import (
    GuideTurnResult,
    OptionSelected,
    OptionsSelected,
    RuleGuide,
    SkipStep,
    UserAction,
    WorkflowStep,
    new_session,
)
from tests.streams.script import Turn, run_turn

S = WorkflowStep
SNAKE_CASE = re.compile(r"\b[a-z]+_[a-z_]+\b")
STORED_VALUES = re.compile(r"\b(biweekly|competitive|scientific|regulatory)\b")
# Words of the user's role or affiliation: never a search term.
NOT_A_TERM = re.compile(r"\b(group|team|lab|lead|historian|especially|new|papers)\b", re.I)


@dataclass
class Walk:
    """A creation walked from an opening: every turn's result, the chips offered."""

    results: list[GuideTurnResult] = field(default_factory=list)
    offered: dict[str, list[str]] = field(default_factory=dict)

    @property
    def first(self) -> GuideTurnResult:
        return self.results[0]

    @property
    def last(self) -> GuideTurnResult:
        return self.results[-1]


async def walk(opening: str) -> Walk:
    guide = RuleGuide()
    walked = Walk()
    turn: Turn = await run_turn(new_session(), opening, None, guide)
    for _ in range(15):
        result = turn.result
        walked.results.append(result)
        if result.next_step in (S.REVIEW, S.COMPLETE):
            break
        if result.target_field:
            walked.offered[result.target_field] = [*result.suggestions, *result.options]
        action: UserAction
        if result.suggestions:
            action = OptionSelected(
                target_field=result.target_field or "", selected_value=result.suggestions[0]
            )
        elif result.options:
            action = OptionsSelected(
                target_field=result.target_field or "", selected_values=result.options[:2]
            )
        elif result.next_step is S.COMPETITORS:
            action = SkipStep()
        else:
            raise AssertionError(f"nothing offered at {result.next_step}: {result.message}")
        turn = await run_turn(result.session, "", action, guide)
    turn = await run_turn(walked.last.session, "create", None, guide)
    walked.results.append(turn.result)
    return walked


@dataclass(frozen=True)
class Opening:
    text: str
    focus_areas: list[str]
    organisations: list[str] | None
    """Pre-filled organisations (None: not pre-filled, asked for)."""
    states_aim: bool = True


OPENINGS = [
    Opening(
        "I lead a cardiology group at Charité and want to follow new heart failure trials, "
        "especially SGLT2 inhibitors",
        ["heart failure", "SGLT2 inhibitors"],
        None,  # Charité is where the user works: offered, not pre-filled
    ),
    Opening(
        "Keep me up to date on graph neural networks for molecule property prediction from "
        "DeepMind and Meta AI",
        ["graph neural networks", "molecule property prediction"],
        ["DeepMind", "Meta AI"],
    ),
    Opening(
        "I'm a historian studying medieval trade routes in the Baltic; alert me to new "
        "archaeology papers",
        ["medieval trade routes", "archaeology"],
        None,  # the Baltic is a place: a search term, not an organisation
    ),
    Opening(
        "climate change effects on coral reef fisheries",
        ["climate change", "coral reef fisheries"],
        None,
        states_aim=False,
    ),
    Opening(
        "We are a team at MIT working on quantum error correction. Follow surface code "
        "experiments by Google Quantum AI and IBM.",
        ["quantum error correction", "surface code"],
        ["Google Quantum AI", "IBM"],
    ),
    Opening(
        "Please watch for large language models for legal document review in the EU",
        ["large language models", "legal document review"],
        None,
    ),
]


@pytest.mark.parametrize("opening", OPENINGS, ids=lambda o: o.text[:30])
async def test_what_the_opening_says_is_filled_in_and_not_asked_again(opening: Opening) -> None:
    walked = await walk(opening.text)
    config = walked.first.updated_config
    assert config.focus_areas == opening.focus_areas
    assert config.competitors == opening.organisations
    if opening.states_aim:
        assert config.purpose == opening.text
        assert "purpose" not in walked.offered  # never asked
    else:
        assert config.purpose is None
        assert walked.first.next_step is S.PURPOSE
    assert "focus_areas" not in walked.offered
    assert walked.first.message.startswith("From what you wrote, I filled in")
    assert walked.last.next_step is S.COMPLETE
    stream = walked.last.stream
    assert stream is not None
    assert stream.focus_areas == opening.focus_areas


@pytest.mark.parametrize("opening", OPENINGS, ids=lambda o: o.text[:30])
async def test_no_message_shows_a_field_name_or_a_stored_value(opening: Opening) -> None:
    walked = await walk(opening.text)
    for result in walked.results:
        assert SNAKE_CASE.search(result.message) is None, result.message
        assert STORED_VALUES.search(result.message) is None, result.message
    for message in walked.last.session.history:
        said = message.as_text()
        assert SNAKE_CASE.search(said) is None, said
        assert "'" not in message.action, said  # no repr() of a value


@pytest.mark.parametrize("opening", OPENINGS, ids=lambda o: o.text[:30])
async def test_keyword_suggestions_are_search_terms(opening: Opening) -> None:
    walked = await walk(opening.text)
    keywords = walked.offered["keywords"]
    assert keywords
    for term in keywords:
        assert NOT_A_TERM.search(term) is None, term
        assert term not in (opening.organisations or [])
    for area in opening.focus_areas:
        assert area in keywords


async def test_the_affiliation_is_offered_as_an_organisation_and_a_place_as_a_term() -> None:
    cardiology = await walk(OPENINGS[0].text)
    assert cardiology.offered["competitors"] == ["Charité"]
    assert "cardiology group" not in cardiology.offered["keywords"]
    history = await walk(OPENINGS[2].text)
    assert "Baltic" in history.offered["keywords"]
    assert "Baltic" not in history.offered.get("competitors", [])


async def test_the_purpose_is_offered_as_distinct_aims_not_the_users_sentence() -> None:
    text = "CRISPR base editing in sickle cell disease"
    turn = await run_turn(new_session(), text, None, RuleGuide())
    chips = turn.result.suggestions
    assert turn.result.target_field == "purpose"
    assert len(chips) >= 3
    assert text not in chips
    assert len({chip.split(" ")[0] for chip in chips}) == len(chips)  # each a different aim
    assert all("CRISPR base editing and sickle cell disease" in chip for chip in chips)
    assert "Track clinical trials on CRISPR base editing and sickle cell disease" in chips


async def test_the_purpose_options_name_the_organisations_the_user_follows() -> None:
    text = "semaglutide and tirzepatide from Novo Nordisk and Eli Lilly"
    turn = await run_turn(new_session(), text, None, RuleGuide())
    assert turn.result.updated_config.competitors == ["Novo Nordisk", "Eli Lilly"]
    assert (
        "Follow what Novo Nordisk and Eli Lilly publish on semaglutide and tirzepatide"
        in turn.result.suggestions
    )


async def test_a_greeting_fills_in_nothing_and_offers_no_made_up_aims() -> None:
    turn = await run_turn(new_session(), "hello", None, RuleGuide())
    assert turn.result.updated_config.model_dump(exclude_none=True) == {}
    assert turn.result.next_step is S.PURPOSE
    assert turn.result.suggestions == []
    assert turn.result.message == "What is this stream for?"


async def test_the_guide_speaks_to_academics_and_industry_alike() -> None:
    walked = await walk(OPENINGS[3].text)
    said = " ".join(r.message for r in walked.results)
    offered = " ".join(chip for chips in walked.offered.values() for chip in chips)
    for pharma in ("Business goals", "Go/no-go", "therapeutic", "leadership team"):
        assert pharma not in said and pharma not in offered
    assert "Find evidence for a review, a grant or a guideline" in walked.offered["business_goals"]


VET = (
    "I work at the Royal Veterinary College neurology group. I want to follow new research "
    "on Chiari-like malformation and syringomyelia in Cavalier King Charles spaniels, with "
    "a weekly report."
)


async def test_the_affiliation_never_narrows_the_queries_and_names_stay_whole() -> None:
    walked = await walk(VET)
    first = walked.first.updated_config
    # A breed named after "in" is one topic, not a place and a lone "spaniels".
    assert first.focus_areas == [
        "Chiari-like malformation",
        "syringomyelia",
        "Cavalier King Charles spaniels",
    ]
    # "with a weekly report" answers the frequency: filled in, never asked.
    assert first.report_frequency == "weekly"
    assert "report_frequency" not in walked.offered
    assert "report frequency (weekly)" in walked.first.message
    # The walk takes the offered affiliation as an organisation: it stays out of the
    # topic queries of a stream that does not follow organisations.
    assert walked.offered["competitors"] == ["Royal Veterinary College"]
    stream = walked.last.stream
    assert stream is not None
    assert stream.competitors == ["Royal Veterinary College"]
    assert stream.stream_type != "competitive"
    for name, query in stream.retrieval.queries.items():
        said = f"{query.query} {query.filters}"
        assert "Veterinary" not in said, (name, said)
    library = stream.retrieval.queries["library"].query
    assert "syringomyelia" in library
    assert "Cavalier King Charles spaniels" in library


@pytest.mark.parametrize(
    ("text", "frequency"),
    [
        ("Follow CRISPR base editing, daily please", "daily"),
        ("Keep me posted on perovskite solar cells every two weeks", "biweekly"),
        ("Track sepsis biomarkers and send a monthly digest", "monthly"),
        ("Watch for tau PET imaging every 12 days", "biweekly"),
        ("Watch for tau PET imaging every 3 days", "daily"),
        ("Follow coral reef fisheries", None),
    ],
)
async def test_a_frequency_in_the_opening_is_filled_in(text: str, frequency: str | None) -> None:
    turn = await run_turn(new_session(), text, None, RuleGuide())
    assert turn.session.config.report_frequency == frequency


@pytest.mark.parametrize(
    ("text", "topics"),
    [
        (
            "I want to follow research on otitis and ear disease in dogs, especially spaniels; "
            "collect it for a systematic review",
            ["otitis", "ear disease", "dogs", "spaniels"],
        ),
        (
            "I want to follow research on otitis and ear disease in dogs, especially spaniels, "
            "collect it for a systematic review",
            ["otitis", "ear disease", "dogs", "spaniels"],
        ),
        (
            "Track new papers on perovskite solar cells and gather them for a meta-analysis",
            ["perovskite solar cells"],
        ),
        (
            "Keep me up to date on coral bleaching in the Great Barrier Reef so I can write a "
            "literature review",
            ["coral bleaching"],
        ),
        (
            "I need to follow graph neural networks for drug discovery to prepare a grant proposal",
            ["graph neural networks", "drug discovery"],
        ),
        (
            "Please track court rulings on data protection and summarise them for my thesis",
            ["court rulings", "data protection"],
        ),
        ("Keep me posted on perovskite solar cells every two weeks", ["perovskite solar cells"]),
        ("Track sepsis biomarkers and send a monthly digest", ["sepsis", "biomarkers"]),
        (
            "Follow quantum error correction for a review I am writing",
            ["quantum error correction"],
        ),
        (
            "Alert me to new work on medieval coin hoards because I teach a course on them",
            ["medieval coin hoards"],
        ),
    ],
    ids=lambda value: value[:30] if isinstance(value, str) else None,
)
async def test_what_the_user_will_do_with_the_results_is_not_a_topic(
    text: str, topics: list[str]
) -> None:
    """The focus areas are what to follow: the user's own activity (collecting, writing a
    review or a thesis, being sent a digest, how often) stays in the purpose only."""
    turn = await run_turn(new_session(), text, None, RuleGuide())
    config = turn.result.updated_config
    assert config.focus_areas == topics
    assert config.purpose == text


@pytest.mark.parametrize(
    ("text", "topic"),
    [
        ("Keep me up to date on automation of systematic reviews", "systematic reviews"),
        ("Follow new guidelines for the treatment of canine otitis", "canine otitis"),
        ("I want to track how to write better grant proposals", "grant proposals"),
    ],
)
async def test_a_subject_that_names_such_an_activity_keeps_it(text: str, topic: str) -> None:
    turn = await run_turn(new_session(), text, None, RuleGuide())
    focus_areas = turn.result.updated_config.focus_areas or []
    assert any(topic in area for area in focus_areas), focus_areas
