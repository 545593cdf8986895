"""JSON: lossless for papers and trials, arrays streamed, JSON Lines, the ``records``
wrapper, invalid items and broken syntax."""

from __future__ import annotations

import datetime as dt
import io
import json
from collections.abc import Iterator

import pytest

from scholarstream.errors import InvalidInputError
from scholarstream.papers import (
    Author,
    Identifiers,
    Intervention,
    Link,
    Outcome,
    Paper,
    Provenance,
    Retraction,
    Trial,
)
from scholarstream.papers.formats import RecordProblem, read_json, write_json

PAPER = Paper(
    record_id="p1",
    ids=Identifiers(doi="10.1000/a", pmid="123", pmcid="PMC4", arxiv_id="1707.08567"),
    title="A paper with every field",
    abstract="One.\nTwo.",
    authors=[
        Author(
            name="Smith, Ann",
            family="Smith",
            given="Ann",
            orcid="0000-0002-1825-0097",
            affiliations=["Uni X", "Uni Y"],
        ),
        Author(name="WHO"),
    ],
    venue="J Things",
    volume="1",
    issue="2",
    pages="3-4",
    publisher="Pub",
    issn="1234-5678",
    language="eng",
    published=dt.date(2020, 1, 2),
    publication_types=["Journal Article"],
    mesh_terms=["Humans"],
    keywords=["k"],
    links=[Link(url="https://x.org/a.pdf", kind="pdf")],
    citation_count=3,
    retraction=Retraction(notice="Retracted", doi="10.1000/r", date=dt.date(2021, 5, 6)),
    provenance=[Provenance(source="pubmed", source_id="123")],
)
TRIAL = Trial(
    record_id="t1",
    ids=Identifiers(nct_id="NCT01234567"),
    title="A trial",
    official_title="An official trial title",
    summary="Summary.",
    status="COMPLETED",
    phases=["PHASE2", "PHASE3"],
    study_type="INTERVENTIONAL",
    conditions=["Asthma"],
    interventions=[Intervention(name="Drug A", type="DRUG")],
    sponsor="Sponsor",
    collaborators=["Collab"],
    enrollment=120,
    start_date=dt.date(2018, 1, 1),
    primary_completion_date=dt.date(2019, 1, 1),
    completion_date=dt.date(2019, 6, 1),
    first_posted=dt.date(2017, 12, 1),
    last_updated=dt.date(2020, 2, 2),
    primary_outcomes=[Outcome(measure="FEV1", time_frame="12 weeks", description="Lung")],
    keywords=["asthma"],
    mesh_terms=["Asthma"],
    has_results=True,
    links=[Link(url="https://clinicaltrials.gov/study/NCT01234567", kind="source")],
    provenance=[Provenance(source="clinicaltrials", source_id="NCT01234567")],
)


def _read(data: bytes, name: str = "test.json") -> list[Paper | Trial | RecordProblem]:
    return list(read_json(io.BytesIO(data), name))


def test_papers_and_trials_round_trip_losslessly() -> None:
    out = io.StringIO()
    assert write_json([PAPER, TRIAL], out) == 2
    assert isinstance(json.loads(out.getvalue()), list)
    assert _read(out.getvalue().encode()) == [PAPER, TRIAL]


def test_writer_streams_one_record_at_a_time() -> None:
    out = io.StringIO()

    def records() -> Iterator[Paper]:
        yield PAPER
        assert '"A paper with every field"' in out.getvalue()  # written before the next
        yield PAPER.model_copy(update={"record_id": "p2"})

    assert write_json(records(), out) == 2
    assert [r.record_id for r in _read(out.getvalue().encode()) if isinstance(r, Paper)] == [
        "p1",
        "p2",
    ]
    empty = io.StringIO()
    assert write_json([], empty) == 0
    assert json.loads(empty.getvalue()) == []


def test_invalid_items_are_reported_with_the_field_and_the_rest_read() -> None:
    items = [
        {"title": "No kind given is a paper"},
        {"kind": "paper", "abstract": "no title"},
        {"kind": "paper", "title": "Bad year", "year": "nineteen"},
        ["not", "an", "object"],
        {"kind": "trial", "title": "A trial", "enrollment": 5},
    ]
    result = _read(b"\xef\xbb\xbf  \n" + json.dumps(items).encode(), "items.json")
    assert isinstance(result[0], Paper) and result[0].title == "No kind given is a paper"
    assert isinstance(result[4], Trial) and result[4].enrollment == 5
    problems = [item for item in result if isinstance(item, RecordProblem)]
    assert [(p.file, p.record_number) for p in problems] == [
        ("items.json", 2),
        ("items.json", 3),
        ("items.json", 4),
    ]
    assert problems[0].message.startswith("title is required")
    assert problems[1].message.startswith("year must be a whole number")
    assert "list, not an object" in problems[2].message


def test_broken_array_stops_where_it_breaks() -> None:
    good = json.dumps(PAPER.model_dump(mode="json"))
    data = f'[{good}, {good}, {{"title": "cut off'.encode()
    result = _read(data)
    assert result[:2] == [PAPER, PAPER]
    assert len(result) == 3 and isinstance(result[2], RecordProblem)
    assert result[2].record_number == 3
    assert "broken after record 2" in result[2].message


def test_json_lines_lose_only_the_broken_line() -> None:
    lines = [
        json.dumps({"title": "First"}),
        "",
        '{"title": "Broken",',
        json.dumps({"title": "Fourth", "year": 1999}),
        json.dumps({"kind": "trial", "title": "A trial"}),
    ]
    result = _read(("\n".join(lines) + "\n").encode(), "lines.jsonl")
    assert [type(item).__name__ for item in result] == ["Paper", "RecordProblem", "Paper", "Trial"]
    problem = result[1]
    assert isinstance(problem, RecordProblem)
    assert (problem.record_number, problem.line) == (2, 3)
    assert isinstance(result[2], Paper) and result[2].year == 1999


def test_records_wrapper_on_one_line_or_many() -> None:
    wrapper = {"exported": "2024-01-01", "records": [PAPER.model_dump(mode="json"), {"x": 1}]}
    for text in (json.dumps(wrapper), json.dumps(wrapper, indent=2)):
        result = _read(text.encode())
        assert result[0] == PAPER
        assert isinstance(result[1], RecordProblem) and result[1].record_number == 2
        assert "x is not a field of a record" in result[1].message


def test_what_is_not_json_records_is_refused() -> None:
    with pytest.raises(InvalidInputError):
        _read(b"title,year\nx,1\n")
    with pytest.raises(InvalidInputError) as caught:
        _read(b'{\n  "something": "else"\n}\n')
    assert "records" in caught.value.message
    assert _read(b"  \n") == []
