"""Hybrid library search through the public API: vectors built in the background after
import, stored on every backend, and fused with the word ranking.

A small concept embedder stands in for the shipped model here, so each test can say which
records mean the same; ``test_shipped_model.py`` checks the model itself.
"""

from __future__ import annotations

import io
import uuid
from collections.abc import AsyncIterator, Iterator, Sequence
from pathlib import Path

import pytest

from scholarstream.db.tables import User
from scholarstream.papers import Paper
from scholarstream.runtime import Runtime
from scholarstream.settings import Settings
from scholarstream.sources.library import (
    IN_PROCESS,
    PGVECTOR,
    LibraryQuery,
    NothingMatchedError,
    embedding_passages,
    import_items,
)
from tests.conftest import throwaway_postgres_database
from tests.helpers import BrokenEmbedder, ConceptEmbedder, make_runtime, new_user

# Words of one concept share a dimension, so "heart attack" and "myocardial infarction"
# mean the same although they share no word.
CONCEPTS = (
    ("heart", "attack", "myocardial", "infarction", "cardiac"),
    ("statin", "statins", "atorvastatin", "cholesterol", "lipid"),
    ("malaria", "plasmodium", "falciparum"),
    ("bed", "nets", "insecticide", "mosquito"),
    ("sleep", "insomnia"),
)


def paper(title: str, abstract: str = "") -> Paper:
    return Paper(title=title, abstract=abstract or None, record_id=title[:40])


PAPERS = [
    paper("Myocardial infarction outcomes after atorvastatin", "Cardiac events fell."),
    paper("Insecticide-treated bed nets against Plasmodium falciparum", "Mosquito nets."),
    paper("Insomnia in shift workers", "Sleep was shorter."),
    paper("Heart rate variability in athletes", "Training load and autonomic tone."),
]


@pytest.fixture(
    params=[
        "sqlite",
        pytest.param("postgresql", marks=pytest.mark.postgres),
        pytest.param("pgvector", marks=pytest.mark.postgres),
    ]
)
def database_url(request: pytest.FixtureRequest, data_dir: Path) -> Iterator[str]:
    """Every test here runs on SQLite, on PostgreSQL without pgvector (vectors ranked in
    process) and on PostgreSQL with pgvector (ranked by the server)."""
    if request.param == "sqlite":
        yield f"sqlite+aiosqlite:///{data_dir / 'scholarstream.sqlite'}"
    elif request.param == "postgresql":
        yield request.getfixturevalue("postgres_url")
    else:
        with throwaway_postgres_database(request.getfixturevalue("pgvector_server_url")) as url:
            yield url


@pytest.fixture
def semantic_settings(db_settings: Settings) -> Settings:
    return db_settings.model_copy(
        update={"semantic": db_settings.semantic.model_copy(update={"enabled": True})}
    )


@pytest.fixture
async def runtime(semantic_settings: Settings) -> AsyncIterator[Runtime]:
    runtime = make_runtime(semantic_settings, embedder=ConceptEmbedder(CONCEPTS))
    yield runtime
    await runtime.close()


async def add(runtime: Runtime, owner: User, papers: Sequence[Paper]) -> None:
    """Adds records without starting the background build (as an older version did)."""
    await import_items(
        runtime.database, owner.id, iter(papers), file="test.json", format_name="json"
    )


async def titles(runtime: Runtime, owner_id: uuid.UUID, text: str) -> list[str]:
    page = await runtime.library.search(owner_id, LibraryQuery(text=text))
    return [item.record.title for item in page.items]


async def test_meaning_finds_a_record_that_shares_no_word_with_the_query(
    runtime: Runtime,
) -> None:
    owner = await new_user(runtime)
    await add(runtime, owner, PAPERS)
    assert await runtime.library.semantic.build(owner.id) == len(PAPERS)

    found = await titles(runtime, owner.id, "heart attack")

    # "Heart rate ..." shares a word; the infarction paper shares only the meaning.
    assert set(found) == {PAPERS[0].title, PAPERS[3].title}


