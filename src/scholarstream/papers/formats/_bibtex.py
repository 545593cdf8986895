"""BibTeX (and the biblatex fields reference managers add): ``@article{key, title = {...}}``.

The file is cut into one chunk per ``@`` entry as it streams, and each chunk is parsed on
its own with ``bibtexparser``: a broken entry (an unclosed brace, a missing comma) then
costs only itself, the problem names the line it starts on, and memory stays bounded.
String macros (``@string``) are kept as they come and resolved in later entries.

LaTeX in values is decoded with a small table of its own (accents, escaped specials,
``\\textless``-style symbols, dashes, case-protecting braces) rather than a full LaTeX
parser: a bare ``%`` in an abstract must not swallow the rest of it, and the writer's
escaping must read back to exactly the text it wrote.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Iterator
from typing import BinaryIO, TextIO

from bibtexparser.entrypoint import parse_string

from scholarstream.errors import InvalidInputError
from scholarstream.papers._model import Author, Paper, Trial
from scholarstream.papers.formats._base import (
    DEFAULT_LIMITS,
    FileFormat,
    ReadItem,
    RecordProblem,
    record_chars,
    register_format,
    too_large,
)
from scholarstream.papers.formats._fields import (
    MONTHS,
    Draft,
    as_paper,
    clean,
    date_from_parts,
    issn_text,
    logical_lines,
    make_links,
    parse_date,
    sniff_text,
    unique,
    valid_year,
)
from scholarstream.settings import LimitsSettings

# -- LaTeX --------------------------------------------------------------------------------

_SPECIALS = "%&_#$\\{}~^ "
_HOLD = {char: chr(0xE000 + index) for index, char in enumerate(_SPECIALS)}
"""Escaped specials are parked on private-use characters while braces and math are
stripped, then put back."""
_RELEASE = str.maketrans({held: char for char, held in _HOLD.items()})

_SYMBOLS: dict[str, str] = {
    "textless": "<",
    "textgreater": ">",
    "textasciitilde": _HOLD["~"],
    "textasciicircum": _HOLD["^"],
    "textbackslash": _HOLD["\\"],
    "textbraceleft": _HOLD["{"],
    "textbraceright": _HOLD["}"],
    "textdollar": _HOLD["$"],
    "textunderscore": _HOLD["_"],
    "textbar": "|",
    "textendash": "\u2013",
    "textemdash": "\u2014",
    "textquoteleft": "\u2018",
    "textquoteright": "\u2019",
    "textquotedblleft": "\u201c",
    "textquotedblright": "\u201d",
    "textbullet": "\u2022",
    "textdegree": "\u00b0",
    "textregistered": "\u00ae",
    "texttrademark": "\u2122",
    "textcopyright": "\u00a9",
    "copyright": "\u00a9",
    "textmu": "\u00b5",
    "textpm": "\u00b1",
    "pm": "\u00b1",
    "texttimes": "\u00d7",
    "times": "\u00d7",
    "textperiodcentered": "\u00b7",
    "ldots": "\u2026",
    "dots": "\u2026",
    "ss": "\u00df",
    "o": "\u00f8",
    "O": "\u00d8",
    "aa": "\u00e5",
    "AA": "\u00c5",
    "ae": "\u00e6",
    "AE": "\u00c6",
    "oe": "\u0153",
    "OE": "\u0152",
    "l": "\u0142",
    "L": "\u0141",
    "i": "\u0131",
    "j": "\u0237",
    "S": "\u00a7",
    "P": "\u00b6",
    "pounds": "\u00a3",
    "euro": "\u20ac",
    "le": "\u2264",
    "leq": "\u2264",
    "ge": "\u2265",
    "geq": "\u2265",
    "alpha": "\u03b1",
    "beta": "\u03b2",
    "gamma": "\u03b3",
    "delta": "\u03b4",
    "epsilon": "\u03b5",
    "kappa": "\u03ba",
    "lambda": "\u03bb",
    "mu": "\u03bc",
    "pi": "\u03c0",
    "sigma": "\u03c3",
    "tau": "\u03c4",
    "chi": "\u03c7",
    "omega": "\u03c9",
    "Delta": "\u0394",
    "Omega": "\u03a9",
}
_DROPPED_COMMANDS = frozenset(
    [
        "textit",
        "emph",
        "textbf",
        "textsc",
        "textrm",
        "textsf",
        "texttt",
        "textup",
        "textmd",
        "textnormal",
        "mathrm",
        "mathit",
        "mathbf",
        "mathsf",
        "mathtt",
        "mathcal",
        "url",
        "mbox",
        "hbox",
        "textsubscript",
        "textsuperscript",
        "uppercase",
        "lowercase",
        "MakeUppercase",
        "MakeLowercase",
        "relax",
        "protect",
        "noopsort",
        "NoCaseChange",
    ]
)
"""Formatting commands: the command goes, its argument stays."""
_ACCENTS = {
    "'": "\u0301",
    "`": "\u0300",
    "^": "\u0302",
    '"': "\u0308",
    "~": "\u0303",
    "=": "\u0304",
    ".": "\u0307",
    "u": "\u0306",
    "v": "\u030c",
    "H": "\u030b",
    "c": "\u0327",
    "k": "\u0328",
    "r": "\u030a",
    "d": "\u0323",
    "b": "\u0331",
}
_ESCAPED = re.compile(r"\\([%&_#$\\{} ])")
_SYMBOL_ACCENT = re.compile(
    r"\\(['`^\"~=.])\s*(?:\{\s*(\\[ij](?![A-Za-z])|[A-Za-z])\s*\}|(\\[ij](?![A-Za-z])|[A-Za-z]))"
)
_LETTER_ACCENT = re.compile(
    r"\\([uvHckrdb])(?:\s*\{\s*(\\[ij](?![A-Za-z])|[A-Za-z])\s*\}|\s+([A-Za-z]))"
)
_COMMAND = re.compile(r"\\([A-Za-z]+)\s*(\{\})?")
_MATH = re.compile(r"\$([^$]*)\$")


def _accent(match: re.Match[str]) -> str:
    letter = (match.group(2) or match.group(3)).lstrip("\\")
    return letter + _ACCENTS[match.group(1)]


def _command(match: re.Match[str]) -> str:
    name = match.group(1)
    if name in _SYMBOLS:
        return _SYMBOLS[name]
    return "" if name in _DROPPED_COMMANDS else name


def latex_to_text(value: str) -> str:
    """LaTeX as BibTeX files hold it -> plain Unicode text."""
    if "\\" not in value and "{" not in value and "$" not in value and "~" not in value:
        return value if "--" not in value else _dashes(value)
    text = value.replace("\\\\", " ")
    text = _ESCAPED.sub(lambda m: _HOLD[m.group(1)], text)
    text = _SYMBOL_ACCENT.sub(_accent, text)
    text = _LETTER_ACCENT.sub(_accent, text)
    text = _COMMAND.sub(_command, text)
    text = _MATH.sub(lambda m: m.group(1).replace("^", "").replace("_", ""), text)
    text = _dashes(text.replace("~", "\u00a0"))
    text = text.replace("{", "").replace("}", "").replace("\u00a0", " ")
    text = text.translate(_RELEASE)
    return unicodedata.normalize("NFC", text)


def _dashes(text: str) -> str:
    return text.replace("---", "\u2014").replace("--", "\u2013")


_ENCODE = str.maketrans(
    {
        "\\": r"\textbackslash{}",
        "{": r"\textbraceleft{}",
        "}": r"\textbraceright{}",
        "%": r"\%",
        "&": r"\&",
        "#": r"\#",
        "_": r"\_",
        "$": r"\$",
        "~": r"\textasciitilde{}",
        "^": r"\textasciicircum{}",
    }
)


def text_to_latex(text: str) -> str:
    """Plain text -> a BibTeX value that ``latex_to_text`` reads back unchanged (non-ASCII
    stays UTF-8, which biber and modern BibTeX read). Literal braces become
    ``\\textbraceleft{}``: BibTeX balances braces even after a backslash."""
    encoded = text.translate(_ENCODE)
    return re.sub(r"-(?=-)", "-{}", encoded)


# -- reading ------------------------------------------------------------------------------

_ENTRY_START = re.compile(r"^\s*@\s*(\w+)\s*[{(]")
_AT_LINE = re.compile(r"^\s*@")
_SNIFF = re.compile(r"^\s*@\s*(\w+)\s*[{(]", re.MULTILINE)
_AND = re.compile(r"\s+and\s+", re.IGNORECASE)
_BARE_VALUE = re.compile(r"^(?:\d+|[A-Za-z_][\w\-:.+/]*)$")
_SKIPPED_BLOCKS = frozenset({"comment", "preamble"})
_FIELD_LINE = re.compile(r"^\s*[A-Za-z][\w-]*\s*=\s*[{\"]", re.MULTILINE)

BIBTEX_TYPES: dict[str, str | None] = {
    "article": "Journal Article",
    "book": "Book",
    "booklet": "Pamphlet",
    "inbook": "Book Section",
    "incollection": "Book Section",
    "inproceedings": "Conference Paper",
    "conference": "Conference Paper",
    "proceedings": "Conference Proceedings",
    "phdthesis": "Thesis",
    "mastersthesis": "Thesis",
    "thesis": "Thesis",
    "techreport": "Report",
    "report": "Report",
    "manual": "Manual",
    "unpublished": "Unpublished Work",
    "online": "Web Page",
    "electronic": "Web Page",
    "www": "Web Page",
    "dataset": "Dataset",
    "software": "Computer Program",
    "patent": "Patent",
    "misc": None,
}
"""Entry type -> publication type (``misc`` says nothing)."""

_ENTRY_TYPES: dict[str, str] = {
    "journal article": "article",
    "article": "article",
    "review": "article",
    "editorial": "article",
    "letter": "article",
    "comment": "article",
    "electronic article": "article",
    "magazine article": "article",
    "newspaper article": "article",
    "book": "book",
    "edited book": "book",
    "electronic book": "book",
    "pamphlet": "booklet",
    "book section": "incollection",
    "book chapter": "incollection",
    "electronic book section": "incollection",
    "conference paper": "inproceedings",
    "proceedings paper": "inproceedings",
    "conference proceedings": "proceedings",
    "thesis": "phdthesis",
    "dissertation": "phdthesis",
    "report": "techreport",
    "manual": "manual",
    "unpublished work": "unpublished",
}
"""Publication type (lower case) -> the classic BibTeX entry type for it."""
_CONTAINED_IN_BOOK = frozenset({"inproceedings", "incollection", "inbook"})


def sniff_bibtex(head: bytes) -> bool:
    return any(
        match.group(1).lower() not in _SKIPPED_BLOCKS for match in _SNIFF.finditer(sniff_text(head))
    )


def _brace_delta(text: str) -> int:
    return text.count("{") - text.count("}")


def _chunks(stream: BinaryIO, most: int) -> Iterator[tuple[int, str, bool]]:
    """``(first_line, text, whole)`` per ``@`` block and per run of lines outside any
    block. A line starting with ``@`` opens a new block when the one before has closed
    its braces, or when it is plainly an entry header (so an entry left unclosed does not
    swallow the rest of the file); a block opened with a brace ends where its braces
    balance. A block keeps at most ``most`` characters: past them its lines are dropped
    (still counted for its braces) and ``whole`` is false."""
    lines: list[str] = []
    start = depth = size = 0
    inside = braced = False

    def add(text: str) -> None:
        nonlocal size
        size += len(text) + 1
        if size <= most:
            lines.append(text)

    for number, text in logical_lines(stream):
        if _AT_LINE.match(text) and (not inside or depth <= 0 or _ENTRY_START.match(text)):
            if lines:
                yield start, "\n".join(lines), size <= most
            header = _ENTRY_START.match(text)
            lines, start, depth, size = [text], number, _brace_delta(text), len(text)
            inside, braced = True, header is not None and text[header.end() - 1] == "{"
            continue
        if inside and braced and depth <= 0:
            yield start, "\n".join(lines), size <= most
            lines, inside, size = [], False, 0
        if inside:
            add(text)
            depth += _brace_delta(text)
        elif text.strip():
            if not lines:
                start = number
            add(text)
        elif lines:
            yield start, "\n".join(lines), size <= most
            lines, size = [], 0
    if lines:
        yield start, "\n".join(lines), size <= most


def read_bibtex(
    stream: BinaryIO, filename: str, limits: LimitsSettings = DEFAULT_LIMITS
) -> Iterator[ReadItem]:
    """Text outside the entries is a comment, unless it holds ``field = {value}`` lines:
    then it is an entry whose ``@type{key,`` line is damaged, and it is reported."""
    macros: dict[str, str] = {}
    count = 0
    other_text = False
    held: list[RecordProblem] = []  # before the first entry: the file may not be BibTeX
    most = record_chars(limits)
    for line, chunk, whole in _chunks(stream, most):
        if not _AT_LINE.match(chunk):
            if _FIELD_LINE.search(chunk):
                problem = RecordProblem(
                    filename,
                    count + len(held) + 1,
                    "text outside any entry that holds fields (an entry whose '@type{key,' "
                    "line is damaged?); skipped",
                    line,
                )
                if count:
                    count += 1
                    yield problem
                else:
                    held.append(problem)
            other_text = True
            continue
        header = _ENTRY_START.match(chunk)
        kind = header.group(1).lower() if header else ""
        if kind in _SKIPPED_BLOCKS:
            continue
        if kind == "string":
            _define(chunk, macros)
            continue
        count += len(held) + 1
        yield from held
        held.clear()
        if not whole:
            yield too_large(filename, count, most, line)
            continue
        yield _entry(chunk, macros, filename, count, line)
    if count == 0 and other_text:
        raise InvalidInputError(
            f"{filename} is not a BibTeX file: it holds no '@type{{key, ...}}' entry.",
            hint="Check the file's format, or pass the right one explicitly.",
        )


def _define(chunk: str, macros: dict[str, str]) -> None:
    for string in parse_string(chunk, parse_stack=[]).strings:
        macros[string.key.lower()] = _value(str(string.value), macros)


_BRACE = re.compile(r"[{}]")


def _enclosed(raw: str, opening: str, closing: str) -> bool:
    """Is ``raw`` one ``{...}`` (or ``"..."``) group, not ``{a} # {b}``?"""
    if len(raw) < 2 or raw[0] != opening or raw[-1] != closing:
        return False
    if opening == '"':
        return True
    depth = 0
    for match in _BRACE.finditer(raw):
        depth += 1 if match.group() == "{" else -1
        if depth == 0:
            return match.end() == len(raw)
    return False


def _split_top(raw: str, separator: str) -> list[str]:
    """``raw`` split on ``separator`` outside braces and quotes."""
    parts, depth, quoted, start = [], 0, False, 0
    for index, char in enumerate(raw):
        if char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
        elif char == '"' and depth == 0:
            quoted = not quoted
        elif char == separator and depth == 0 and not quoted:
            parts.append(raw[start:index])
            start = index + 1
    parts.append(raw[start:])
    return parts


def _value(raw: str, macros: dict[str, str]) -> str:
    """A field's raw value, enclosing braces or quotes removed, macros and ``#``
    concatenations resolved; LaTeX still in it."""
    raw = raw.strip()
    if _enclosed(raw, "{", "}") or _enclosed(raw, '"', '"'):
        return raw[1:-1]
    pieces = []
    for piece in (p.strip() for p in _split_top(raw, "#")):
        if _enclosed(piece, "{", "}") or _enclosed(piece, '"', '"'):
            pieces.append(piece[1:-1])
        else:
            pieces.append(macros.get(piece.lower(), piece))
    return "".join(pieces)


def _garbled(raw: str) -> bool:
    """A value bibtexparser accepted but that cannot be one: ``2000 author = {x}`` is what
    a missing comma leaves."""
    raw = raw.strip()
    if _enclosed(raw, "{", "}") or _enclosed(raw, '"', '"'):
        return False
    return not all(
        _enclosed(p, "{", "}") or _enclosed(p, '"', '"') or _BARE_VALUE.match(p)
        for p in (piece.strip() for piece in _split_top(raw, "#"))
    )


def _entry(
    chunk: str, macros: dict[str, str], filename: str, number: int, line: int
) -> Paper | RecordProblem:
    library = parse_string(chunk, parse_stack=[])
    if library.failed_blocks or len(library.entries) != 1:
        error = library.failed_blocks[0].error if library.failed_blocks else None
        reason = getattr(error, "abort_reason", None) or "it is not a complete entry"
        return RecordProblem(
            filename, number, f"the entry cannot be parsed ({reason.strip()}); skipped", line
        )
    entry = library.entries[0]
    raw: dict[str, str] = {}
    for item in entry.fields:
        if not item.key.strip():
            return RecordProblem(filename, number, "a field has no name; skipped", line)
        if _garbled(str(item.value)):
            return RecordProblem(
                filename,
                number,
                f"the value of '{item.key}' is garbled (a missing comma or brace?); skipped",
                line,
            )
        raw.setdefault(item.key.lower(), _value(str(item.value), macros))
    return _draft(entry.entry_type.lower(), entry.key, raw).build(
        source="bibtex", file=filename, number=number, line=line
    )


def _text(raw: dict[str, str], *keys: str) -> str | None:
    for key in keys:
        value = clean(latex_to_text(raw.get(key, "")))
        if value:
            return value
    return None


def _person(raw_name: str) -> Author | None:
    name = raw_name.strip()
    if _enclosed(name, "{", "}"):
        return Author.from_parts(clean(latex_to_text(name[1:-1])), None)
    return Author.parse(latex_to_text(name))


_NAME_TOKENS = re.compile(r"\{|\}|\s+and\s+", re.IGNORECASE)


def _people(raw_names: str | None) -> list[Author]:
    """Names separated by ``and`` outside braces (``{Smith and Sons}`` is one name)."""
    if not raw_names:
        return []
    names, depth, start = [], 0, 0
    for match in _NAME_TOKENS.finditer(raw_names):
        mark = match.group(0)
        if mark == "{":
            depth += 1
        elif mark == "}":
            depth -= 1
        elif depth == 0:
            names.append(raw_names[start : match.start()])
            start = match.end()
    names.append(raw_names[start:])
    return [author for author in map(_person, names) if author is not None]


def _keywords(raw: str | None) -> list[str]:
    """Comma- or semicolon-separated; a braced keyword may hold either."""
    if not raw:
        return []
    separator = ";" if len(_split_top(raw, ";")) > 1 else ","
    return unique(latex_to_text(part) for part in _split_top(raw, separator))


def _draft(kind: str, key: str, raw: dict[str, str]) -> Draft:
    year = valid_year(_text(raw, "year"))
    date_year, published = parse_date(_text(raw, "date"))
    year = year or date_year
    if published is None:
        published = date_from_parts(year, _text(raw, "month"), _text(raw, "day"))
    arxiv = None
    if (raw.get("archiveprefix") or raw.get("eprinttype") or "").lower() == "arxiv":
        arxiv = raw.get("eprint")
    url = clean(raw.get("url"))
    return Draft(
        record_id=key,
        title=_text(raw, "title"),
        abstract=latex_to_text(raw["abstract"]) if "abstract" in raw else None,
        authors=_people(raw.get("author")) or _people(raw.get("editor")),
        venue=_text(raw, "journal", "journaltitle", "booktitle", "series", "howpublished"),
        volume=_text(raw, "volume"),
        issue=_text(raw, "number", "issue"),
        pages=_text(raw, "pages"),
        publisher=_text(raw, "publisher", "institution", "school", "organization"),
        issn=issn_text([raw.get("issn"), raw.get("isbn")]),
        language=_text(raw, "language", "langid"),
        year=year,
        published=published,
        publication_types=unique([BIBTEX_TYPES.get(kind, kind.capitalize())]),
        keywords=_keywords(raw.get("keywords")),
        links=make_links([(url, "landing")]),
        doi=clean(raw.get("doi")),
        pmid=clean(raw.get("pmid")),
        pmcid=clean(raw.get("pmcid")),
        arxiv_id=arxiv,
    )


# -- writing ------------------------------------------------------------------------------

_KEY_UNSAFE = re.compile(r"[\s,{}()=#%\"'\\~]+")
_STOP_WORDS = frozenset(
    [
        "a",
        "an",
        "the",
        "of",
        "on",
        "in",
        "and",
        "for",
        "to",
        "with",
        "from",
        "by",
        "at",
        "as",
        "is",
        "are",
    ]
)
_MONTH_MACROS = {number: name for name, number in MONTHS.items()}


def _ascii(text: str) -> str:
    decomposed = unicodedata.normalize("NFKD", text)
    return re.sub(r"[^a-z0-9]", "", decomposed.encode("ascii", "ignore").decode().lower())


def _key(paper: Paper, used: set[str]) -> str:
    """The record's own id when it has one, else ``firstauthor + year + first word``;
    suffixed ``a``, ``b``, ... until unique within the export."""
    base = _KEY_UNSAFE.sub("_", paper.record_id or "").strip("_")
    if not base:
        family = _ascii(paper.first_author or "") or "anon"
        words = (_ascii(word) for word in paper.title.split())
        word = next((w for w in words if w and w not in _STOP_WORDS), "")
        base = f"{family}{paper.year or ''}{word}"
    key, suffix = base, 0
    while key.lower() in used:
        suffix += 1
        key = f"{base}{_suffix(suffix)}"
    used.add(key.lower())
    return key


def _suffix(number: int) -> str:
    letters = ""
    while number > 0:
        number, rest = divmod(number - 1, 26)
        letters = chr(ord("a") + rest) + letters
    return letters


def _entry_type(paper: Paper) -> str:
    for kind in paper.publication_types:
        entry_type = _ENTRY_TYPES.get(kind.lower())
        if entry_type:
            return entry_type
    return "article" if paper.venue else "misc"


def _person_latex(author: Author) -> str:
    if author.family is None:
        return "{" + text_to_latex(author.name) + "}"
    family = text_to_latex(author.family)
    if (" " in author.family and not author.given) or _AND.search(f" {author.family} "):
        family = "{" + family + "}"
    return f"{family}, {text_to_latex(author.given)}" if author.given else family


def _keyword_latex(keyword: str) -> str:
    encoded = text_to_latex(keyword)
    return "{" + encoded + "}" if "," in keyword or ";" in keyword else encoded


def _fields(paper: Paper) -> Iterator[tuple[str, str]]:
    entry_type = _entry_type(paper)
    ids = paper.ids
    venue_field = (
        "booktitle"
        if entry_type in _CONTAINED_IN_BOOK
        else "series"
        if entry_type == "book"
        else "journal"
    )
    texts: list[tuple[str, str | None]] = [
        ("title", "{" + text_to_latex(paper.title) + "}"),
        ("author", " and ".join(_person_latex(a) for a in paper.authors) or None),
        (venue_field, paper.venue and text_to_latex(paper.venue)),
        ("year", str(paper.year) if paper.year else None),
        ("volume", paper.volume and text_to_latex(paper.volume)),
        ("number", paper.issue and text_to_latex(paper.issue)),
        ("pages", paper.pages and text_to_latex(paper.pages).replace("-", "--")),
        ("publisher", paper.publisher and text_to_latex(paper.publisher)),
        ("issn", paper.issn),
        ("language", paper.language and text_to_latex(paper.language)),
        ("doi", ids.doi),
        ("pmid", ids.pmid),
        ("pmcid", ids.pmcid),
        ("eprint", ids.arxiv_id),
        ("archiveprefix", "arXiv" if ids.arxiv_id else None),
        ("url", _url(paper)),
        (
            "keywords",
            ", ".join(_keyword_latex(k) for k in unique([*paper.keywords, *paper.mesh_terms]))
            or None,
        ),
        ("abstract", paper.abstract and text_to_latex(paper.abstract)),
    ]
    for name, value in texts:
        if value:
            yield name, "{" + value + "}"
    if paper.published:
        yield "month", _MONTH_MACROS[paper.published.month]
        yield "date", "{" + paper.published.isoformat() + "}"


def _url(paper: Paper) -> str | None:
    links = [link for link in paper.links if link.kind != "doi"] or paper.links
    return links[0].url.replace("{", "%7B").replace("}", "%7D") if links else None


def write_bibtex(records: Iterable[Paper | Trial], out: TextIO) -> int:
    used: set[str] = set()
    count = 0
    for record in records:
        paper = as_paper(record)
        out.write(f"@{_entry_type(paper)}{{{_key(paper, used)},\n")
        for name, value in _fields(paper):
            out.write(f"  {name} = {value},\n")
        out.write("}\n\n")
        count += 1
    return count


BIBTEX = register_format(
    FileFormat(
        name="bibtex",
        label="BibTeX",
        extensions=(".bib", ".bibtex"),
        sniff=sniff_bibtex,
        read=read_bibtex,
        write=write_bibtex,
        media_type="application/x-bibtex",
        export_extension=".bib",
        aliases=("bib",),
    )
)
