"""The PRISMA 2020 flow diagram: one layout (boxes with wrapped lines, arrows, the phase
bars on the left) drawn as SVG here and as PNG by the shell, so both show the same thing.

The layout follows the PRISMA 2020 template for new reviews that searched databases and
registers: identification, screening and included phases, the main flow down the left
column, and what was removed or excluded at each step in the right column."""

from __future__ import annotations

from dataclasses import dataclass, field
from xml.sax.saxutils import escape

from scholarstream.screening.core._prisma import UNDECIDED_WORDS, PrismaCounts

FONT_SIZE = 13
LINE_HEIGHT = 18
PADDING = 10
FONT_FAMILY = "Arial, Helvetica, 'Liberation Sans', sans-serif"

WIDTH = 860
PHASE_X, PHASE_W = 16, 30
MAIN_X, MAIN_W = 62, 350
SIDE_X, SIDE_W = 472, 372
TOP = 16
HEADER_H = 34
ROW_GAP = 34

NOT_RECORDED = "not recorded"

# Approximate advance widths (in em) of a sans-serif face, for wrapping without a font.
_NARROW = set("fijlrtI.,:;'!|()[] ")
_WIDE = set("mwMW@%")
_CAPS_WIDE = set("ABCDEGHKNOQRSUVXYZ&")


def text_width(text: str, size: float = FONT_SIZE) -> float:
    """An estimate of ``text``'s width in pixels at ``size`` (a little generous)."""
    em = 0.0
    for char in text:
        if char in _NARROW:
            em += 0.3
        elif char in _WIDE:
            em += 0.85
        elif char in _CAPS_WIDE:
            em += 0.7
        elif char.isupper() or char.isdigit():
            em += 0.6
        else:
            em += 0.54
    return em * size


def wrap(text: str, width: float, size: float = FONT_SIZE) -> list[str]:
    """``text`` in lines no wider than ``width`` (a word longer than that is cut)."""
    lines: list[str] = []
    line = ""
    for word in (w for w in text.split(" ") if w):
        candidate = f"{line} {word}" if line else word
        if text_width(candidate, size) <= width:
            line = candidate
            continue
        if line:
            lines.append(line)
        while text_width(word, size) > width:
            cut = len(word)
            while cut > 1 and text_width(word[:cut] + "-", size) > width:
                cut -= 1
            lines.append(word[:cut] + "-")
            word = word[cut:]
        line = word
    if line:
        lines.append(line)
    return lines or [""]


@dataclass(frozen=True)
class Line:
    text: str
    bold: bool = False
    indent: bool = False
    muted: bool = False


@dataclass(frozen=True)
class Box:
    key: str
    x: float
    y: float
    w: float
    h: float
    lines: list[Line]
    fill: str = "#ffffff"
    stroke: str = "#2b3442"


@dataclass(frozen=True)
class Arrow:
    x1: float
    y1: float
    x2: float
    y2: float

    def head(self, size: float = 8) -> list[tuple[float, float]]:
        """The arrowhead's triangle at (x2, y2)."""
        dx, dy = self.x2 - self.x1, self.y2 - self.y1
        length = max((dx * dx + dy * dy) ** 0.5, 1e-9)
        ux, uy = dx / length, dy / length
        bx, by = self.x2 - ux * size, self.y2 - uy * size
        return [
            (self.x2, self.y2),
            (bx - uy * size * 0.5, by + ux * size * 0.5),
            (bx + uy * size * 0.5, by - ux * size * 0.5),
        ]


@dataclass(frozen=True)
class Phase:
    label: str
    x: float
    y: float
    w: float
    h: float


@dataclass
class Diagram:
    width: float
    height: float = 0.0
    title: str = ""
    boxes: list[Box] = field(default_factory=list)
    arrows: list[Arrow] = field(default_factory=list)
    phases: list[Phase] = field(default_factory=list)

    def box(self, key: str) -> Box:
        return next(b for b in self.boxes if b.key == key)


NBSP = "\u00a0"


def _n(value: int | None) -> str:
    """``(n = 12)``, kept on one line (no-break spaces: ``wrap`` breaks at spaces only)."""
    text = f"(n = {NOT_RECORDED})" if value is None else f"(n = {value:,})"
    return text.replace(" ", NBSP)


def _lines(spec: list[Line], width: float) -> list[Line]:
    out: list[Line] = []
    for item in spec:
        inner = width - 2 * PADDING - (14 if item.indent else 0)
        for text in wrap(item.text, inner):
            out.append(Line(text, bold=item.bold, indent=item.indent, muted=item.muted))
    return out


