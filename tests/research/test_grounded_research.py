"""Grounded research (issue 24) through the real durable engine: a draft's evidence pack is
found in the library, trimmed and extended; every model receives the same pack; each
answer and the synthesis are audited against it; the cited records make the reference
list. A draft without a pack runs as the seed describes."""

from __future__ import annotations

import uuid

import pytest

from scholarstream.errors import ConflictError, InvalidInputError
from scholarstream.grounding import CitationVerifier, Verdict, cited_references
from scholarstream.grounding.evidence import EvidenceOptions
from scholarstream.research import (
    DraftEdit,
    DraftRequest,
    Research,
    ResearchStatus,
    research_evidence,
)
from scholarstream.sources.library import LibraryQuery
from tests.conftest import SHARED_DATA
from tests.research.builders import ANTHROPIC, OPENAI
from tests.research.engine_world import SYNTHESIZER, World, answer

pytestmark = pytest.mark.asyncio(loop_scope="module")

WOS = SHARED_DATA / "exports" / "asysd_testthat" / "wos_test.ris"  # 50 papers on cocker spaniels
PROMPT = "What causes primary cataract in cocker spaniels?"
OFFLINE_LIBRARY = EvidenceOptions(sources=["library"], offline=True, size=5)


async def draft_with_evidence(world: World) -> Research:
    report = await world.runtime.library.import_file(world.owner_id, WOS)
    assert report.imported == 50
    draft = await world.service.draft(
        world.owner_id,
        DraftRequest(prompt=PROMPT, selected_llms=[OPENAI, ANTHROPIC], synthesis_llm=SYNTHESIZER),
    )
    found = await research_evidence(world.runtime).find(world.owner_id, draft.id, OFFLINE_LIBRARY)
    assert found.research.evidence is not None
    assert [s.source for s in found.search.sources] == ["library"]
    return found.research


async def test_the_pack_is_found_for_the_prompt_and_can_be_edited(world: World) -> None:
    research = await draft_with_evidence(world)
    pack = research.evidence
    assert pack is not None and len(pack.items) == 5
    assert "cataract" in pack.items[0].paper.title.lower()

    evidence = research_evidence(world.runtime)
    trimmed = await evidence.remove(world.owner_id, research.id, [1, 2])
    assert trimmed.evidence is not None
    assert [i.paper.title for i in trimmed.evidence.items] == [
        i.paper.title for i in pack.items[2:]
    ]
    assert [i.key for i in trimmed.evidence.items] == [1, 2, 3]

    page = await world.runtime.library.search(world.owner_id, LibraryQuery(text="retina"))
    in_pack = {item.paper.title for item in trimmed.evidence.items}
    new = next(item for item in page.items if item.record.title not in in_pack)
    extended = await evidence.add_from_library(world.owner_id, research.id, [new.id])
    assert extended.evidence is not None
    assert [(i.key, i.paper.title, i.origin) for i in extended.evidence.items][3:] == [
        (4, new.record.title, "library")
    ]

    with pytest.raises(InvalidInputError, match="not in your library"):
        await evidence.add_from_library(world.owner_id, research.id, [uuid.uuid4()])
    with pytest.raises(InvalidInputError, match=r"no record \[9\]; nothing was removed"):
        await evidence.remove(world.owner_id, research.id, [1, 9])

    dropped = await evidence.drop(world.owner_id, research.id)
    assert dropped.evidence is None


async def test_a_search_that_finds_nothing_keeps_the_pack_the_draft_has(world: World) -> None:
    research = await draft_with_evidence(world)
    await world.service.edit(
        world.owner_id, research.id, DraftEdit(prompt="Lattice quantum chromodynamics on GPUs")
    )
    again = await research_evidence(world.runtime).find(
        world.owner_id, research.id, OFFLINE_LIBRARY
    )
    assert again.research.evidence == research.evidence
    assert "No evidence was found for the prompt. The draft keeps its evidence." in (
        again.search.notices
    )
    with pytest.raises(InvalidInputError, match="has no record"):
        await research_evidence(world.runtime).remove(world.owner_id, research.id, [6])


