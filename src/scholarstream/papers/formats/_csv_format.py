"""CSV (and tab- or semicolon-separated) tables of records, one row each.

Every tool names its columns differently (Zotero "Publication Title", Covidence
"Published Year", Rayyan "pubmed_id", the deduplication benchmarks "ID"), so columns are
matched through an alias table: header names are compared lower case with spaces and
punctuation removed. The writer's own header (``COLUMNS``) is in that table too, so an
export reads back to the same values.

Cells are written safe to open in a spreadsheet (OWASP's CSV injection rule): a value
starting with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return, which Excel,
LibreOffice and Google Sheets would run as a formula, gets a leading single quote
(``spreadsheet_safe``); the reader takes that quote off again.
"""

from __future__ import annotations

import csv
import itertools
import re
from collections.abc import Iterable, Iterator, Sequence
from typing import BinaryIO, TextIO

from scholarstream.errors import InvalidInputError
from scholarstream.papers._identifiers import normalize_pmid
from scholarstream.papers._model import Paper, Trial
from scholarstream.papers.formats._base import (
    DEFAULT_LIMITS,
    FileFormat,
    ReadItem,
    RecordProblem,
    record_chars,
    register_format,
)
from scholarstream.papers.formats._fields import (
    Draft,
    as_paper,
    date_from_parts,
    decoded_lines,
    issn_text,
    join_pages,
    make_links,
    parse_date,
    people,
    person_text,
    sniff_text,
    valid_year,
)
from scholarstream.settings import LimitsSettings

COLUMNS: tuple[str, ...] = (
    "record_id",
    "title",
    "authors",
    "year",
    "published",
    "venue",
    "volume",
    "issue",
    "pages",
    "publisher",
    "issn",
    "language",
    "doi",
    "pmid",
    "pmcid",
    "arxiv_id",
    "openalex_id",
    "s2_id",
    "nct_id",
    "abstract",
    "keywords",
    "mesh_terms",
    "publication_types",
    "url",
    "citation_count",
)
"""The header the writer uses, in order."""

ALIASES: dict[str, tuple[str, ...]] = {
    "record_id": ("recordid", "id", "key", "covidence#", "recordnumber", "recnumber"),
    "title": ("title", "articletitle", "documenttitle", "primarytitle"),
    "authors": ("authors", "author", "au"),
    "year": ("year", "publicationyear", "publishedyear", "pubyear"),
    "published": ("published", "publicationdate", "date", "pubdate", "publisheddate"),
    "month": ("month", "publishedmonth"),
    "day": ("day",),
    "venue": (
        "venue",
        "journal",
        "publicationtitle",
        "sourcetitle",
        "journaltitle",
        "secondarytitle",
        "booktitle",
        "publicationname",
    ),
    "volume": ("volume",),
    "issue": ("issue", "number"),
    "pages": ("pages", "page", "pagination"),
    "start_page": ("pagestart", "startpage", "beginningpage"),
    "end_page": ("pageend", "endpage", "endingpage"),
    "publisher": ("publisher",),
    "issn": ("issn", "isbnissn", "issnisbn", "isbn", "eissn"),
    "language": ("language", "languageoforiginaldocument"),
    "doi": ("doi", "electronicresourcenumber"),
    "pmid": ("pmid", "pubmedid"),
    "accession": ("accessionnumber",),
    "pmcid": ("pmcid",),
    "arxiv_id": ("arxivid", "arxiv"),
    "openalex_id": ("openalexid", "openalex"),
    "s2_id": ("s2id", "semanticscholarid"),
    "nct_id": ("nctid",),
    "abstract": ("abstract", "abstractnote"),
    "keywords": ("keywords", "manualtags", "automatictags", "authorkeywords", "indexkeywords"),
    "mesh_terms": ("meshterms", "mesh", "meshheadings"),
    "publication_types": ("publicationtypes", "publicationtype", "documenttype"),
    "item_type": ("itemtype", "entrytype", "referencetype"),
    "url": ("url", "urls", "link"),
    "citation_count": ("citationcount", "citedby", "timescited"),
    "extra": ("extra",),
}
"""Field -> header aliases (normalised, see ``_normalise``), the first present wins;
``keywords`` takes every column it finds."""
_MERGED_FIELDS = frozenset({"keywords"})