async def test_search_works_by_words_while_vectors_are_missing_and_starts_building(
    runtime: Runtime,
) -> None:
    owner = await new_user(runtime)
    await add(runtime, owner, PAPERS)
    status = await runtime.library.semantic_status(owner.id)
    assert (status.available, status.embedded, status.total) == (True, 0, 4)

    assert await titles(runtime, owner.id, "malaria bed nets") == [PAPERS[1].title]

    await runtime.library.semantic.wait(owner.id)
    status = await runtime.library.semantic_status(owner.id)
    assert (status.embedded, status.building, status.complete) == (4, False, True)
    assert PAPERS[1].title in await titles(runtime, owner.id, "plasmodium")


async def test_import_builds_vectors_in_the_background_and_new_records_are_added(
    runtime: Runtime,
) -> None:
    owner = await new_user(runtime)
    await runtime.library.import_stream(owner.id, _ris(PAPERS[:2]), "two.ris")
    await runtime.library.semantic.wait(owner.id)
    assert (await runtime.library.semantic_status(owner.id)).embedded == 2

    await runtime.library.import_stream(owner.id, _ris(PAPERS[2:]), "two-more.ris")
    await runtime.library.semantic.wait(owner.id)
    status = await runtime.library.semantic_status(owner.id)
    assert (status.embedded, status.total) == (4, 4)
    assert await titles(runtime, owner.id, "insomnia") == [PAPERS[2].title]


async def test_vectors_are_kept_per_owner_and_deleted_with_their_record(
    runtime: Runtime,
) -> None:
    owner, other = await new_user(runtime), await new_user(runtime)
    await add(runtime, owner, PAPERS)
    await add(runtime, other, PAPERS[:1])
    await runtime.library.semantic.build(owner.id)

    assert (await runtime.library.semantic_status(other.id)).embedded == 0
    page = await runtime.library.search(owner.id, LibraryQuery(text="sleep"))
    await runtime.library.delete(owner.id, page.items[0].id)
    status = await runtime.library.semantic_status(owner.id)
    assert (status.embedded, status.total) == (3, 3)
    assert PAPERS[2].title not in await titles(runtime, owner.id, "insomnia sleep")


async def test_filters_apply_to_records_found_by_meaning(runtime: Runtime) -> None:
    owner = await new_user(runtime)
    dated = [
        p.model_copy(update={"year": year})
        for p, year in zip(PAPERS, (2010, 2020, 2021, 2022), strict=True)
    ]
    await add(runtime, owner, dated)
    await runtime.library.semantic.build(owner.id)

    page = await runtime.library.search(
        owner.id, LibraryQuery(text="myocardial infarction", year_from=2015)
    )
    assert PAPERS[0].title not in [item.record.title for item in page.items]


async def test_a_model_that_fails_leaves_search_by_words_and_says_so(
    semantic_settings: Settings,
) -> None:
    runtime = make_runtime(semantic_settings, embedder=BrokenEmbedder(CONCEPTS))
    try:
        owner = await new_user(runtime)
        await add(runtime, owner, PAPERS)
        assert await runtime.library.semantic.build(owner.id) == 0

        status = await runtime.library.semantic_status(owner.id)
        assert not status.available
        assert status.problem is not None and "words only" in status.problem
        assert await titles(runtime, owner.id, "bed nets") == [PAPERS[1].title]
    finally:
        await runtime.close()


async def test_semantic_search_turned_off_ranks_by_words_alone(db_settings: Settings) -> None:
    runtime = make_runtime(db_settings, embedder=ConceptEmbedder(CONCEPTS))
    try:
        owner = await new_user(runtime)
        await add(runtime, owner, PAPERS)
        status = await runtime.library.semantic_status(owner.id)
        assert not status.available and status.problem is not None
        assert await titles(runtime, owner.id, "myocardial infarction") == [PAPERS[0].title]
        assert await titles(runtime, owner.id, "heart attack") == [PAPERS[3].title]
    finally:
        await runtime.close()


