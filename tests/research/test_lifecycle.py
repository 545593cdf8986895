"""The status state machine: every legal move of the seed's diagram, and every other move
refused with a ConflictError that names it and says what to do."""

from __future__ import annotations

import itertools

import pytest

from scholarstream.errors import ConflictError
from scholarstream.research import (
    STATUS_HINTS,
    FailureReason,
    ResearchStatus,
    allowed_transitions,
    can_transition,
    transition,
)
from tests.research.builders import LATER, T0, research

S = ResearchStatus

LEGAL = [
    pytest.param(S.DRAFT, S.PROCESSING, id="draft->processing (start)"),
    pytest.param(S.PROCESSING, S.SYNTHESIZING, id="processing->synthesizing (all LLMs complete)"),
    pytest.param(
        S.PROCESSING, S.AWAITING_CONFIRMATION, id="processing->awaiting_confirmation (some failed)"
    ),
    pytest.param(S.PROCESSING, S.FAILED, id="processing->failed (all LLMs failed)"),
    pytest.param(S.SYNTHESIZING, S.COMPLETED, id="synthesizing->completed (success or skip)"),
    pytest.param(S.SYNTHESIZING, S.FAILED, id="synthesizing->failed (synthesis failure)"),
    pytest.param(S.AWAITING_CONFIRMATION, S.SYNTHESIZING, id="awaiting->synthesizing (proceed)"),
    pytest.param(S.AWAITING_CONFIRMATION, S.RETRYING, id="awaiting->retrying (retry)"),
    pytest.param(S.AWAITING_CONFIRMATION, S.FAILED, id="awaiting->failed (cancel, max retries)"),
    pytest.param(S.RETRYING, S.PROCESSING, id="retrying->processing (back to LLM processing)"),
    pytest.param(S.FAILED, S.RETRYING, id="failed->retrying (retry failed LLMs)"),
    pytest.param(S.FAILED, S.SYNTHESIZING, id="failed->synthesizing (re-run synthesis)"),
    pytest.param(S.FAILED, S.COMPLETED, id="failed->completed (nothing to retry)"),
    # Issue 22: a synthesis that failed completes the research without it; Retry runs it.
    pytest.param(S.COMPLETED, S.SYNTHESIZING, id="completed->synthesizing (synthesis retried)"),
]
_LEGAL_PAIRS = {(p.values[0], p.values[1]) for p in LEGAL}
ILLEGAL = [
    pytest.param(a, b, id=f"{a}->{b}")
    for a, b in itertools.product(S, S)
    if (a, b) not in _LEGAL_PAIRS
]


@pytest.mark.parametrize(("current", "target"), LEGAL)
def test_a_legal_transition_moves_the_research(current: S, target: S) -> None:
    before = research(current)
    after = transition(before, target, now=LATER)
    assert can_transition(current, target)
    assert after.status == target
    assert after.updated_at == LATER
    assert before.status == current  # records are never changed in place


@pytest.mark.parametrize(("current", "target"), ILLEGAL)
def test_an_illegal_transition_is_a_conflict_naming_it(current: S, target: S) -> None:
    assert not can_transition(current, target)
    with pytest.raises(ConflictError) as caught:
        transition(research(current), target, now=LATER)
    assert f"{current} cannot become {target}" in caught.value.message
    assert caught.value.hint == STATUS_HINTS[current]
    assert caught.value.http_status == 409


def test_the_table_has_exactly_the_seeds_moves() -> None:
    table = {(a, b) for a in S for b in allowed_transitions(a)}
    assert table == _LEGAL_PAIRS
    assert allowed_transitions(S.COMPLETED) == frozenset({S.SYNTHESIZING})


def test_every_status_has_a_hint_saying_what_to_do() -> None:
    assert set(STATUS_HINTS) == set(S)


def test_starting_sets_started_at_once_and_completing_sets_completed_at() -> None:
    draft = research(S.DRAFT)
    assert draft.started_at is None
    assert transition(draft, S.PROCESSING, now=LATER).started_at == LATER
    retried = research(S.RETRYING)
    assert transition(retried, S.PROCESSING, now=LATER).started_at == T0
    assert transition(research(S.SYNTHESIZING), S.COMPLETED, now=LATER).completed_at == LATER


def test_leaving_failed_clears_the_error_the_reason_and_the_synthesis_error() -> None:
    failed = research(
        S.FAILED,
        error="Synthesis failed: timeout",
        synthesis_error="timeout",
        failure_reason=FailureReason.SYNTHESIS_FAILED,
    )
    again = transition(failed, S.SYNTHESIZING, now=LATER)
    assert (again.error, again.failure_reason, again.synthesis_error) == (None, None, None)
