"""What a user sees when the model's answer cannot be used (issue 22), in a real browser:
an AI column cell says "Not available" with its reason and a Retry that asks the model
again, the column says so once, and the rest of the table is filled."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.ai_columns.judge import Judge
from tests.web.live import LiveServer, NewPage, PageProblems, clean_settings, serve
from tests.web.test_ai_columns_page import _add_column, _cells, _import_scopus, _titles

pytestmark = pytest.mark.browser


class Moody:
    """Answers the first title's cell with a value no yes/no column can use, until fixed."""

    def __init__(self) -> None:
        self.broken_title: str | None = None

    def __call__(self, criteria: str, title: str) -> tuple[Any, str]:
        if title == self.broken_title:
            return "perhaps", "Unsure."
        return True, "Fine."


@pytest.fixture
def moody() -> Moody:
    return Moody()


@pytest.fixture
def moody_server(tmp_path: Path, moody: Moody) -> Iterator[LiveServer]:
    judge = Judge(moody)
    with serve(clean_settings(tmp_path / "data"), models={"default": judge.model()}) as live:
        yield live


def test_a_cell_the_model_cannot_fill_is_not_available_and_retried(
    moody_server: LiveServer, moody: Moody, new_page: NewPage, problems: PageProblems
) -> None:
    page = new_page(moody_server)
    page.goto("/library")
    total = _import_scopus(page)
    moody.broken_title = _titles(page)[0]

    _add_column(page, "Checked", "Is it checked?", "Yes / no")
    cells = _cells(page, "Checked")
    failed = cells.and_(page.locator('[data-state="failed"]'))
    expect(failed).to_have_count(1)
    expect(cells.and_(page.locator('[data-state="done"]'))).to_have_count(total - 1)
    expect(failed.locator('[data-role="value"]')).to_have_text("Not available")
    expect(failed).to_have_attribute("title", "Not available: the model's answer could not be used")
    status = page.get_by_test_id("ai-status")
    expect(status).to_contain_text("Checked: The model's answer could not be used for this column")

    moody.broken_title = None
    failed.get_by_role("button", name="Retry").click()
    expect(cells.and_(page.locator('[data-state="done"]'))).to_have_count(total)
    problems.assert_none()