def _ris(papers: Sequence[Paper]) -> io.BytesIO:
    lines: list[str] = []
    for p in papers:
        lines += ["TY  - JOUR", f"TI  - {p.title}", f"AB  - {p.abstract or ''}", "ER  - ", ""]
    return io.BytesIO("\n".join(lines).encode())


def test_a_long_abstract_is_read_in_passages_of_whole_sentences_under_its_title() -> None:
    sentence = "Participants were followed for ten years in twelve centres. "  # 9 words
    passages = embedding_passages({"title": "Cohort", "abstract": sentence * 25})
    assert len(passages) == 3
    assert all(p.startswith("Cohort. Participants") and p.endswith("centres.") for p in passages)
    assert all(len(p.split()) <= 91 for p in passages)
    assert embedding_passages({"title": "Only a title"}) == ["Only a title"]
    assert embedding_passages({"title": "Trial", "summary": "Short."}) == ["Trial. Short."]


async def test_a_record_is_as_close_as_its_closest_passage(runtime: Runtime) -> None:
    owner = await new_user(runtime)
    filler = "Participants were followed for ten years in twelve centres. " * 12
    long_one = paper("A cohort study", filler + "Insomnia was the main finding.")
    await add(runtime, owner, [long_one, *PAPERS[:2]])
    await runtime.library.semantic.build(owner.id)

    # Diluted in one vector of the whole abstract, the last sentence would be lost.
    assert (await titles(runtime, owner.id, "sleep"))[0] == "A cohort study"


async def test_status_says_where_vectors_are_ranked(
    runtime: Runtime, request: pytest.FixtureRequest
) -> None:
    owner = await new_user(runtime)
    await runtime.library.start()
    status = await runtime.library.semantic_status(owner.id)
    backend = request.node.callspec.params["database_url"]
    if backend == "pgvector":
        assert (status.ranking, status.ranking_note) == (PGVECTOR, None)
    elif backend == "postgresql":
        # The machine's own server has no pgvector: ranked here, and the status says why.
        assert status.ranking == IN_PROCESS
        assert status.ranking_note is not None and "no pgvector" in status.ranking_note
    else:
        assert (status.ranking, status.ranking_note) == (IN_PROCESS, None)


async def test_vectors_saved_by_another_process_are_ranked_too(
    semantic_settings: Settings,
) -> None:
    """A CLI import embeds in its own process; the server's next search ranks those vectors
    (with pgvector, after filling their column)."""
    importer = make_runtime(semantic_settings, embedder=ConceptEmbedder(CONCEPTS))
    server = make_runtime(semantic_settings, embedder=ConceptEmbedder(CONCEPTS))
    try:
        owner = await new_user(server)
        await server.library.start()
        await add(importer, owner, PAPERS)
        assert await importer.library.semantic.build(owner.id) == len(PAPERS)
        assert set(await titles(server, owner.id, "heart attack")) == {
            PAPERS[0].title,
            PAPERS[3].title,
        }
    finally:
        await importer.close()
        await server.close()


async def test_many_records_rank_the_same_whichever_backend(runtime: Runtime) -> None:
    """More records than the depth looked up by meaning: the order is that of the exact
    in-process ranking (checked on every backend against the same expectation)."""
    owner = await new_user(runtime)
    topics = ["malaria", "insomnia", "statins", "heart"]
    many = [
        paper(f"{topics[i % 4].title()} study {i}", f"Report {i} on {topics[i % 4]}.")
        for i in range(160)
    ]
    await add(runtime, owner, many)
    await runtime.library.semantic.build(owner.id)

    page = await runtime.library.search(owner.id, LibraryQuery(text="plasmodium", limit=50))
    assert page.total == 40
    assert {item.record.title.split()[0] for item in page.items} == {"Malaria"}


