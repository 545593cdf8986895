"""The guide without a model: the same steps by rule, to a created stream."""

from __future__ import annotations

import re

import pytest

from scholarstream.llm import CredentialStore, ModelRegistry
from scholarstream.secret_box import SecretBox
from scholarstream.settings import Settings
from scholarstream.streams import (
    CreationSession,
    GuideMode,
    ModelGuide,
    OptionSelected,
    OptionsSelected,
    RuleGuide,
    SkipStep,
    WorkflowStep,
    guide_for,
    new_session,
)
from tests.streams.script import FULL_CONFIG, GuideScript, at_step, run_turn

S = WorkflowStep
PURPOSE = (
    "I want to monitor Palatin Technologies' melanocortin programs in obesity and sexual "
    "dysfunction"
)


async def test_a_full_creation_without_a_model() -> None:
    guide = RuleGuide()
    session = new_session()

    # The opening states an aim, names an organisation and the topics: all three are
    # filled in at once (and said so), not asked for again.
    turn = await run_turn(session, PURPOSE, None, guide)
    config = turn.session.config
    assert config.purpose == PURPOSE
    assert config.focus_areas == ["melanocortin", "obesity", "sexual dysfunction"]
    assert config.competitors == ["Palatin Technologies"]
    assert turn.result.message.startswith(
        "From what you wrote, I filled in the purpose, the focus areas (melanocortin, "
        "obesity, sexual dysfunction) and the organisations (Palatin Technologies)."
    )
    assert "".join(turn.deltas) == turn.result.message
    assert turn.result.next_step is S.BUSINESS_GOALS
    assert turn.result.proposed_message == "Continue with these goals"
    assert "Find evidence for a review, a grant or a guideline" in turn.result.options
    assert "Track competing products and pipelines" in turn.result.options

    turn = await run_turn(
        turn.session,
        "",
        OptionsSelected(
            target_field="business_goals",
            selected_values=["Track competing products and pipelines", "Find collaborators"],
        ),
        guide,
    )
    assert turn.result.next_step is S.EXPECTED_OUTCOMES
    assert turn.session.history[-2].action == (
        "Selected \u201cTrack competing products and pipelines\u201d, "
        "\u201cFind collaborators\u201d for goals."
    )

    turn = await run_turn(turn.session, "Decide whether to start a competing program", None, guide)
    assert turn.session.config.expected_outcomes == "Decide whether to start a competing program"
    assert turn.result.next_step is S.STREAM_NAME
    assert turn.result.suggestions[0] == "Palatin Technologies Melanocortin"

    turn = await run_turn(turn.session, "Palatin Watch", None, guide)
    assert turn.result.next_step is S.STREAM_TYPE
    assert sorted(turn.result.suggestions) == sorted(
        ["competitive", "regulatory", "clinical", "market", "scientific", "mixed"]
    )
    assert turn.result.suggestions[0] == "competitive"  # the text speaks of competition

    turn = await run_turn(turn.session, "banana", None, guide)
    assert turn.result.next_step is S.STREAM_TYPE
    assert "not a stream type" in turn.result.message
    assert turn.session.config.stream_type is None

    turn = await run_turn(turn.session, "Competitive, please", None, guide)
    assert turn.session.config.stream_type == "competitive"
    assert turn.result.message.startswith("Got it. Stream type: Organisations and competitors.")
    # The focus areas were filled in from the opening: on to the keywords.
    assert turn.result.next_step is S.KEYWORDS
    assert turn.result.options[:3] == ["melanocortin", "obesity", "sexual dysfunction"]
    assert "Palatin Technologies" not in turn.result.options

    turn = await run_turn(turn.session, "bremelanotide, setmelanotide; melanocortin", None, guide)
    assert turn.session.config.keywords == ["bremelanotide", "setmelanotide", "melanocortin"]
    # The organisations were filled in from the opening too.
    assert turn.result.next_step is S.REPORT_FREQUENCY
    assert turn.result.suggestions == ["daily", "weekly", "biweekly", "monthly"]

    turn = await run_turn(turn.session, "every two weeks", None, guide)
    assert turn.session.config.report_frequency == "biweekly"
    assert turn.result.next_step is S.REVIEW
    review = turn.result.message
    assert "- Stream name: Palatin Watch" in review
    assert "- Report frequency: Every two weeks" in review
    assert "- Organisations: Palatin Technologies" in review
    assert re.search(r"\b[a-z]+_[a-z_]+\b", review) is None  # no field names
    assert "biweekly" not in review and "<field>" not in review  # nor stored values

    turn = await run_turn(turn.session, "what is this?", None, guide)
    assert turn.result.next_step is S.REVIEW

    turn = await run_turn(turn.session, "Yes, create it", None, guide)
    assert turn.result.next_step is S.COMPLETE
    stream = turn.result.stream
    assert stream is not None
    assert stream.stream_name == "Palatin Watch"
    assert stream.competitors == ["Palatin Technologies"]
    assert stream.business_goals == ["Track competing products and pipelines", "Find collaborators"]
    assert turn.result.warnings == []
    assert turn.session.completed_steps == [
        s for s in S if s not in (S.EXPLORATION, S.REVIEW, S.COMPLETE)
    ]


async def test_required_fields_cannot_be_skipped_in_rule_mode_either() -> None:
    turn = await run_turn(CreationSession(current_step=S.KEYWORDS), "", SkipStep(), RuleGuide())
    assert turn.error.message.startswith("This field is required")


