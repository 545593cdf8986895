"""Regenerate the screenshots of the main pages in docs/screenshots/ (desktop 1440 px and mobile
390 px wide), by walking a new user's first hour (tests/web/_journey.py) in Debian's Chromium
against a real app started here: embedded defaults, a temporary SQLite database, no model,
every literature source answered from recorded responses. Nothing reaches the network.

    .venv/bin/python scripts/screenshots.py            # writes docs/screenshots/*.png
    .venv/bin/python scripts/screenshots.py --out /tmp/shots

Needs the test extras (``pip install -e ".[test]"``), the shared test data (../shared/data) and
/usr/bin/chromium. See docs/ui-checks.md.
"""

from __future__ import annotations

import argparse
import socket
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from playwright.sync_api import Page, Route, sync_playwright  # noqa: E402
from tests import conftest  # noqa: E402
from tests.web._checks import WIDTHS, Findings, PageWatch, settle  # noqa: E402
from tests.web._journey import FirstHour, OfflineWorld  # noqa: E402
from tests.web.live import CHROMIUM, CHROMIUM_ARGS, clean_settings, is_foreign, serve  # noqa: E402

DEFAULT_OUT = ROOT / "docs" / "screenshots"
SCROLL_TO = {"search-results": "[data-testid=review]"}
"""Screenshots taken with this part of the page at the top (else the page's top is shown)."""


class Screenshots:
    """The ``Observer`` of the journey that photographs each stop that has a screenshot name."""

    def __init__(self, out: Path) -> None:
        self.out = out
        self.written: list[Path] = []

    def stop(self, page: Page, area: str, name: str, shot: str | None, scope: str | None) -> None:
        if shot is None:
            return
        for label in ("desktop", "mobile"):
            width, height = WIDTHS[label]
            page.set_viewport_size({"width": width, "height": height})
            if shot in SCROLL_TO:
                page.locator(SCROLL_TO[shot]).first.evaluate("(el) => el.scrollIntoView()")
            settle(page)
            path = self.out / f"{shot}-{label}.png"
            page.screenshot(path=str(path))
            self.written.append(path)
        width, height = WIDTHS["desktop"]
        page.set_viewport_size({"width": width, "height": height})
        page.evaluate("() => window.scrollTo(0, 0)")
        settle(page)


def _local_only(route: Route) -> None:
    if is_foreign(route.request.url):
        route.abort("blockedbyclient")
    else:
        route.continue_()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="where to write the PNGs")
    args = parser.parse_args()
    if not CHROMIUM.exists():
        print(f"Needs Debian's Chromium at {CHROMIUM} (apt-get install chromium).", file=sys.stderr)
        return 1
    # The same guard as the tests: the app may talk to this machine only.
    socket.socket.connect = conftest._guarded_connect  # type: ignore[method-assign,assignment]
    socket.socket.connect_ex = conftest._guarded_connect_ex  # type: ignore[method-assign,assignment]
    args.out.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="scholarstream-shots-") as temp:
        data = Path(temp) / "data"
        settings = clean_settings(data)
        with (
            serve(settings, source_transport=OfflineWorld().transport(), engine=True) as live,
            sync_playwright() as playwright,
        ):
            browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
            width, height = WIDTHS["desktop"]
            context = browser.new_context(
                base_url=live.base_url, viewport={"width": width, "height": height}
            )
            context.set_default_timeout(15_000)
            context.route("**/*", _local_only)
            page = context.new_page()
            watch = PageWatch()
            watch.attach(page)
            shots = Screenshots(args.out)
            FirstHour(page, watch, shots, Findings(), downloads=Path(temp)).run()
            browser.close()
    for path in shots.written:
        print(path.relative_to(ROOT) if path.is_relative_to(ROOT) else path)
    print(f"{len(shots.written)} screenshots in {time.monotonic() - started:.0f} s.")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