async def test_a_common_word_matching_most_of_a_large_library_loses_no_record(
    runtime: Runtime,
) -> None:
    """More word matches than pgvector scores exactly (about a thousand): the rest keep
    their place below, and every record can still be paged to, on every backend."""
    owner = await new_user(runtime)
    many = [
        paper(f"Cardiac study {i}", "Heart attack outcomes.")
        if i % 40 == 0
        else paper(f"Survey study {i}", f"Report {i} on shift work.")
        for i in range(1100)
    ]
    await add(runtime, owner, many)
    await runtime.library.semantic.build(owner.id)

    seen: list[str] = []
    for offset in range(0, 1100, 100):
        page = await runtime.library.search(
            owner.id, LibraryQuery(text="myocardial study", offset=offset, limit=100)
        )
        assert page.total == 1100
        seen.extend(item.record.title for item in page.items)
    assert len(set(seen)) == 1100
    assert {title.split()[0] for title in seen[:28]} == {"Cardiac"}


# -- records related by meaning: listed after those with the words, and only when close --

RELATED_CONCEPTS = (
    ("taurine", "aminosulfonic"),
    ("heart", "hearts", "cardiac"),
    ("dog", "dogs", "canine", "spaniel", "spaniels"),
)
WITH_WORDS = [
    paper("Taurine deficiency"),
    paper("Taurine in dogs"),
    paper("Plasma taurine in spaniels"),
    paper("Taurine supplements"),
]
CLOSE = paper("Aminosulfonic acid supplements")  # as close as the typical word match
LOOSE = paper("Aminosulfonic acid in canine hearts")  # related, less than they are
UNRELATED = paper("Hip dysplasia in retrievers")


async def test_records_without_the_words_come_after_and_only_when_as_close_as_those_with_them(
    semantic_settings: Settings,
) -> None:
    runtime = make_runtime(semantic_settings, embedder=ConceptEmbedder(RELATED_CONCEPTS))
    try:
        owner = await new_user(runtime)
        await add(runtime, owner, [LOOSE, *WITH_WORDS, UNRELATED, CLOSE])
        await runtime.library.semantic.build(owner.id)

        page = await runtime.library.search(owner.id, LibraryQuery(text="taurine"))
        assert (page.total, page.matching, page.related) == (5, 4, 1)
        assert {i.record.title for i in page.items[:4]} == {p.title for p in WITH_WORDS}
        assert [i.match for i in page.items] == ["words"] * 4 + ["meaning"]
        assert page.items[4].record.title == CLOSE.title

        words_only = await runtime.library.search(
            owner.id, LibraryQuery(text="taurine", related=False)
        )
        assert (words_only.total, words_only.related) == (4, 0)
        facets = await runtime.library.facets(owner.id, LibraryQuery(text="taurine"))
        assert facets.total == 5

        # An export of the search takes the records with the words unless asked for more.
        assert (
            await runtime.library.prepare_export(
                owner.id, query=LibraryQuery(text="taurine", related=False)
            )
        ).count == 4
        assert (
            await runtime.library.prepare_export(
                owner.id, query=LibraryQuery(text="taurine", related=True)
            )
        ).count == 5
    finally:
        await runtime.close()


async def test_with_no_record_having_the_words_the_closest_are_listed_as_related(
    semantic_settings: Settings,
) -> None:
    runtime = make_runtime(semantic_settings, embedder=ConceptEmbedder(RELATED_CONCEPTS))
    try:
        owner = await new_user(runtime)
        await add(runtime, owner, [CLOSE, LOOSE, UNRELATED])
        await runtime.library.semantic.build(owner.id)

        page = await runtime.library.search(owner.id, LibraryQuery(text="taurine"))
        assert (page.matching, page.related) == (0, 2)
        assert [i.record.title for i in page.items] == [CLOSE.title, LOOSE.title]
        assert {i.match for i in page.items} == {"meaning"}
        with pytest.raises(NothingMatchedError) as caught:
            await runtime.library.prepare_export(
                owner.id, query=LibraryQuery(text="taurine", related=False)
            )
        assert caught.value.related == 2
        assert "2 records are related by meaning" in (caught.value.hint or "")
    finally:
        await runtime.close()
