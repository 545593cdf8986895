"""The import limits through the Library page's import form (issue 20, point 2): the form
posts to the same API, so a decompression bomb and an over-long field are reported in the
import summary, and an upload over the server's limit is refused with a message."""

from __future__ import annotations

import zlib
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from tests.web.live import LiveServer, NewPage, PageProblems, clean_settings, serve

pytestmark = pytest.mark.browser

MiB = 1 << 20
GOOD = (
    "TY  - JOUR\nTI  - Taurine in dogs\nAU  - Doe, Jane\nPY  - 2020\nER  - \n\n"
    "TY  - JOUR\nTI  - Taurine in cats\nAU  - Roe, Rick\nPY  - 2021\nER  - \n\n"
)


@pytest.fixture
def limited_server(tmp_path: Path) -> Iterator[LiveServer]:
    settings = clean_settings(
        tmp_path / "data", limits={"import_field_chars": 5000, "import_body_bytes": 200_000}
    )
    with serve(settings) as live:
        yield live


def _bomb(path: Path, field_mib: int) -> Path:
    packer = zlib.compressobj(6, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    with path.open("wb") as out:
        out.write(packer.compress(b"TY  - JOUR\nTI  - "))
        block = b"A" * MiB
        for _ in range(field_mib):
            out.write(packer.compress(block))
        out.write(packer.compress(b"\nER  - \n"))
        out.write(packer.flush())
    return path


def _submit(page: Page, path: Path) -> None:
    page.get_by_label("File", exact=True).set_input_files(path)
    page.get_by_role("button", name="Import", exact=True).click()


def test_the_import_form_reports_the_limits(
    limited_server: LiveServer, new_page: NewPage, problems: PageProblems, tmp_path: Path
) -> None:
    mixed = tmp_path / "mixed.ris"
    mixed.write_text(
        GOOD + f"TY  - JOUR\nTI  - Overlong\nAB  - {'w' * 20_000}\nER  - \n", encoding="utf-8"
    )
    page = new_page(limited_server)
    page.goto("/library")
    _submit(page, mixed)
    summary = page.get_by_test_id("import-summary")
    expect(summary.locator('[data-field="imported"]')).to_have_text("2")
    items = summary.get_by_test_id("import-problems").get_by_role("listitem")
    expect(items).to_have_count(1)
    expect(items.first).to_contain_text("Record 3: the abstract field holds 20,000 characters")

    _submit(page, _bomb(tmp_path / "bomb.ris.gz", 64))
    summary = page.get_by_test_id("import-summary")
    expect(summary).to_contain_text("bomb.ris.gz")
    expect(summary.get_by_test_id("import-problems")).to_contain_text("decompression bomb")

    big = tmp_path / "big.ris"
    big.write_text(GOOD * 2000, encoding="utf-8")
    _submit(page, big)
    alert = page.get_by_test_id("import-status").get_by_role("alert")
    expect(alert).to_have_attribute("data-code", "too_large")
    expect(alert.locator(".problem-message")).to_contain_text("big.ris was not imported.")
    problems.expect_failed_loads(413)
    problems.assert_none()
