"""The records a conversation's answers may cite: one key per work for the whole
conversation (found again by any identifier, or by title and year), kept with the
conversation on each database, merged when two turns finish at once, and bounded without
giving a key to another work."""

from __future__ import annotations

import uuid

import pytest

from scholarstream.chat import ConversationStore, StartedTurn
from scholarstream.chat.core import (
    CONVERSATION_RECORDS,
    ConversationEvidence,
    earlier_citations,
)
from scholarstream.errors import NotFoundError
from scholarstream.grounding import PackBuilder
from scholarstream.papers import Author, Identifiers, Paper
from scholarstream.settings import Settings
from tests.helpers import make_runtime, new_user


def paper(title: str, year: int = 2020, abstract: str | None = None, **ids: str) -> Paper:
    return Paper(
        title=title,
        year=year,
        abstract=abstract,
        ids=Identifiers(**ids),
        authors=[Author(name="Lee, A", family="Lee")],
        mesh_terms=["Dogs"],
    )


STATINS = paper("Statins in older adults", pmid="111", abstract="Statins cut strokes.")
TAURINE = paper("Taurine and cardiomyopathy in dogs", doi="10.1000/taurine")
SGLT2 = paper("SGLT2 inhibitors in heart failure", doi="10.1000/sglt2")


def turn(evidence: ConversationEvidence, *shown: Paper) -> tuple[PackBuilder, list[int]]:
    builder = evidence.builder()
    return builder, [builder.key_for(p, "library") for p in shown]


def test_a_work_keeps_its_key_whichever_identifier_or_source_shows_it_again() -> None:
    builder = PackBuilder()
    assert builder.key_for(STATINS, "pubmed") == 1
    assert builder.key_for(TAURINE, "library") == 2
    # The same work from another source: the PMID it shares, a DOI it adds.
    again = paper("Statins in older adults.", pmid="111", doi="10.1000/statins")
    assert builder.key_for(again, "openalex") == 1
    # Found by the DOI it was given, and by title and year with no identifier against it.
    assert builder.key_for(paper("Statins in older adults", doi="10.1000/statins"), "s2") == 1
    assert builder.key_for(paper("Taurine and Cardiomyopathy in Dogs!"), "arxiv") == 2
    # Same title and year, another DOI: another work.
    assert builder.key_for(paper("Taurine and cardiomyopathy in dogs", doi="10.2000/x"), "s") == 3
    assert builder.key_for(paper("Taurine and cardiomyopathy in dogs", 2021), "s") == 4
    assert builder.shown == [1, 2, 3, 4]
    first = builder.pack().item(1)
    assert first is not None and first.paper.ids.doi == "10.1000/statins"
    assert first.paper.abstract == "Statins cut strokes." and first.origin == "pubmed"
    # A record shown again with the abstract it lacked gets it: the model read it.
    builder.key_for(paper("Taurine and cardiomyopathy in dogs", abstract="Low taurine."), "x")
    second = builder.pack().item(2)
    assert second is not None and second.paper.abstract == "Low taurine."


def test_turns_continue_the_conversations_keys() -> None:
    start = ConversationEvidence()
    first, keys = turn(start, STATINS, TAURINE)
    assert keys == [1, 2]
    after_1 = start.after_turn(first, cited=[2])
    assert [r.item.key for r in after_1.records] == [1, 2] and after_1.next_key == 3
    assert [(r.used, r.cited) for r in after_1.records] == [(1, None), (1, 1)]
    # What is kept of a record: what its citations are checked against, not its headings.
    assert after_1.records[0].item.paper.mesh_terms == []

    second, keys = turn(after_1, SGLT2, TAURINE)
    assert keys == [3, 2]
    # The turn's pack holds the earlier records too: an answer may cite them.
    assert second.pack().keys == {1, 2, 3} and second.shown == [3, 2]
    after_2 = after_1.after_turn(second, cited=[1, 3])
    assert [(r.item.key, r.used, r.cited) for r in after_2.records] == [
        (1, 2, 2),
        (2, 2, 1),
        (3, 2, 2),
    ]
    # Stored and read back, it is the same state.
    assert ConversationEvidence.model_validate(after_2.model_dump(mode="json")) == after_2


def test_two_turns_that_finish_at_once_keep_the_stored_keys() -> None:
    start = start_with_statins()
    one, keys_one = turn(start, TAURINE, STATINS)
    other, keys_other = turn(start, SGLT2)
    assert keys_one == [2, 1] and keys_other == [2]  # each turn's own view
    stored = start.after_turn(one, cited=[2])
    merged = stored.after_turn(other, cited=[2])
    # The stored [2] stays the taurine work; the other turn's new work gets the next key,
    # and its answer's [2] (SGLT2) is remembered as cited under that key (turns 2 and 3).
    keys = {r.item.paper.title: (r.item.key, r.cited) for r in merged.records}
    assert keys[TAURINE.title] == (2, 2) and keys[SGLT2.title] == (3, 3)
    assert merged.next_key == 4


