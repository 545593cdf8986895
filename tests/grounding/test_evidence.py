"""The evidence phase on its own (issue 24), through its public API: a question turned
into queries, the library and the sources searched (recorded answers, no network),
duplicates merged, works ranked for the question, and the best kept as the pack."""

from __future__ import annotations

import json
import uuid
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager

import httpx
import pytest
from pydantic import ValidationError

from scholarstream.embeddings import Embedder, Vectors
from scholarstream.errors import InvalidInputError
from scholarstream.grounding.evidence import EvidenceFinder, EvidenceRequest, EvidenceResult
from scholarstream.papers import Identifiers, Paper
from scholarstream.runtime import Runtime
from scholarstream.settings import GroundingSettings, Settings
from scholarstream.sources import OFFLINE_NOTICE
from scholarstream.sources.library import import_items
from tests.conftest import SHARED_DATA
from tests.helpers import ConceptEmbedder, assert_plain, make_runtime, new_user
from tests.search.world import QUESTION, LiteratureWorld

WOS = SHARED_DATA / "exports" / "asysd_testthat" / "wos_test.ris"  # 50 papers on cocker spaniels
SPANIELS = "eye diseases in cocker spaniel dogs"
# The first work of the recorded OpenAlex answer, also in the user's library.
SHARED_DOI = "10.3126/nelta.v27i1-2.53203"

OpenRuntime = Callable[..., AbstractAsyncContextManager[Runtime]]


@pytest.fixture
def runtime_with(db_settings: Settings) -> OpenRuntime:
    @asynccontextmanager
    async def open_runtime(
        world: LiteratureWorld | None = None,
        settings: Settings | None = None,
        embedder: Embedder | None = None,
    ) -> AsyncIterator[Runtime]:
        runtime = make_runtime(
            settings or db_settings,
            source_transport=(world or LiteratureWorld()).transport(),
            embedder=embedder,
        )
        try:
            yield runtime
        finally:
            await runtime.close()

    return open_runtime


async def find(runtime: Runtime, owner: uuid.UUID, **request: object) -> EvidenceResult:
    return await EvidenceFinder.for_runtime(runtime).find(
        owner, EvidenceRequest.model_validate(request)
    )


async def with_spaniels(runtime: Runtime) -> uuid.UUID:
    owner = (await new_user(runtime)).id
    report = await runtime.library.import_file(owner, WOS)
    assert report.imported == 50
    return owner


def titles(result: EvidenceResult) -> list[str]:
    return [item.paper.title for item in result.pack.items]


async def test_a_library_gives_a_pack_ranked_for_the_question(runtime_with: OpenRuntime) -> None:
    async with runtime_with() as runtime:
        owner = await with_spaniels(runtime)

        cataracts = await find(
            runtime, owner, question="primary cataract in cocker spaniels", sources=["library"]
        )
        pancreas = await find(
            runtime,
            owner,
            question="IgG4-related inflammatory disease of the pancreas",
            sources=["library"],
        )

    pack = cataracts.pack
    assert pack.question == "primary cataract in cocker spaniels"
    assert [item.key for item in pack.items] == list(range(1, len(pack.items) + 1))
    assert 0 < len(pack.items) <= 20
    assert "cataract" in pack.items[0].paper.title.lower()
    scores = [item.score for item in pack.items]
    assert scores == sorted(scores, reverse=True)
    assert {item.origin for item in pack.items} == {"library"}
    assert all(cataracts.sources_of(item.key) == ["library"] for item in pack.items)
    assert "Pancreas" in pancreas.pack.items[0].paper.title

    search = cataracts.search
    assert [q.source for q in search.queries] == ["library"]
    assert "cataract" in search.queries[0].query.lower()
    assert search.scored_by == "rules" and not search.by_meaning  # no model, no embedder
    (library,) = search.sources
    assert library.ok and library.label == "Local library"
    assert library.returned == search.found and library.in_pack == len(pack.items)


async def test_the_pack_holds_at_most_its_size(
    runtime_with: OpenRuntime, db_settings: Settings
) -> None:
    small = db_settings.model_copy(update={"grounding": GroundingSettings(pack_size=4)})
    async with runtime_with(settings=small) as runtime:
        owner = await with_spaniels(runtime)
        by_setting = await find(runtime, owner, question=SPANIELS, sources=["library"])
        asked = await find(runtime, owner, question=SPANIELS, sources=["library"], size=7)

    assert len(by_setting.pack.items) == 4
    assert len(asked.pack.items) == 7
    assert asked.search.related > 7
    # The best four are the same whatever the size.
    assert titles(asked)[:4] == titles(by_setting)