ITEM_TYPES: dict[str, str | None] = {
    "journalarticle": "Journal Article",
    "article": "Journal Article",
    "magazinearticle": "Magazine Article",
    "newspaperarticle": "Newspaper Article",
    "book": "Book",
    "booksection": "Book Section",
    "incollection": "Book Section",
    "inbook": "Book Section",
    "conferencepaper": "Conference Paper",
    "inproceedings": "Conference Paper",
    "proceedings": "Conference Proceedings",
    "thesis": "Thesis",
    "phdthesis": "Thesis",
    "mastersthesis": "Thesis",
    "report": "Report",
    "techreport": "Report",
    "webpage": "Web Page",
    "preprint": "Preprint",
    "dataset": "Dataset",
    "manuscript": "Manuscript",
    "patent": "Patent",
    "computerprogram": "Computer Program",
    "document": None,
    "misc": None,
    "generic": None,
}
"""Item-type codes (Zotero ``journalArticle``, BibTeX ``article``, EndNote ``Generic``)
-> publication type; other values are kept as written."""

_EXTRA_IDS = {
    "pmid": re.compile(r"\bPMID:\s*(\d+)", re.IGNORECASE),
    "pmcid": re.compile(r"\bPMCID:\s*(PMC\d+)", re.IGNORECASE),
    "arxiv_id": re.compile(r"\barXiv:\s*(\S+)", re.IGNORECASE),
}
"""Zotero keeps identifiers it has no field for in "Extra" as ``PMID: 123`` lines."""
_DELIMITERS = (",", "\t", ";")
_HEADER_KEY = re.compile(r"[^a-z0-9#]")
_LIST_SEPARATOR = re.compile(r"\s*;\s*")
_TITLE_ALIASES = frozenset(ALIASES["title"])
_HEADER_SEARCH = 10
"""Lines looked at for the header row."""
_SEP_LINE = re.compile(r"^\ufeff?sep=.$")
"""Excel's delimiter line (``sep=;``), written before the header."""
_BARE_CR = re.compile(r"(?<=\r)(?!\n)")


FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
"""What makes a spreadsheet read a cell as a formula."""


def spreadsheet_safe(cell: str) -> str:
    """``cell`` as a spreadsheet shows it as text: a leading ``'`` when it would start a
    formula (titles come from live sources and imported files: never trusted)."""
    return f"'{cell}" if cell.startswith(FORMULA_STARTS) else cell


def _unquoted(cell: str) -> str:
    """The inverse of ``spreadsheet_safe``, for files we (or a careful tool) wrote."""
    return cell[1:] if cell[:1] == "'" and cell[1:2] and cell[1] in FORMULA_STARTS else cell


def _normalise(header: str) -> str:
    return _HEADER_KEY.sub("", header.strip().lstrip("\ufeff").lower())


def _delimiter(first_line: str) -> str:
    counts = {delimiter: first_line.count(delimiter) for delimiter in _DELIMITERS}
    return max(_DELIMITERS, key=lambda d: (counts[d], d == ","))


def sniff_csv(head: bytes) -> bool:
    """Conservative: the first line splits into columns and one of them is a title."""
    first = sniff_text(head).split("\n", 1)[0].strip("\r")
    delimiter = _delimiter(first)
    if delimiter not in first:
        return False
    try:
        header = next(csv.reader([first], delimiter=delimiter), [])
    except csv.Error:
        return False
    return any(_normalise(name) in _TITLE_ALIASES for name in header)


def _columns(header: Sequence[str]) -> dict[str, list[int]]:
    """Field -> the indexes of the columns holding it, in alias priority."""
    positions: dict[str, list[int]] = {}
    for index, name in enumerate(header):
        positions.setdefault(_normalise(name), []).append(index)
    return {
        field: [index for alias in aliases for index in positions.get(alias, [])]
        for field, aliases in ALIASES.items()
        if any(alias in positions for alias in aliases)
    }