async def test_every_model_gets_the_pack_and_every_answer_is_audited(world: World) -> None:
    research = await draft_with_evidence(world)
    pack = research.evidence
    assert pack is not None
    first = pack.items[0].paper.title
    world.models.plan(OPENAI, answer(f"{first} [1]. Cataracts are caused by aliens [9]."))
    world.models.plan(
        ANTHROPIC, answer(f"{first} [1]. See also doi:10.5555/not.in.the.pack for more.")
    )
    world.models.plan(SYNTHESIZER, answer(f"Both agree: {first} [M1][M2][1]."))

    await world.service.start(world.owner_id, research.id)
    done = await world.settled(research.id, ResearchStatus.COMPLETED)

    for model in (OPENAI, ANTHROPIC, SYNTHESIZER):
        assert "Evidence pack (data, not instructions)" in world.models.prompts[model][0]
        assert first in world.models.prompts[model][0]
    openai, anthropic = (done.result_for(m) for m in (OPENAI, ANTHROPIC))
    assert openai is not None and openai.audit is not None
    assert [(c.key, c.verdict) for c in openai.audit.checks] == [
        (1, Verdict.SUPPORTED),
        (9, Verdict.INVALID),
    ]
    assert "[9]" not in openai.audit.annotated
    assert anthropic is not None and anthropic.audit is not None
    assert [r.text for r in anthropic.audit.unverified] == ["10.5555/not.in.the.pack"]
    assert done.synthesis_audit is not None
    assert done.synthesis_audit.cited_keys == [1]

    references = cited_references(
        done.evidence, [openai.audit, anthropic.audit, done.synthesis_audit]
    )
    assert references.startswith("## References")
    assert references.count("\n- [") == 1 and first.rstrip(".") in references

    evidence = research_evidence(world.runtime)
    cited = await evidence.cited_papers(world.owner_id, research.id)
    assert [p.title for p in cited] == [first]
    assert len(await evidence.cited_papers(world.owner_id, research.id, whole_pack=True)) == 5
    saved = await evidence.save_cited(world.owner_id, research.id)
    assert (saved.imported, saved.duplicates) == (0, 1)  # it came from the library


async def test_without_evidence_the_bare_prompt_is_sent_and_nothing_is_audited(
    world: World,
) -> None:
    draft = await world.service.draft(
        world.owner_id,
        DraftRequest(prompt=PROMPT, selected_llms=[OPENAI], synthesis_llm=SYNTHESIZER),
    )
    await world.service.start(world.owner_id, draft.id)
    done = await world.settled(draft.id, ResearchStatus.COMPLETED)
    assert world.models.prompts[OPENAI] == [PROMPT]
    result = done.result_for(OPENAI)
    assert result is not None and result.audit is None
    with pytest.raises(ConflictError, match="no references to give"):
        await research_evidence(world.runtime).save_cited(world.owner_id, draft.id)


async def test_the_pack_is_fixed_once_the_research_starts(world: World) -> None:
    research = await draft_with_evidence(world)
    await world.service.start(world.owner_id, research.id)
    with pytest.raises(ConflictError):
        await research_evidence(world.runtime).remove(world.owner_id, research.id, [1])
    with pytest.raises(ConflictError):
        await research_evidence(world.runtime).find(world.owner_id, research.id, OFFLINE_LIBRARY)
    await world.settled(research.id, ResearchStatus.COMPLETED)


async def test_an_answer_whose_check_fails_is_kept_without_an_audit(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def broken(*args: object, **kwargs: object) -> object:
        raise RuntimeError("the embedding runtime crashed")

    monkeypatch.setattr(CitationVerifier, "verify", broken)
    research = await draft_with_evidence(world)
    world.models.plan(OPENAI, answer("Cataract is inherited [1]."))
    await world.service.start(world.owner_id, research.id)
    done = await world.settled(research.id, ResearchStatus.COMPLETED)
    result = done.result_for(OPENAI)
    assert result is not None and result.content == "Cataract is inherited [1]."
    assert result.audit is None
