"""Duplicates in the library: merged on import (across files and inside one), recorded,
split again (and remembered), found on demand; works the deduplicator keeps apart stay
apart. On every backend."""

from __future__ import annotations

from pathlib import Path

import pytest

from scholarstream.db.tables import User
from scholarstream.errors import ConflictError, NotFoundError
from scholarstream.papers import Paper
from scholarstream.runtime import Runtime
from scholarstream.sources.library import LibraryItem, LibraryQuery
from tests.library.copies import BIBTEX, CSV, RIS


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


async def all_items(runtime: Runtime, owner: User) -> list[LibraryItem]:
    return (await runtime.library.search(owner.id, LibraryQuery(limit=500))).items


def by_doi(items: list[LibraryItem], doi: str) -> list[LibraryItem]:
    return [item for item in items if item.record.ids.doi == doi]


async def test_ris_then_bibtex_of_the_same_records_merges_all(
    runtime: Runtime, owner: User, tmp_path: Path
) -> None:
    first = await runtime.library.import_file(owner.id, write(tmp_path, "zotero.ris", RIS))
    assert (first.imported, first.merged, first.in_file_duplicates) == (4, 0, 0)

    second = await runtime.library.import_file(owner.id, write(tmp_path, "zotero.bib", BIBTEX))
    assert (second.imported, second.merged, second.already_present) == (0, 4, 0)
    assert second.in_file_duplicates == 0 and second.duplicates == 4

    items = await all_items(runtime, owner)
    assert len(items) == 4
    (empagliflozin,) = by_doi(items, "10.1056/nejmoa1504720")
    record = empagliflozin.record
    assert isinstance(record, Paper)
    # Every identifier, every file, the richest fields.
    assert record.ids.pmid == "26378978"
    assert len(record.authors) == 4
    assert record.abstract is not None and "sodium-glucose" in record.abstract
    assert empagliflozin.source_file == "zotero.ris"
    assert empagliflozin.merged_from == ["zotero.bib"]

    merges = await runtime.library.merges(owner.id)
    assert merges.total == 4
    evidence = {m.absorbed.title.lower(): m.evidence for m in merges.items}
    assert evidence["canagliflozin and cardiovascular and renal events in type 2 diabetes"] == (
        "same DOI"
    )
    assert all(m.origin == "import" for m in merges.items)

    # The same files again: exact copies, nothing merged twice.
    again = await runtime.library.import_file(owner.id, tmp_path / "zotero.bib")
    assert (again.imported, again.merged, again.already_present) == (0, 0, 4)


async def test_csv_sharing_dois_is_merged_and_counted(
    runtime: Runtime, owner: User, tmp_path: Path
) -> None:
    await runtime.library.import_file(owner.id, write(tmp_path, "zotero.ris", RIS))
    report = await runtime.library.import_file(owner.id, write(tmp_path, "covidence.csv", CSV))
    assert (report.imported, report.merged, report.already_present) == (1, 2, 0)
    items = await all_items(runtime, owner)
    assert len(items) == 5
    assert len(by_doi(items, "10.1056/nejmoa1607141")) == 1  # Semaglutide is another trial


async def test_copies_inside_one_file_on_an_empty_library(
    runtime: Runtime, owner: User, tmp_path: Path
) -> None:
    records = RIS.split("ER  -")
    again = records[0].replace(
        "Empagliflozin, Cardiovascular Outcomes, and Mortality in Type 2 Diabetes",
        "EMPAGLIFLOZIN, CARDIOVASCULAR OUTCOMES, AND MORTALITY IN TYPE 2 DIABETES",
    )
    text = "ER  -".join([records[0], records[1], records[0], again]) + "ER  -\n"
    report = await runtime.library.import_file(owner.id, write(tmp_path, "twice.ris", text))

    assert report.imported == 2
    assert report.in_file_duplicates == 2
    assert (report.merged, report.already_present) == (0, 0)
    merges = await runtime.library.merges(owner.id)
    assert [m.origin for m in merges.items] == ["file"]  # the exact copy adds nothing to undo


async def test_split_restores_both_and_is_remembered(
    runtime: Runtime, owner: User, tmp_path: Path
) -> None:
    await runtime.library.import_file(owner.id, write(tmp_path, "zotero.ris", RIS))
    await runtime.library.import_file(owner.id, write(tmp_path, "zotero.bib", BIBTEX))
    merges = await runtime.library.merges(owner.id)
    (merge,) = [m for m in merges.items if m.absorbed.identifiers.get("pmid") == "26378978"]

    result = await runtime.library.split(owner.id, merge.id)

    assert result.restored.id == merge.absorbed.id
    assert result.restored.source_file == "zotero.bib"
    restored = result.restored.record
    assert isinstance(restored, Paper) and restored.ids.pmid == "26378978"
    kept = result.kept.record
    assert isinstance(kept, Paper)
    assert kept.ids.pmid is None and len(kept.authors) == 3  # what the merge added is gone
    assert result.kept.merged_from == []
    assert len(await all_items(runtime, owner)) == 5
    assert (await runtime.library.merges(owner.id)).total == 3

    with pytest.raises(ConflictError):
        await runtime.library.split(owner.id, merge.id)

    # Remembered: finding duplicates and importing a third copy never joins the two again.
    scan = await runtime.library.find_duplicates(owner.id)
    assert scan.merged == 0
    third = await runtime.library.import_file(owner.id, write(tmp_path, "covidence.csv", CSV))
    assert third.merged == 2
    items = await all_items(runtime, owner)
    assert len([i for i in items if i.record.title.lower().startswith("empagliflozin")]) == 2