class _Row:
    def __init__(self, cells: Sequence[str], columns: dict[str, list[int]]) -> None:
        self.cells = cells
        self.columns = columns

    def all(self, field: str) -> list[str]:
        cells = self.cells
        return [
            _unquoted(cells[i]).strip()
            for i in self.columns.get(field, [])
            if i < len(cells) and cells[i].strip()
        ]

    def get(self, field: str) -> str | None:
        values = self.all(field)
        return values[0] if values else None

    def items(self, field: str) -> list[str]:
        """A list column: ``;``-separated (every column for merged fields)."""
        values = self.all(field) if field in _MERGED_FIELDS else self.all(field)[:1]
        return [part for value in values for part in _LIST_SEPARATOR.split(value) if part]


def _csv_lines(stream: BinaryIO) -> Iterator[str]:
    """Decoded lines as ``csv`` wants them: a bare CR (old Mac line endings, or a
    damaged byte) ends a line too, instead of making ``csv`` refuse the row."""
    for line in decoded_lines(stream):
        if "\r" not in line[:-2]:
            yield line
        else:
            yield from (part for part in _BARE_CR.split(line) if part)


def _split_line(line: str, delimiter: str) -> list[str]:
    try:
        return next(csv.reader([line], delimiter=delimiter), [])
    except csv.Error:
        return []


def read_csv(
    stream: BinaryIO, filename: str, limits: LimitsSettings = DEFAULT_LIMITS
) -> Iterator[ReadItem]:
    """The header is the first line naming a title column among the first few (Excel's
    ``sep=;`` line, or a damaged line, may come before it); each row after it is a
    record."""
    # Python's csv module refuses a field over its own limit (131,072 characters by
    # default) with an English message of its own; raised to the record's bound, the
    # shared field check reports an over-long field in plain words instead.
    if csv.field_size_limit() < record_chars(limits):
        csv.field_size_limit(record_chars(limits))
    lines = _csv_lines(stream)
    seen: list[str] = []
    header: list[str] = []
    delimiter = ","
    for text in itertools.islice(lines, _HEADER_SEARCH):
        seen.append(text)
        delimiter = _delimiter(text)
        header = _split_line(text, delimiter)
        if "title" in _columns(header):
            break
    else:
        if not any(text.strip() for text in seen):
            return
        first = next(text for text in seen if text.strip())
        shown = ", ".join(name.strip() for name in _split_line(first, _delimiter(first))[:12])
        raise InvalidInputError(
            f"{filename} has no title column (its columns: {shown}).",
            hint="Name the column holding titles 'title' (or 'Title'), or export the file "
            "in another format.",
        )
    columns = _columns(header)
    number = 0
    before = [text for text in seen[:-1] if text.strip() and not _SEP_LINE.match(text.strip())]
    if before:
        number += 1
        yield RecordProblem(
            filename,
            number,
            f"{len(before)} line(s) before the header row (line {len(seen)}) are not part of "
            "the table; skipped",
            1,
        )
    reader = csv.reader(lines, delimiter=delimiter)
    width = len(header)
    while width and not header[width - 1].strip():
        width -= 1  # a trailing delimiter on the header line names no column
    while True:
        line = len(seen) + reader.line_num + 1
        try:
            cells = next(reader)
        except StopIteration:
            return
        except csv.Error as exc:
            number += 1
            yield RecordProblem(filename, number, f"the row cannot be read ({exc}); skipped", line)
            continue
        if not any(cell.strip() for cell in cells):
            continue
        number += 1
        problem = _misshapen(cells, width)
        if problem is not None:
            yield RecordProblem(filename, number, problem, line)
            continue
        yield _draft(_Row(cells, columns)).build(
            source="csv", file=filename, number=number, line=line
        )


def _misshapen(cells: Sequence[str], width: int) -> str | None:
    """Why a row cannot be one record, if it cannot. Fewer values than columns: the file
    is cut off, or a damaged line break split the row. Two or more values beyond the
    last column: rows ran together (a damaged line break or quote), or values hold the
    delimiter unquoted; either way the row is not one record's. One value beyond is
    tolerated ("k1; k2" in a semicolon-separated file): the columns before it hold."""
    if len(cells) < width:
        return (
            f"the row has {len(cells)} of the header's {width} columns (the file is cut off "
            "here, or a line break or quote inside a value is damaged); skipped"
        )
    if len(cells) >= width + 2:
        return (
            f"the row has {len(cells)} values for the header's {width} columns (rows run "
            "together through a damaged line break or quote, or values hold the delimiter "
            "without quotes); skipped"
        )
    return None


