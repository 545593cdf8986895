"""Collections, tags and notes of the library through its public API, on every backend:
a record in many collections, collections made from a selection or from a search, tags
several at once, one note per record, each a filter with counts, each the owner's alone,
and kept through merges and splits."""

from __future__ import annotations

import io
import uuid
from pathlib import Path

import pytest

from scholarstream.db.tables import User
from scholarstream.errors import ConflictError, InvalidInputError, NotFoundError
from scholarstream.papers import Paper
from scholarstream.runtime import Runtime
from scholarstream.sources.library import LibraryItem, LibraryQuery, NothingMatchedError
from tests.helpers import new_user
from tests.library.copies import RIS

PAPERS = [
    Paper(
        title="Taurine deficiency in dogs", year=2021, record_id="a", publication_types=["Review"]
    ),
    Paper(title="Plasma taurine in spaniels", year=2019, record_id="b"),
    Paper(title="Taurine and the feline heart", year=2015, record_id="c"),
    Paper(title="Hip dysplasia in retrievers", year=2020, record_id="d"),
    Paper(title="Otitis externa in cocker spaniels", year=2018, record_id="e"),
]


async def add(runtime: Runtime, owner: User) -> dict[str, uuid.UUID]:
    """The papers added; their ids by record id."""
    report = await runtime.library.save_records(owner.id, PAPERS, origin="test")
    assert report.imported == len(PAPERS)
    page = await runtime.library.search(owner.id, LibraryQuery(limit=50))
    return {item.record.record_id or "": item.id for item in page.items}


async def titles(runtime: Runtime, owner: User, query: LibraryQuery) -> set[str]:
    page = await runtime.library.search(owner.id, query.model_copy(update={"limit": 50}))
    return {item.record.title for item in page.items}


async def test_a_collection_from_a_selection_then_from_a_search(
    runtime: Runtime, owner: User
) -> None:
    ids = await add(runtime, owner)
    labels = runtime.library.labels

    made = await labels.create_collection(
        owner.id, "  Included   studies ", ids=[ids["a"], ids["d"]]
    )
    assert (made.collection.name, made.added, made.collection.records) == ("Included studies", 2, 2)
    included = made.collection.id

    # Every record with the words "taurine" (not those related by meaning), into the same one:
    # the one already there is counted, not added twice.
    more = await labels.add_to_collection(owner.id, included, query=LibraryQuery(text="taurine"))
    assert (more.added, more.already, more.collection.records) == (2, 1, 4)

    # A record in many collections.
    other = await labels.create_collection(owner.id, "Cats", ids=[ids["c"]])
    item = await runtime.library.get(owner.id, ids["c"])
    assert [c.name for c in item.collections] == ["Cats", "Included studies"]

    assert await titles(runtime, owner, LibraryQuery(collection=included)) == {
        PAPERS[0].title,
        PAPERS[1].title,
        PAPERS[2].title,
        PAPERS[3].title,
    }
    assert await titles(
        runtime, owner, LibraryQuery(text="taurine", collection=other.collection.id)
    ) == {PAPERS[2].title}
    # The ids a screening project started from the collection reads, in the order added.
    listed = await runtime.library.collection_record_ids(owner.id, included)
    assert listed[:2] == [ids["a"], ids["d"]] and set(listed) == {ids[k] for k in "abcd"}

    listing = await labels.collections(owner.id)
    assert [(c.name, c.records) for c in listing] == [("Cats", 1), ("Included studies", 4)]

    removed = await labels.remove_from_collection(owner.id, included, [ids["d"], ids["e"]])
    assert (removed.removed, removed.collection.records) == (1, 3)
    assert (await runtime.library.search(owner.id, LibraryQuery())).total == len(PAPERS)


async def test_rename_and_delete_never_touch_the_records(runtime: Runtime, owner: User) -> None:
    ids = await add(runtime, owner)
    labels = runtime.library.labels
    made = (await labels.create_collection(owner.id, "Screen", ids=list(ids.values()))).collection

    renamed = await labels.rename_collection(owner.id, made.id, "Screened")
    assert (renamed.name, renamed.records) == ("Screened", 5)
    with pytest.raises(ConflictError, match="already have a collection named “SCREENED”"):
        await labels.create_collection(owner.id, "SCREENED")
    with pytest.raises(InvalidInputError, match="needs a name"):
        await labels.rename_collection(owner.id, made.id, "   ")
    assert (await labels.find_collection(owner.id, "screened")).id == made.id

    gone = await labels.delete_collection(owner.id, made.id)
    assert gone.records == 5
    assert await labels.collections(owner.id) == []
    assert (await runtime.library.search(owner.id, LibraryQuery())).total == 5
    with pytest.raises(NotFoundError):
        await runtime.library.search(owner.id, LibraryQuery(collection=made.id))
    with pytest.raises(NotFoundError, match="no collection named “Screened”"):
        await labels.find_collection(owner.id, "Screened")