def start_with_statins() -> ConversationEvidence:
    start = ConversationEvidence()
    builder, _ = turn(start, STATINS)
    return start.after_turn(builder, cited=[])


def test_past_the_bound_the_oldest_records_go_never_cited_first_and_their_keys_retire() -> None:
    works = [paper(f"Work {n}", doi=f"10.9000/{n}") for n in range(1, 6)]
    evidence = ConversationEvidence()
    builder, _ = turn(evidence, *works[:3])  # 1, 2, 3
    evidence = evidence.after_turn(builder, cited=[1], limit=3)
    builder, _ = turn(evidence, works[3])  # 4
    evidence = evidence.after_turn(builder, cited=[], limit=3)
    # Four records, three kept: [2] goes (never cited, used longest ago), not the cited [1].
    assert [r.item.key for r in evidence.records] == [1, 3, 4]
    assert evidence.retired == [2] and evidence.next_key == 5
    # The dropped work, found again, gets a new key: [2] is not given again.
    builder, keys = turn(evidence, works[1], works[4])
    assert keys == [5, 6]
    evidence = evidence.after_turn(builder, cited=[5], limit=3)
    assert [r.item.key for r in evidence.records] == [1, 5, 6] and evidence.next_key == 7
    assert evidence.retired == [2, 3, 4]
    assert CONVERSATION_RECORDS >= 100


def test_only_once_every_citable_key_is_given_does_a_retired_key_come_back() -> None:
    evidence = ConversationEvidence(next_key=1000, retired=[5, 9], retired_cited=[7])
    builder, keys = turn(evidence, STATINS, TAURINE, SGLT2, paper("Fourth", doi="10.4000/x"))
    # Never-cited keys first, the longest retired first; then the cited ones.
    assert keys == [5, 9, 7, 1000]
    after = evidence.after_turn(builder, cited=[])
    assert after.retired == [] and after.retired_cited == []


def test_the_model_is_reminded_of_the_records_cited_earlier_and_no_more() -> None:
    assert earlier_citations(ConversationEvidence()) is None
    evidence = start_with_statins()
    assert earlier_citations(evidence) is None  # shown, never cited
    works = [paper(f"Trial ``` number {n}", doi=f"10.8000/{n}") for n in range(40)]
    builder, _ = turn(evidence, *works)
    evidence = evidence.after_turn(builder, cited=range(1, 42))
    text = earlier_citations(evidence)
    assert text is not None
    assert text.startswith("## Records cited earlier in this conversation")
    lines = [line for line in text.splitlines() if line.startswith("[")]
    assert len(lines) == 30 and lines[0].startswith("[12] Trial ``` number 10 (2020)")
    # Fenced as data: a title cannot close the fence.
    assert "\n````\n[12]" in text


async def test_the_conversations_records_are_stored_with_it(db_settings: Settings) -> None:
    runtime = make_runtime(db_settings)
    try:
        alice = await new_user(runtime)
        store = ConversationStore(runtime.database)
        first = await open_and_record(store, alice.id, None)
        assert first.evidence == ConversationEvidence()
        builder, _ = turn(first.evidence, STATINS, TAURINE)
        await store.finish_turn(
            alice.id,
            first.assistant_message_id,
            status="complete",
            content="[2]",
            evidence=lambda stored: stored.after_turn(builder, cited=[2]),
        )
    finally:
        await runtime.close()

    # Another runtime (a restart) reads them back when the next turn opens.
    runtime = make_runtime(db_settings)
    try:
        store = ConversationStore(runtime.database)
        second = await open_and_record(store, alice.id, first.conversation_id)
        assert [(r.item.key, r.cited) for r in second.evidence.records] == [(1, None), (2, 1)]
        builder, keys = turn(second.evidence, SGLT2, STATINS)
        assert keys == [3, 1]
        await store.finish_turn(
            alice.id,
            second.assistant_message_id,
            status="error",
            content="",
            evidence=lambda stored: stored.after_turn(builder, cited=[]),
        )
        third = await store.open_turn(
            alice.id,
            conversation_id=first.conversation_id,
            message="go on",
            context={"current_page": "home"},
            turn_id=uuid.uuid4().hex,
        )
        assert third.evidence.next_key == 4 and len(third.evidence.records) == 3

        # Deleting the conversation deletes its records with it.
        await store.delete(alice.id, first.conversation_id)
        with pytest.raises(NotFoundError):
            await open_and_record(store, alice.id, first.conversation_id)
    finally:
        await runtime.close()


async def open_and_record(
    store: ConversationStore, owner_id: uuid.UUID, conversation_id: uuid.UUID | None
) -> StartedTurn:
    started = await store.open_turn(
        owner_id,
        conversation_id=conversation_id,
        message="statins?",
        context={"current_page": "home"},
        turn_id=uuid.uuid4().hex,
    )
    await store.record_start(owner_id, started)
    return started
