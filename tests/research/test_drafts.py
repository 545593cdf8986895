"""Drafts: the seed's field defaults, editing, and the title cut from the prompt."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from scholarstream.errors import ConflictError
from scholarstream.research import (
    TITLE_MAX_LENGTH,
    DraftEdit,
    DraftRequest,
    ExternalReport,
    ResearchStatus,
    create_draft,
    default_synthesis_llm,
    draft_defaults,
    edit_draft,
    fallback_title,
)
from tests.research.builders import ANTHROPIC, GOOGLE, LATER, OPENAI, T0, research

AVAILABLE = [OPENAI, ANTHROPIC, GOOGLE]
PROMPT = "Compare GLP-1 agonists for weight loss in adolescents."


def test_title_is_cut_from_the_prompt_until_a_model_names_it() -> None:
    draft = create_draft(DraftRequest(prompt=PROMPT), available_models=AVAILABLE, now=T0)
    assert draft.title == "Compare GLP-1 agonists for weight loss in adolescents."
    named = create_draft(
        DraftRequest(prompt=PROMPT, title="  GLP-1 review "), available_models=AVAILABLE, now=T0
    )
    assert named.title == "GLP-1 review"


def test_prompt_is_the_users_input() -> None:
    draft = create_draft(DraftRequest(prompt=PROMPT), available_models=AVAILABLE, now=T0)
    assert draft.prompt == PROMPT


def test_selected_llms_default_to_every_available_model() -> None:
    draft = create_draft(DraftRequest(prompt=PROMPT), available_models=AVAILABLE, now=T0)
    assert draft.selected_llms == AVAILABLE
    chosen = create_draft(
        DraftRequest(prompt=PROMPT, selected_llms=[ANTHROPIC]), available_models=AVAILABLE, now=T0
    )
    assert chosen.selected_llms == [ANTHROPIC]


SYNTHESIS_DEFAULTS = [
    pytest.param(AVAILABLE, "openai:o3", "openai:o3", id="the configured synthesis role wins"),
    pytest.param(AVAILABLE, None, GOOGLE, id="else a Google model (the seed's default)"),
    pytest.param([OPENAI, ANTHROPIC], None, OPENAI, id="else the first available model"),
    pytest.param([], None, None, id="no model at all: none"),
]


@pytest.mark.parametrize(("available", "configured", "expected"), SYNTHESIS_DEFAULTS)
def test_synthesis_llm_defaults(
    available: list[str], configured: str | None, expected: str | None
) -> None:
    assert default_synthesis_llm(available, configured) == expected
    assert draft_defaults(available, synthesis_model=configured).synthesis_llm == expected


def test_synthesis_llm_is_the_users_choice_when_made() -> None:
    draft = create_draft(
        DraftRequest(prompt=PROMPT, synthesis_llm=ANTHROPIC), available_models=AVAILABLE, now=T0
    )
    assert draft.synthesis_llm == ANTHROPIC


def test_external_reports_are_optional_context() -> None:
    report = ExternalReport(title="EMA", content="Approved.")
    assert (
        create_draft(DraftRequest(prompt=PROMPT), available_models=AVAILABLE).external_reports == []
    )
    with_report = create_draft(
        DraftRequest(prompt=PROMPT, external_reports=[report]), available_models=AVAILABLE
    )
    assert with_report.external_reports == [report]


def test_status_is_draft() -> None:
    draft = create_draft(DraftRequest(prompt=PROMPT), available_models=AVAILABLE, now=T0)
    assert draft.status == ResearchStatus.DRAFT
    assert (draft.created_at, draft.started_at, draft.llm_results) == (T0, None, [])


def test_the_request_reads_the_seeds_camel_case_names() -> None:
    request = DraftRequest.model_validate(
        {"prompt": PROMPT, "selectedLlms": [OPENAI], "synthesisLlm": OPENAI, "externalReports": []}
    )
    assert (request.selected_llms, request.synthesis_llm) == ([OPENAI], OPENAI)


TITLES = [
    pytest.param("What is tirzepatide?", "What is tirzepatide?", id="short prompt as it is"),
    pytest.param(
        "  Effects   of\tSGLT2  inhibitors ", "Effects of SGLT2 inhibitors", id="whitespace"
    ),
    pytest.param("## Heading about statins\nmore", "Heading about statins", id="markdown heading"),
    pytest.param(
        "\n\n- **CAR-T** in lymphoma\n\nContext", "CAR-T in lymphoma", id="list item, bold"
    ),
    pytest.param('"Quoted question"', "Quoted question", id="surrounding quotes"),
    pytest.param("1. Use `pandas` for __this__", "Use pandas for this", id="numbered, code"),
    pytest.param("   \n  ", "Untitled research", id="empty"),
]


@pytest.mark.parametrize(("prompt", "title"), TITLES)
def test_fallback_title(prompt: str, title: str) -> None:
    assert fallback_title(prompt) == title


def test_a_long_prompt_is_cut_at_a_word_boundary_with_an_ellipsis() -> None:
    prompt = (
        "Summarise the evidence on semaglutide and tirzepatide for weight management in "
        "adolescents with obesity, including adverse events, discontinuation and rebound."
    )
    title = fallback_title(prompt)
    assert title == (
        "Summarise the evidence on semaglutide and tirzepatide for weight management in…"
    )
    assert len(title) <= TITLE_MAX_LENGTH
    assert prompt.startswith(title[:-1])


def test_a_cut_drops_trailing_punctuation() -> None:
    prompt = (
        "word " * 10
        + "lorem ipsum dolor, sit amet consectetur adipiscing elit, sed do eiusmod tempor"
    )
    title = fallback_title(prompt)
    assert title.endswith("…")
    assert not title[:-1].endswith((",", " "))


def test_a_word_too_long_to_cut_at_a_boundary_is_cut_in_the_middle() -> None:
    title = fallback_title("See " + "x" * 200)
    assert len(title) == TITLE_MAX_LENGTH
    assert title.endswith("x…")


def test_editing_a_draft_changes_the_given_fields_only() -> None:
    draft = create_draft(DraftRequest(prompt=PROMPT), available_models=AVAILABLE, now=T0)
    edited = edit_draft(draft, DraftEdit(selected_llms=[OPENAI, OPENAI, GOOGLE]), now=LATER)
    assert edited.selected_llms == [OPENAI, GOOGLE]  # each model once
    assert (edited.prompt, edited.title, edited.synthesis_llm) == (
        draft.prompt,
        draft.title,
        draft.synthesis_llm,
    )
    assert edited.updated_at == LATER


def test_a_title_cut_from_the_prompt_follows_the_prompt() -> None:
    draft = create_draft(DraftRequest(prompt=PROMPT), available_models=AVAILABLE, now=T0)
    edited = edit_draft(draft, DraftEdit(prompt="Statins in the elderly"), now=LATER)
    assert edited.title == "Statins in the elderly"
    named = edit_draft(draft, DraftEdit(title="My title"), now=LATER)
    assert edit_draft(named, DraftEdit(prompt="Other"), now=LATER).title == "My title"
    assert edit_draft(named, DraftEdit(title=""), now=LATER).title == fallback_title(PROMPT)


@pytest.mark.parametrize(
    "status", [s for s in ResearchStatus if s != ResearchStatus.DRAFT], ids=str
)
def test_only_a_draft_is_edited(status: ResearchStatus) -> None:
    with pytest.raises(ConflictError):
        edit_draft(research(status), DraftEdit(title="New"), now=LATER)


@pytest.mark.parametrize(
    "fields",
    [
        pytest.param({"prompt": "   "}, id="blank prompt"),
        pytest.param({"prompt": PROMPT, "selectedLlms": ["gpt-4.1"]}, id="model without provider"),
        pytest.param({"prompt": PROMPT, "synthesisLlm": "openai:"}, id="provider without model"),
    ],
)
def test_a_draft_request_is_validated(fields: dict[str, object]) -> None:
    with pytest.raises(ValidationError):
        DraftRequest.model_validate(fields)