async def test_tags_several_at_once_case_kept_and_filtered(runtime: Runtime, owner: User) -> None:
    ids = await add(runtime, owner)
    labels = runtime.library.labels

    change = await labels.tag(owner.id, query=LibraryQuery(text="taurine"), add=["Include, RCT"])
    assert (change.records, change.added, change.removed) == (3, 6, 0)
    # The same tag in another case is the same tag, spelled as first given.
    again = await labels.tag(owner.id, ids=[ids["a"], ids["d"]], add=["include"])
    assert (again.records, again.added) == (2, 1)
    assert [(t.value, t.count) for t in await labels.tags(owner.id)] == [
        ("Include", 4),
        ("RCT", 3),
    ]
    assert await titles(runtime, owner, LibraryQuery(tag="include", year_from=2020)) == {
        PAPERS[0].title,
        PAPERS[3].title,
    }
    item = await runtime.library.get(owner.id, ids["a"])
    assert item.tags == ["Include", "RCT"]

    removed = await labels.tag(owner.id, ids=[ids["a"], ids["b"]], remove=["rct"])
    assert (removed.removed, removed.added) == (2, 0)
    assert (await runtime.library.get(owner.id, ids["a"])).tags == ["Include"]

    with pytest.raises(
        InvalidInputError,
        match=r"No record in your library has the tag “nope”\. Your tags: Include \(4\), RCT \(1\)",
    ):
        await runtime.library.search(owner.id, LibraryQuery(tag="nope"))
    with pytest.raises(InvalidInputError, match="No tag given"):
        await labels.tag(owner.id, ids=[ids["a"]], add=[" , "])


async def test_a_note_per_record_shown_and_filtered(runtime: Runtime, owner: User) -> None:
    ids = await add(runtime, owner)
    labels = runtime.library.labels

    item = await labels.set_note(owner.id, ids["b"], "  Check the breed numbers.  \n\n")
    assert item.note == "Check the breed numbers."
    assert (await runtime.library.find(owner.id, "b")).note == "Check the breed numbers."
    assert await titles(runtime, owner, LibraryQuery(has_note=True)) == {PAPERS[1].title}
    assert len(await titles(runtime, owner, LibraryQuery(has_note=False))) == 4
    page = await runtime.library.search(owner.id, LibraryQuery(text="spaniels"))
    assert {i.record.title: i.note for i in page.items}[
        PAPERS[1].title
    ] == "Check the breed numbers."

    assert (await labels.set_note(owner.id, ids["b"], "")).note is None
    assert await titles(runtime, owner, LibraryQuery(has_note=True)) == set()
    with pytest.raises(InvalidInputError, match="20,000 characters"):
        await labels.set_note(owner.id, ids["b"], "x" * 20_001)


async def test_facets_count_collections_tags_and_notes_of_what_is_listed(
    runtime: Runtime, owner: User
) -> None:
    ids = await add(runtime, owner)
    labels = runtime.library.labels
    included = (
        await labels.create_collection(owner.id, "Included", ids=[ids["a"], ids["b"], ids["d"]])
    ).collection
    await labels.tag(owner.id, ids=[ids["a"], ids["c"]], add=["cardiac"])
    await labels.set_note(owner.id, ids["a"], "Key paper.")

    facets = await runtime.library.facets(owner.id, LibraryQuery(text="taurine"))
    assert facets.total == 3
    assert [(c.name, c.count) for c in facets.collections] == [("Included", 2)]
    assert [(t.value, t.count) for t in facets.tags] == [("cardiac", 2)]
    assert facets.with_note == 1
    assert [(t.value, t.count) for t in facets.publication_types] == [("review", 1)]

    narrowed = await runtime.library.facets(owner.id, LibraryQuery(collection=included.id))
    assert narrowed.total == 3
    assert [(t.value, t.count) for t in narrowed.tags] == [("cardiac", 1)]


async def test_actions_on_a_search_that_lists_nothing_say_so(runtime: Runtime, owner: User) -> None:
    await add(runtime, owner)
    labels = runtime.library.labels
    with pytest.raises(NothingMatchedError) as caught:
        await labels.create_collection(owner.id, "Empty", query=LibraryQuery(text="zebrafish"))
    assert caught.value.message == "Nothing matched the words “zebrafish”: nothing was saved."
    assert await labels.collections(owner.id) == []  # nothing made either
    made = (await labels.create_collection(owner.id, "Later")).collection
    with pytest.raises(NothingMatchedError, match="added to the collection"):
        await labels.add_to_collection(owner.id, made.id, query=LibraryQuery(year_from=2030))