def _height(lines: list[Line]) -> float:
    return len(lines) * LINE_HEIGHT + 2 * PADDING - 4


def _identified(counts: PrismaCounts) -> list[Line]:
    lines = [Line("Records identified from:", bold=True)]
    if not counts.identified:
        lines.append(Line(f"No source recorded {_n(None)}", indent=True))
    for source in counts.identified:
        lines.append(Line(f"{source.source} {_n(source.records)}", indent=True))
    if len(counts.identified) > 1:
        lines.append(Line(f"Total {_n(counts.identified_total)}"))
    return lines


def _removed(counts: PrismaCounts) -> list[Line]:
    return [
        Line("Records removed before screening:", bold=True),
        Line(f"Duplicate records removed {_n(counts.duplicates_removed)}", indent=True),
        Line(
            f"Records marked as ineligible by automation tools {_n(counts.automation_excluded)}",
            indent=True,
        ),
        Line(f"Records removed for other reasons {_n(counts.other_removed)}", indent=True),
    ]


def _screened(counts: PrismaCounts) -> list[Line]:
    lines = [Line(f"Records screened {_n(counts.screened)}", bold=True)]
    if counts.undecided:
        lines.append(Line("Not decided yet:", muted=True))
        for kind, value in counts.undecided.items():
            lines.append(Line(f"{UNDECIDED_WORDS[kind]} {_n(value)}", indent=True, muted=True))
    return lines


def _excluded(counts: PrismaCounts) -> list[Line]:
    lines = [Line(f"Records excluded {_n(counts.excluded)}", bold=True)]
    lines += [Line(f"{r.reason} {_n(r.records)}", indent=True) for r in counts.excluded_reasons]
    return lines


def _assessed(counts: PrismaCounts) -> list[Line]:
    lines = [Line(f"Reports assessed for eligibility {_n(counts.assessed)}", bold=True)]
    if counts.fulltext_pending:
        lines.append(
            Line(f"awaiting a full-text decision {_n(counts.fulltext_pending)}", muted=True)
        )
    return lines


def _fulltext_excluded(counts: PrismaCounts) -> list[Line]:
    lines = [Line(f"Reports excluded {_n(counts.fulltext_excluded)}", bold=True)]
    lines += [Line(f"{r.reason} {_n(r.records)}", indent=True) for r in counts.fulltext_reasons]
    return lines


def prisma_diagram(counts: PrismaCounts, title: str = "") -> Diagram:
    """The PRISMA 2020 flow of ``counts``, laid out."""
    diagram = Diagram(width=WIDTH, title=title)
    header = Box(
        "header",
        MAIN_X,
        TOP,
        SIDE_X + SIDE_W - MAIN_X,
        HEADER_H,
        [Line("Identification of studies via databases and registers", bold=True)],
        fill="#f7e2a0",
    )
    diagram.boxes.append(header)
    # A phase of one row is at least as tall as its (rotated) label.
    least = {
        key: text_width(label, FONT_SIZE) * 1.15 + 2 * PADDING
        for key, label in (("identified", "Identification"), ("included", "Included"))
    }
    rows: list[tuple[str, list[Line], str | None, list[Line] | None]] = [
        ("identified", _identified(counts), "removed", _removed(counts)),
        ("screened", _screened(counts), "excluded", _excluded(counts)),
        (
            "sought",
            [Line(f"Reports sought for retrieval {_n(counts.sought)}", bold=True)],
            "not_retrieved",
            [Line(f"Reports not retrieved {_n(counts.not_retrieved)}", bold=True)],
        ),
        ("assessed", _assessed(counts), "fulltext_excluded", _fulltext_excluded(counts)),
        (
            "included",
            [
                Line(f"Studies included in review {_n(counts.studies_included)}", bold=True),
                Line(f"Reports of included studies {_n(counts.reports_included)}", bold=True),
            ],
            None,
            None,
        ),
    ]
    y: float = TOP + HEADER_H + ROW_GAP
    tops: dict[str, float] = {}
    bottoms: dict[str, float] = {}
    previous: Box | None = None
    for key, main_spec, side_key, side_spec in rows:
        main_lines = _lines(main_spec, MAIN_W)
        side_lines = _lines(side_spec, SIDE_W) if side_spec else []
        height = max(
            _height(main_lines), _height(side_lines) if side_lines else 0, least.get(key, 0)
        )
        main = Box(key, MAIN_X, y, MAIN_W, height, main_lines)
        diagram.boxes.append(main)
        if side_key and side_lines:
            side = Box(side_key, SIDE_X, y, SIDE_W, height, side_lines)
            diagram.boxes.append(side)
            diagram.arrows.append(Arrow(MAIN_X + MAIN_W, y + height / 2, SIDE_X, y + height / 2))
        if previous is not None:
            cx = MAIN_X + MAIN_W / 2
            diagram.arrows.append(Arrow(cx, previous.y + previous.h, cx, y))
        tops[key], bottoms[key] = y, y + height
        previous = main
        y += height + ROW_GAP
    for label, first, last in (
        ("Identification", "identified", "identified"),
        ("Screening", "screened", "assessed"),
        ("Included", "included", "included"),
    ):
        diagram.phases.append(
            Phase(label, PHASE_X, tops[first], PHASE_W, bottoms[last] - tops[first])
        )
    diagram.height = y - ROW_GAP + TOP
    return diagram


