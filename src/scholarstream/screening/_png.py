"""The PRISMA diagram as PNG, drawn in process with Pillow from the same layout as the
SVG (``core.prisma_diagram``): no browser, no system fonts (Pillow's bundled scalable
font), twice the SVG's size so the text stays sharp when printed."""

from __future__ import annotations

import io

from PIL import Image, ImageDraw, ImageFont

from scholarstream.screening.core import FONT_SIZE, LINE_HEIGHT, PADDING, Diagram

SCALE = 2
_INK = (29, 35, 48)
_MUTED = (91, 100, 117)
_STROKE = (43, 52, 66)


def _rgb(colour: str) -> tuple[int, int, int]:
    value = colour.lstrip("#")
    return int(value[0:2], 16), int(value[2:4], 16), int(value[4:6], 16)


def _font(size: float) -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
    return ImageFont.load_default(size=size * SCALE)


def _fitting(
    draw: ImageDraw.ImageDraw, text: str, width: float, size: float
) -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
    """The font at ``size``, smaller if the line would not fit ``width`` (scaled px)."""
    font = _font(size)
    while size > 8 and draw.textlength(text, font=font) > width:
        size -= 0.5
        font = _font(size)
    return font


def _bold(draw: ImageDraw.ImageDraw, xy: tuple[float, float], text: str, **kw: object) -> None:
    # The bundled font has one weight: bold is drawn twice, half a pixel apart.
    draw.text(xy, text, **kw)  # type: ignore[arg-type]
    draw.text((xy[0] + SCALE * 0.5, xy[1]), text, **kw)  # type: ignore[arg-type]


def render_png(diagram: Diagram) -> bytes:
    s = SCALE
    image = Image.new("RGB", (int(diagram.width * s), int(diagram.height * s)), "white")
    draw = ImageDraw.Draw(image)
    for phase in diagram.phases:
        draw.rounded_rectangle(
            [phase.x * s, phase.y * s, (phase.x + phase.w) * s, (phase.y + phase.h) * s],
            radius=6 * s,
            fill=_rgb("#cfe0f3"),
            outline=_rgb("#6f8fb5"),
            width=s,
        )
        font = _font(FONT_SIZE)
        length = int(draw.textlength(phase.label, font=font)) + 4 * s
        label = Image.new("RGBA", (length, int(phase.w * s)), (0, 0, 0, 0))
        ImageDraw.Draw(label).text(
            (2 * s, phase.w * s / 2), phase.label, font=font, fill=(29, 45, 68), anchor="lm"
        )
        ImageDraw.Draw(label).text(
            (2 * s + s * 0.5, phase.w * s / 2),
            phase.label,
            font=font,
            fill=(29, 45, 68),
            anchor="lm",
        )
        rotated = label.rotate(90, expand=True)
        cx, cy = (phase.x + phase.w / 2) * s, (phase.y + phase.h / 2) * s
        image.paste(rotated, (int(cx - rotated.width / 2), int(cy - rotated.height / 2)), rotated)
    for box in diagram.boxes:
        draw.rectangle(
            [box.x * s, box.y * s, (box.x + box.w) * s, (box.y + box.h) * s],
            fill=_rgb(box.fill),
            outline=_rgb(box.stroke),
            width=max(1, int(1.2 * s)),
        )
        centred = box.key == "header"
        for i, line in enumerate(box.lines):
            text = line.text.replace("\u00a0", " ")
            indent = 14 if line.indent else 0
            room = (box.w - 2 * PADDING - indent) * s
            font = _fitting(draw, text, room, FONT_SIZE)
            fill = _MUTED if line.muted else _INK
            if centred:
                xy = ((box.x + box.w / 2) * s, (box.y + box.h / 2) * s)
                anchor = "mm"
            else:
                baseline = box.y + PADDING + (i + 1) * LINE_HEIGHT - 5
                xy = ((box.x + PADDING + indent) * s, baseline * s)
                anchor = "ls"
            if line.bold:
                _bold(draw, xy, text, font=font, fill=fill, anchor=anchor)
            else:
                draw.text(xy, text, font=font, fill=fill, anchor=anchor)
    for arrow in diagram.arrows:
        head = arrow.head()
        bx = (head[1][0] + head[2][0]) / 2
        by = (head[1][1] + head[2][1]) / 2
        draw.line([arrow.x1 * s, arrow.y1 * s, bx * s, by * s], fill=_STROKE, width=int(1.4 * s))
        draw.polygon([(x * s, y * s) for x, y in head], fill=_STROKE)
    out = io.BytesIO()
    image.save(out, format="PNG", optimize=True)
    return out.getvalue()