async def test_find_duplicates_merges_copies_already_in_the_library(
    runtime: Runtime, owner: User, tmp_path: Path
) -> None:
    # A PubMed record without DOI or journal: too little to merge with the RIS record...
    bare = """TY  - JOUR
AU  - Marso, Steven P.
AU  - Daniels, Gilbert H.
TI  - Liraglutide and cardiovascular outcomes in type 2 diabetes.
PY  - 2016
AN  - 27295427
DB  - MEDLINE
ER  -
"""
    await runtime.library.import_file(owner.id, write(tmp_path, "zotero.ris", RIS))
    first = await runtime.library.import_file(owner.id, write(tmp_path, "pubmed.ris", bare))
    assert first.imported == 1
    # ...until a record with both identifiers gives the RIS record the PMID as well.
    both = """TY  - JOUR
AU  - Marso, S. P.
TI  - Liraglutide and Cardiovascular Outcomes in Type 2 Diabetes
T2  - N Engl J Med
PY  - 2016
VL  - 375
SP  - 311
DO  - 10.1056/NEJMoa1603827
AN  - 27295427
DB  - MEDLINE
ER  -
"""
    second = await runtime.library.import_file(owner.id, write(tmp_path, "embase.ris", both))
    assert second.merged == 1
    assert len(await all_items(runtime, owner)) == 5

    scan = await runtime.library.find_duplicates(owner.id)

    assert (scan.checked, scan.groups, scan.merged) == (5, 1, 1)
    (made,) = scan.merges
    assert made.origin == "scan" and made.evidence == "same PMID"
    items = await all_items(runtime, owner)
    assert len(items) == 4
    (liraglutide,) = by_doi(items, "10.1056/nejmoa1603827")
    assert set(liraglutide.merged_from) == {"embase.ris", "pubmed.ris"}
    assert (await runtime.library.find_duplicates(owner.id)).merged == 0

    await runtime.library.split(owner.id, made.id)
    assert len(await all_items(runtime, owner)) == 5


async def test_works_the_deduplicator_keeps_apart_stay_apart(
    runtime: Runtime, owner: User, tmp_path: Path
) -> None:
    notices = """TY  - JOUR
AU  - Marso, Steven P.
TI  - Liraglutide and Cardiovascular Outcomes in Type 2 Diabetes. Correction
T2  - New England Journal of Medicine
PY  - 2017
VL  - 377
SP  - 839
DO  - 10.1056/NEJMx170017
ER  -

TY  - JOUR
AU  - Marso, Steven P.
AU  - Daniels, Gilbert H.
TI  - Liraglutide and Cardiovascular Outcomes in Type 2 Diabetes
T2  - Diabetes
PY  - 2016
VL  - 65
SP  - A1
DO  - 10.2337/db16-0001
ER  -
"""
    await runtime.library.import_file(owner.id, write(tmp_path, "zotero.ris", RIS))
    report = await runtime.library.import_file(owner.id, write(tmp_path, "notices.ris", notices))
    assert (report.imported, report.merged) == (2, 0)
    assert (await runtime.library.find_duplicates(owner.id)).merged == 0
    assert len(await all_items(runtime, owner)) == 6


async def test_deleting_a_record_forgets_its_merges(
    runtime: Runtime, owner: User, tmp_path: Path
) -> None:
    await runtime.library.import_file(owner.id, write(tmp_path, "zotero.ris", RIS))
    await runtime.library.import_file(owner.id, write(tmp_path, "zotero.bib", BIBTEX))
    (canagliflozin,) = by_doi(await all_items(runtime, owner), "10.1056/nejmoa1611925")
    await runtime.library.delete(owner.id, canagliflozin.id)
    assert (await runtime.library.merges(owner.id)).total == 3

    again = await runtime.library.import_file(owner.id, tmp_path / "zotero.bib")
    assert (again.imported, again.already_present) == (1, 3)


async def test_merges_of_another_owner_are_not_found(
    runtime: Runtime, owner: User, tmp_path: Path
) -> None:
    from tests.helpers import new_user

    await runtime.library.import_file(owner.id, write(tmp_path, "zotero.ris", RIS))
    await runtime.library.import_file(owner.id, write(tmp_path, "zotero.bib", BIBTEX))
    merge = (await runtime.library.merges(owner.id)).items[0]
    other = await new_user(runtime)
    assert (await runtime.library.merges(other.id)).total == 0
    with pytest.raises(NotFoundError):
        await runtime.library.split(other.id, merge.id)