async def test_every_label_is_the_owners_alone(runtime: Runtime, owner: User) -> None:
    ids = await add(runtime, owner)
    mine = (
        await runtime.library.labels.create_collection(owner.id, "Mine", ids=[ids["a"]])
    ).collection
    await runtime.library.labels.tag(owner.id, ids=[ids["a"]], add=["secret"])
    await runtime.library.labels.set_note(owner.id, ids["a"], "private")
    other = await new_user(runtime)
    theirs = (await runtime.library.labels.create_collection(other.id, "Mine")).collection

    assert [c.name for c in await runtime.library.labels.collections(other.id)] == ["Mine"]
    assert await runtime.library.labels.tags(other.id) == []
    with pytest.raises(NotFoundError):
        await runtime.library.labels.add_to_collection(other.id, mine.id, ids=[ids["b"]])
    with pytest.raises(NotFoundError):
        await runtime.library.search(other.id, LibraryQuery(collection=mine.id))
    with pytest.raises(NotFoundError):
        await runtime.library.labels.set_note(other.id, ids["a"], "mine now")
    with pytest.raises(NotFoundError):
        await runtime.library.labels.rename_collection(other.id, mine.id, "Taken")
    # Another owner's record ids are refused as ids that exist nowhere are: nothing added.
    with pytest.raises(NotFoundError, match="not in your library"):
        await runtime.library.labels.add_to_collection(other.id, theirs.id, ids=[ids["a"]])
    with pytest.raises(NotFoundError, match="not in your library"):
        await runtime.library.labels.tag(other.id, ids=[ids["a"]], add=["x"])
    assert (await runtime.library.labels.collection(other.id, theirs.id)).records == 0
    assert await runtime.library.labels.tags(other.id) == []
    item = await runtime.library.get(owner.id, ids["a"])
    assert (item.note, item.tags, [c.name for c in item.collections]) == (
        "private",
        ["secret"],
        ["Mine"],
    )


async def test_deleting_a_record_takes_it_out_of_its_collections(
    runtime: Runtime, owner: User
) -> None:
    ids = await add(runtime, owner)
    made = (
        await runtime.library.labels.create_collection(owner.id, "Two", ids=[ids["a"], ids["b"]])
    ).collection
    await runtime.library.labels.tag(owner.id, ids=[ids["a"]], add=["gone"])
    await runtime.library.delete(owner.id, ids["a"])
    assert (await runtime.library.labels.collection(owner.id, made.id)).records == 1
    assert await runtime.library.labels.tags(owner.id) == []


async def test_merges_keep_the_labels_and_splits_give_them_to_both(
    runtime: Runtime, owner: User, tmp_path: Path
) -> None:
    bare = (
        "TY  - JOUR\nAU  - Marso, Steven P.\nTI  - Liraglutide and cardiovascular outcomes in "
        "type 2 diabetes.\nPY  - 2016\nAN  - 27295427\nDB  - MEDLINE\nER  -\n"
    )
    both = (
        "TY  - JOUR\nAU  - Marso, S. P.\nTI  - Liraglutide and Cardiovascular Outcomes in Type 2 "
        "Diabetes\nT2  - N Engl J Med\nPY  - 2016\nVL  - 375\nSP  - 311\n"
        "DO  - 10.1056/NEJMoa1603827\nAN  - 27295427\nDB  - MEDLINE\nER  -\n"
    )
    ris = tmp_path / "zotero.ris"
    ris.write_text(RIS, encoding="utf-8")
    await runtime.library.import_file(owner.id, ris)
    await runtime.library.import_stream(owner.id, io.BytesIO(bare.encode()), "pubmed.ris")
    await runtime.library.import_stream(owner.id, io.BytesIO(both.encode()), "embase.ris")
    pubmed = await runtime.library.find(owner.id, "PMID:27295427")
    copies = [
        item
        for item in (await runtime.library.search(owner.id, LibraryQuery(text="liraglutide"))).items
        if item.record.title.lower().startswith("liraglutide")
    ]
    assert len(copies) == 2
    (bare_copy,) = [item for item in copies if item.source_file == "pubmed.ris"]
    labels = runtime.library.labels
    await labels.create_collection(owner.id, "GLP-1", ids=[bare_copy.id])
    await labels.tag(owner.id, ids=[bare_copy.id], add=["cardio"])
    await labels.set_note(owner.id, bare_copy.id, "From the PubMed search.")
    assert pubmed.id in {c.id for c in copies}

    scan = await runtime.library.find_duplicates(owner.id)
    (merge,) = scan.merges
    kept = await runtime.library.get(owner.id, merge.kept.id)
    assert [c.name for c in kept.collections] == ["GLP-1"]
    assert kept.tags == ["cardio"] and kept.note == "From the PubMed search."

    await runtime.library.split(owner.id, merge.id)
    for record_id in (merge.kept.id, merge.absorbed.id):
        item: LibraryItem = await runtime.library.get(owner.id, record_id)
        assert [c.name for c in item.collections] == ["GLP-1"] and item.tags == ["cardio"]
