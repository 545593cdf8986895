"""The screening progress chart (static/screening/chart.js) in Chromium, drawn from the
progress the API answers (``screening.core.progress``): its horizontal axis spans the
records screened so far (at least ten, never more than the project has), so 50 screened of
3,000 fill the chart; its legend says how many records the project has and how many are
left; the SVG parses and passes axe-core."""

from __future__ import annotations

import datetime as dt
import uuid
from typing import Any
from xml.etree import ElementTree

import pytest
from playwright.sync_api import Page

from scholarstream.screening.core import DecisionEvent, progress
from tests.web._axe import axe_violations, require_axe

MODULE = "/static/app/screening/chart.js"
SVG = "{http://www.w3.org/2000/svg}"
START = dt.datetime(2026, 1, 5, 9, tzinfo=dt.UTC)

_DRAW = """
async ([module, progress]) => {
  const { renderProgressChart } = await import(module);
  const box = document.createElement("div");
  box.dataset.testid = "chart";
  document.body.replaceChildren(box);
  renderProgressChart(box, progress);
  return new XMLSerializer().serializeToString(box.firstElementChild);
}
"""


def _progress(total: int, screened: int, every: int = 5) -> dict[str, Any]:
    """A reviewer's progress through ``total`` records after ``screened`` decisions, every
    ``every``-th of them an include."""
    reviewer = uuid.uuid4()
    events = [
        DecisionEvent(
            id=uuid.uuid4(),
            record_id=uuid.uuid4(),
            reviewer_id=reviewer,
            stage="screen",
            decision="include" if n % every == 0 else "exclude",
            seq=n + 1,
            decided_at=START + dt.timedelta(seconds=n),
        )
        for n in range(screened)
    ]
    drawn: dict[str, Any] = progress(total, events, reviewer).model_dump(mode="json")
    return drawn


def _draw(page: Page, total: int, screened: int) -> ElementTree.Element:
    svg: str = page.evaluate(_DRAW, [MODULE, _progress(total, screened)])
    return ElementTree.fromstring(svg)  # noqa: S314  (the product's own drawing, in a test)


def _texts(svg: ElementTree.Element) -> dict[str, str]:
    return {t.get("data-role", ""): "".join(t.itertext()) for t in svg.iter(f"{SVG}text")} | {
        "all": " ".join("".join(t.itertext()) for t in svg.iter(f"{SVG}text"))
    }


def _last_x(svg: ElementTree.Element) -> float:
    line = svg.find(f"{SVG}polyline")
    assert line is not None
    return float(line.get("points", "").split()[-1].split(",")[0])


def _plot(svg: ElementTree.Element) -> tuple[float, float]:
    """The x of the horizontal axis's ends."""
    axis = svg.find(f"{SVG}line")
    assert axis is not None
    return float(axis.get("x1", "0")), float(axis.get("x2", "0"))


def test_the_axis_spans_the_records_screened_and_the_legend_the_rest(static_page: Page) -> None:
    svg = _draw(static_page, 3000, 50)
    left, right = _plot(svg)
    # 50 of 3,000 screened reach the right end, not 1.7% of the way along.
    assert _last_x(svg) == pytest.approx(right, abs=0.1)
    texts = _texts(svg)
    assert texts["span"] == "50"
    assert texts["legend"] == "50 of 3,000 records screened · 2,950 left"
    label = svg.get("aria-label", "")
    assert svg.get("role") == "img"
    assert "10 included so far" in label and "50 of 3,000 records screened · 2,950 left" in label
    assert axe_violations(static_page, require_axe(), '[data-testid="chart"]') == []

    # One record screened: the axis still spans ten, so the line is not the whole width.
    one = _draw(static_page, 3000, 1)
    assert _texts(one)["span"] == "10"
    assert _last_x(one) == pytest.approx(left + (right - left) / 10, abs=0.1)
    # Never more than the project has; every record screened, nothing left.
    small = _draw(static_page, 4, 2)
    assert _texts(small)["span"] == "4"
    assert _last_x(small) == pytest.approx((left + right) / 2, abs=0.1)
    done = _draw(static_page, 4, 4)
    assert _texts(done)["legend"] == "4 of 4 records screened · none left"
    # Nothing screened yet: axes and legend, no line.
    empty = _draw(static_page, 3000, 0)
    assert empty.find(f"{SVG}polyline") is None
    assert _texts(empty)["legend"] == "0 of 3,000 records screened · 3,000 left"