async def test_a_field_can_be_changed_by_name_from_any_step() -> None:
    """Scenario C without a model."""
    session = CreationSession.model_validate(
        {"current_step": "keywords", "config": {"purpose": "Track Palatin"}}
    )
    turn = await run_turn(
        session, "Actually, change the purpose to 'Monitor regulatory changes'", None, RuleGuide()
    )
    assert turn.session.config.purpose == "Monitor regulatory changes"
    assert turn.session.config.keywords is None
    assert turn.result.next_step is None or turn.result.next_step is S.KEYWORDS
    assert turn.session.current_step is S.KEYWORDS  # back to the step it was at
    turn = await run_turn(turn.session, "stream type: regulatory", None, RuleGuide())
    assert turn.session.config.stream_type == "regulatory"


async def test_in_review_a_change_stays_in_review() -> None:
    session = CreationSession.model_validate({"current_step": "review", "config": FULL_CONFIG})
    turn = await run_turn(session, "report frequency: monthly", None, RuleGuide())
    assert turn.session.config.report_frequency == "monthly"
    assert turn.result.next_step is S.REVIEW
    assert turn.result.mode is GuideMode.QUESTION


async def test_guide_for_picks_the_rule_guide_only_without_a_model(settings: Settings) -> None:
    credentials = CredentialStore(settings, SecretBox(b"x" * 32))
    offline = ModelRegistry(settings, credentials)
    assert isinstance(await guide_for(offline, None), RuleGuide)
    online = ModelRegistry(settings, credentials, overrides={"default": GuideScript().model()})
    guide = await guide_for(online, None, timeout_seconds=5)
    assert isinstance(guide, ModelGuide)
    assert guide.timeout_seconds == 5


async def test_review_does_not_complete_while_a_required_field_is_empty() -> None:
    session = CreationSession.model_validate({"current_step": "review", "config": FULL_CONFIG})
    turn = await run_turn(session, "yes", None, RuleGuide(), edits={"keywords": None})
    assert turn.result.next_step is S.REVIEW
    assert turn.result.stream is None
    assert turn.result.message.startswith("Some required fields are empty")


async def _chips_to_the_competitors(purpose: str) -> dict[str, list[str]]:
    """A creation by the rule guide from ``purpose``, taking the first chip offered at
    each step: the chips offered for the name, focus areas, keywords and competitors."""
    guide = RuleGuide()
    chips: dict[str, list[str]] = {}
    turn = await run_turn(
        at_step(
            "expected_outcomes",
            purpose=purpose,
            business_goals=["Track competitive landscape"],
        ),
        "Go/no-go decisions",
        None,
        guide,
    )
    chips["stream_name"] = turn.result.suggestions
    turn = await run_turn(
        turn.session,
        "",
        OptionSelected(target_field="stream_name", selected_value=chips["stream_name"][0]),
        guide,
    )
    turn = await run_turn(
        turn.session,
        "",
        OptionSelected(target_field="stream_type", selected_value="competitive"),
        guide,
    )
    for name in ("focus_areas", "keywords"):
        chips[name] = turn.result.options
        turn = await run_turn(
            turn.session,
            "",
            OptionsSelected(target_field=name, selected_values=chips[name][:2]),
            guide,
        )
    assert turn.result.next_step is S.COMPETITORS
    chips["competitors"] = turn.result.options
    return chips


@pytest.mark.parametrize(
    ("purpose", "competitors", "focus_areas"),
    [
        (
            "I want to monitor Palatin Technologies' melanocortin agonist",
            ["Palatin Technologies"],
            ["melanocortin agonist"],
        ),
        (
            "Palatin Technologies melanocortin agonist for obesity",
            ["Palatin Technologies"],
            ["melanocortin agonist", "obesity"],
        ),
        (
            "Palatin's melanocortin agonist in obesity",
            ["Palatin"],
            ["melanocortin agonist", "obesity"],
        ),
        (
            "Track Eli Lilly and Novo Nordisk GLP-1 drugs in obesity",
            ["Eli Lilly", "Novo Nordisk"],
            ["GLP-1 drugs", "obesity"],
        ),
        (
            "setmelanotide by Rhythm Pharmaceuticals, Inc. and Ipsen in obesity",
            ["Rhythm Pharmaceuticals Inc", "Ipsen"],
            ["setmelanotide", "obesity"],
        ),
        (
            "Oncology deals of Johnson & Johnson and Merck & Co.",
            ["Johnson & Johnson", "Merck & Co"],
            ["Oncology deals"],
        ),
    ],
)
async def test_competitors_are_whole_company_names_and_nothing_more(
    purpose: str, competitors: list[str], focus_areas: list[str]
) -> None:
    """A name is a run of capitalised words that stops before lowercase words and keeps
    its company suffix; the chosen stream name (the purpose's words in title case, such
    as "Palatin Technologies Melanocortin Agonist") adds no organisation, and neither do
    the answers to other questions ("Go/no-go decisions")."""
    chips = await _chips_to_the_competitors(purpose)
    assert chips["competitors"] == competitors
    assert chips["focus_areas"] == focus_areas
    assert chips["stream_name"][0] == f"{competitors[0]} {title(focus_areas[0])}"
    # Organisations are followed as organisations (the queries search them with the
    # keywords), not offered again as keywords.
    assert not {n.lower() for n in competitors} & {k.lower() for k in chips["keywords"]}


def title(phrase: str) -> str:
    return " ".join(w[:1].upper() + w[1:] for w in phrase.split())


async def test_a_title_cased_stream_name_is_not_taken_for_a_company() -> None:
    session = at_step(
        "keywords",
        **{
            **FULL_CONFIG,
            "purpose": "Palatin Technologies' melanocortin agonist",
            "stream_name": "Palatin Technologies Melanocortin Agonist Tracker",
            "keywords": None,
            "competitors": None,
        },
    )
    turn = await run_turn(session, "bremelanotide; Melanocortin Agonist", None, RuleGuide())
    assert turn.result.next_step is S.COMPETITORS
    assert turn.result.options == ["Palatin Technologies"]