async def test_a_work_in_the_library_and_a_source_is_in_the_pack_once(
    runtime_with: OpenRuntime,
) -> None:
    mine = Paper(
        title="ELT in the Age of Artificial Intelligence (AI): Working with Machines",
        ids=Identifiers(doi=SHARED_DOI),
        abstract="Machine learning and natural language processing in English teaching.",
        record_id="mine-1",
    )
    async with runtime_with() as runtime:
        owner = (await new_user(runtime)).id
        await import_items(
            runtime.database, owner, iter([mine]), file="mine.json", format_name="json"
        )
        result = await find(runtime, owner, question=QUESTION, sources=["openalex"], size=60)

    shared = [item for item in result.pack.items if item.paper.ids.doi == SHARED_DOI]
    assert len(shared) == 1
    (item,) = shared
    assert item.origin == "library"
    assert set(result.sources_of(item.key)) == {"library", "openalex"}
    search = result.search
    assert search.distinct < search.found
    assert {s.source for s in search.sources} == {"openalex", "library"}
    assert all(s.ok for s in search.sources)
    assert len({item.identity for item in result.pack.items}) == len(result.pack.items)


async def test_a_failing_source_is_reported_and_the_others_give_the_pack(
    runtime_with: OpenRuntime,
) -> None:
    world = LiteratureWorld(failing={"semantic_scholar"})
    async with runtime_with(world) as runtime:
        owner = (await new_user(runtime)).id
        result = await find(
            runtime, owner, question=QUESTION, sources=["pubmed", "semantic_scholar"]
        )

    assert result.pack.items
    assert {item.origin for item in result.pack.items} == {"pubmed"}
    by_name = {s.source: s for s in result.search.sources}
    assert by_name["pubmed"].ok and by_name["pubmed"].returned > 0
    failed = by_name["semantic_scholar"]
    assert result.search.failed == [failed]
    assert not failed.ok and failed.error_code == "source_credentials"
    assert failed.label == "Semantic Scholar"
    assert failed.error and failed.hint
    assert_plain(f"{failed.error} {failed.hint}")
    assert failed.in_pack == 0
    assert by_name["library"].ok  # an empty library answers, with nothing


async def test_offline_the_library_still_gives_the_pack(runtime_with: OpenRuntime) -> None:
    async with runtime_with(LiteratureWorld(offline=True)) as runtime:
        owner = await with_spaniels(runtime)
        result = await find(runtime, owner, question=SPANIELS)  # the default sources

    assert len(result.pack.items) == 20
    assert {item.origin for item in result.pack.items} == {"library"}
    assert result.search.notices == [OFFLINE_NOTICE]
    remote = [s for s in result.search.sources if s.source != "library"]
    assert remote and all(s.unreachable and not s.ok for s in remote)


async def test_without_the_library_only_the_sources_are_searched(runtime_with: OpenRuntime) -> None:
    async with runtime_with() as runtime:
        owner = await with_spaniels(runtime)
        result = await find(runtime, owner, question=QUESTION, sources=["openalex"], library=False)
        with pytest.raises(InvalidInputError, match="nothing to search"):
            await find(runtime, owner, question=SPANIELS, sources=["library"], library=False)
        with pytest.raises(InvalidInputError, match="Unknown source 'scopus'") as unknown:
            await find(runtime, owner, question=SPANIELS, sources=["scopus"])

    assert [s.source for s in result.search.sources] == ["openalex"]
    assert {item.origin for item in result.pack.items} == {"openalex"}
    assert unknown.value.hint and "pubmed" in unknown.value.hint


@pytest.mark.parametrize(
    ("request_body", "words"),
    [
        ({"question": "   "}, "question is empty"),
        ({"question": "x", "size": 0}, "size"),
        ({"question": "x", "size": 101}, "size"),
        ({"question": "x", "sources": []}, "sources"),
        ({"question": "x", "sources": [" "]}, "no source is named"),
        ({"question": "x", "size": True}, "size"),
        ({"question": "x", "offline": "yes"}, "offline"),
    ],
)
def test_a_bad_request_is_refused(request_body: dict[str, object], words: str) -> None:
    with pytest.raises(ValidationError, match=words):
        EvidenceRequest.model_validate(request_body)