def _types(row: _Row) -> list[str]:
    coded = [ITEM_TYPES.get(_normalise(value), value) for value in row.items("item_type")]
    return [kind for kind in coded if kind] + row.items("publication_types")


def _extra(row: _Row, key: str) -> str | None:
    match = _EXTRA_IDS[key].search(row.get("extra") or "")
    return match.group(1) if match else None


def _pmid(row: _Row) -> str | None:
    """An accession number (Covidence) is a PMID only when it looks like one."""
    pmid = row.get("pmid") or _extra(row, "pmid")
    if pmid is None and (accession := normalize_pmid(row.get("accession"))):
        pmid = accession if len(accession) <= 8 else None
    return pmid


def _draft(row: _Row) -> Draft:
    year = valid_year(row.get("year"))
    date_year, published = parse_date(row.get("published"), year)
    if published is None:
        published = date_from_parts(year or date_year, row.get("month"), row.get("day"))
    count = row.get("citation_count")
    return Draft(
        record_id=row.get("record_id"),
        title=row.get("title"),
        abstract=row.get("abstract"),
        authors=people(row.all("authors")[:1]),
        venue=row.get("venue"),
        volume=row.get("volume"),
        issue=row.get("issue"),
        pages=row.get("pages") or join_pages(row.get("start_page"), row.get("end_page")),
        publisher=row.get("publisher"),
        issn=issn_text(row.all("issn")),
        language=row.get("language"),
        year=year or date_year,
        published=published,
        publication_types=_types(row),
        mesh_terms=row.items("mesh_terms"),
        keywords=row.items("keywords"),
        links=make_links(
            (url.rstrip(";,"), "landing") for value in row.all("url")[:1] for url in value.split()
        ),
        doi=row.get("doi"),
        pmid=_pmid(row),
        pmcid=row.get("pmcid") or _extra(row, "pmcid"),
        arxiv_id=row.get("arxiv_id") or _extra(row, "arxiv_id"),
        openalex_id=row.get("openalex_id"),
        s2_id=row.get("s2_id"),
        nct_id=row.get("nct_id"),
        citation_count=int(count) if count and count.isdigit() else None,
    )


def _cells(paper: Paper) -> list[str]:
    ids = paper.ids
    values: dict[str, str | None] = {
        "record_id": paper.record_id,
        "title": paper.title,
        "authors": "; ".join(person_text(author) for author in paper.authors),
        "year": str(paper.year) if paper.year else None,
        "published": paper.published.isoformat() if paper.published else None,
        "venue": paper.venue,
        "volume": paper.volume,
        "issue": paper.issue,
        "pages": paper.pages,
        "publisher": paper.publisher,
        "issn": paper.issn,
        "language": paper.language,
        "doi": ids.doi,
        "pmid": ids.pmid,
        "pmcid": ids.pmcid,
        "arxiv_id": ids.arxiv_id,
        "openalex_id": ids.openalex_id,
        "s2_id": ids.s2_id,
        "nct_id": ids.nct_id,
        "abstract": paper.abstract,
        "keywords": "; ".join(paper.keywords),
        "mesh_terms": "; ".join(paper.mesh_terms),
        "publication_types": "; ".join(paper.publication_types),
        "url": " ".join(link.url for link in paper.links),
        "citation_count": str(paper.citation_count) if paper.citation_count is not None else None,
    }
    return [spreadsheet_safe(values[column] or "") for column in COLUMNS]


def write_csv(records: Iterable[Paper | Trial], out: TextIO) -> int:
    """UTF-8 with a byte-order mark, so spreadsheet programs read non-ASCII text right;
    every cell ``spreadsheet_safe``. Every CSV export (the library, a search run, a
    stream report) is written here."""
    writer = csv.writer(out, lineterminator="\n")
    out.write("\ufeff")
    writer.writerow(COLUMNS)
    count = 0
    for record in records:
        writer.writerow(_cells(as_paper(record)))
        count += 1
    return count


CSV = register_format(
    FileFormat(
        name="csv",
        label="CSV",
        extensions=(".csv", ".tsv"),
        sniff=sniff_csv,
        read=read_csv,
        write=write_csv,
        media_type="text/csv",
        export_extension=".csv",
    )
)