def _fmt(value: float) -> str:
    return f"{value:.1f}".rstrip("0").rstrip(".")


def render_svg(diagram: Diagram) -> str:
    """The diagram as a standalone SVG document (text as text: selectable, searchable)."""
    out: list[str] = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{_fmt(diagram.width)}" '
        f'height="{_fmt(diagram.height)}" viewBox="0 0 {_fmt(diagram.width)} '
        f'{_fmt(diagram.height)}" role="img" aria-labelledby="prisma-title" '
        f'font-family="{escape(FONT_FAMILY)}" font-size="{FONT_SIZE}">',
        f'<title id="prisma-title">{escape(diagram.title or "PRISMA 2020 flow diagram")}</title>',
        f'<rect width="{_fmt(diagram.width)}" height="{_fmt(diagram.height)}" fill="#ffffff"/>',
    ]
    for phase in diagram.phases:
        cx, cy = phase.x + phase.w / 2, phase.y + phase.h / 2
        out.append(
            f'<rect x="{_fmt(phase.x)}" y="{_fmt(phase.y)}" width="{_fmt(phase.w)}" '
            f'height="{_fmt(phase.h)}" rx="6" fill="#cfe0f3" stroke="#6f8fb5"/>'
            f'<text x="{_fmt(cx)}" y="{_fmt(cy)}" text-anchor="middle" dominant-baseline="central" '
            f'font-weight="bold" fill="#1d2d44" transform="rotate(-90 {_fmt(cx)} {_fmt(cy)})">'
            f"{escape(phase.label)}</text>"
        )
    for box in diagram.boxes:
        out.append(
            f'<g data-box="{box.key}"><rect x="{_fmt(box.x)}" y="{_fmt(box.y)}" '
            f'width="{_fmt(box.w)}" height="{_fmt(box.h)}" fill="{box.fill}" '
            f'stroke="{box.stroke}" stroke-width="1.2"/>'
        )
        centred = box.key == "header"
        for i, line in enumerate(box.lines):
            baseline = box.y + PADDING + (i + 1) * LINE_HEIGHT - 5
            if centred:
                baseline = box.y + box.h / 2 + FONT_SIZE * 0.35
            x = box.x + box.w / 2 if centred else box.x + PADDING + (14 if line.indent else 0)
            attrs = ' text-anchor="middle"' if centred else ""
            attrs += ' font-weight="bold"' if line.bold else ""
            attrs += ' fill="#5b6475"' if line.muted else ' fill="#1d2330"'
            out.append(
                f'<text x="{_fmt(x)}" y="{_fmt(baseline)}"{attrs}>{escape(line.text)}</text>'
            )
        out.append("</g>")
    for arrow in diagram.arrows:
        head = arrow.head()
        bx = (head[1][0] + head[2][0]) / 2
        by = (head[1][1] + head[2][1]) / 2
        points = " ".join(f"{_fmt(x)},{_fmt(y)}" for x, y in head)
        out.append(
            f'<line x1="{_fmt(arrow.x1)}" y1="{_fmt(arrow.y1)}" x2="{_fmt(bx)}" y2="{_fmt(by)}" '
            f'stroke="#2b3442" stroke-width="1.4"/><polygon points="{points}" fill="#2b3442"/>'
        )
    out.append("</svg>")
    return "\n".join(out) + "\n"