async def test_a_source_the_strategy_wrote_no_query_for_is_reported(
    runtime_with: OpenRuntime,
) -> None:
    async with runtime_with() as runtime:
        owner = (await new_user(runtime)).id
        result = await find(
            runtime,
            owner,
            question=QUESTION,
            sources=["pubmed", "clinicaltrials"],
            library=False,
            offline=True,
        )
    by_name = {s.source: s for s in result.search.sources}
    assert set(by_name) == {"pubmed", "clinicaltrials"}
    trials = by_name["clinicaltrials"]
    assert (trials.ok, trials.returned) == (False, 0)
    assert trials.error == (
        "ClinicalTrials.gov was not searched: no query was written for it from this question."
    )
    assert trials.hint is not None
    assert_plain(f"{trials.error} {trials.hint}")


# --- meaning --------------------------------------------------------------------------

# Words of one concept share a dimension, so two made-up names of one drug mean the same
# although they share no word (and no MeSH heading joins them, as it joins "heart attack"
# and "myocardial infarction").
CONCEPTS = (
    ("zorblatin", "quenfexil"),
    ("malaria", "plasmodium", "falciparum", "mosquito"),
    ("sleep", "insomnia"),
)


class BrokenEmbedder(ConceptEmbedder):
    def embed_query(self, text: str) -> Vectors:
        raise RuntimeError("illegal instruction")


MEANING = [
    Paper(title="Quenfexil after surgery", abstract="Fewer events.", record_id="1"),
    Paper(title="Insomnia in shift workers", abstract="Sleep was shorter.", record_id="2"),
    Paper(title="Plasmodium falciparum in travellers", abstract="Mosquito bites.", record_id="3"),
    Paper(title="Zorblatin in marathon runners", abstract="Rare events.", record_id="4"),
]


async def test_meaning_ranks_a_work_that_shares_no_word_with_the_question(
    runtime_with: OpenRuntime, db_settings: Settings
) -> None:
    semantic = db_settings.model_copy(
        update={"semantic": db_settings.semantic.model_copy(update={"enabled": True})}
    )
    async with runtime_with(settings=semantic, embedder=ConceptEmbedder(CONCEPTS)) as runtime:
        owner = (await new_user(runtime)).id
        await import_items(
            runtime.database, owner, iter(MEANING), file="m.json", format_name="json"
        )
        await runtime.library.semantic.build(owner)
        request = EvidenceRequest(question="zorblatin", sources=["library"])

        hybrid = await EvidenceFinder.for_runtime(runtime).find(owner, request)
        services = EvidenceFinder.for_runtime(runtime).services
        words = await EvidenceFinder(services, runtime.settings.grounding).find(owner, request)
        broken = await EvidenceFinder(
            services, runtime.settings.grounding, embedder=BrokenEmbedder(CONCEPTS)
        ).find(owner, request)

    assert hybrid.search.by_meaning
    assert titles(hybrid)[0] == MEANING[3].title  # shares the word and the meaning
    # The library found the other name by meaning; the pack keeps it for its meaning.
    assert set(titles(hybrid)) == {MEANING[0].title, MEANING[3].title}
    assert not words.search.by_meaning
    assert titles(words) == [MEANING[3].title]
    assert not broken.search.by_meaning and titles(broken) == [MEANING[3].title]


# --- trials ---------------------------------------------------------------------------

TRIALS = SHARED_DATA / "api_fixtures" / "clinicaltrials_v2_aact"


def registered_trials(request: httpx.Request) -> httpx.Response:
    """ClinicalTrials.gov v2 answering every search with one recorded study."""
    assert request.url.host == "clinicaltrials.gov", request.url
    studies = [json.loads((TRIALS / f"{n}.json").read_text()) for n in ("NCT02210780",)]
    return httpx.Response(200, json={"studies": studies, "totalCount": 1})


async def test_a_registered_trial_is_cited_as_its_registration(db_settings: Settings) -> None:
    runtime = make_runtime(db_settings, source_transport=httpx.MockTransport(registered_trials))
    try:
        owner = (await new_user(runtime)).id
        result = await find(
            runtime,
            owner,
            question="dupilumab for atopic dermatitis in adults",
            sources=["clinicaltrials"],
            library=False,
        )
    finally:
        await runtime.close()

    (item,) = result.pack.items
    assert item.origin == "clinicaltrials"
    assert item.paper.ids.nct_id == "NCT02210780"
    assert item.paper.venue == "ClinicalTrials.gov"
    assert item.paper.authors[0].name == "Regeneron Pharmaceuticals"
    assert item.paper.abstract and "Dupilumab" in item.paper.title
