"""What every page of the first-hour journey must hold, checked in the browser: no console
errors, no HTTP failure the page did not ask for, no horizontal scrolling at phone and desktop
widths, and no visible text that leaks the product's internals.

A check returns findings instead of raising, so one run of the journey reports every problem of
every page (tests/web/test_first_hour.py fails at the end with all of them, grouped by area).
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from playwright.sync_api import ConsoleMessage, Page, Request, Response

# --- findings -------------------------------------------------------------------------------

AREAS = (
    "home/nav",
    "library",
    "search",
    "streams",
    "chat tray",
    "research",
    "trials",
    "screening",
)
"""The areas of the product a finding belongs to, in the order the report lists them."""


@dataclass(frozen=True)
class Finding:
    area: str
    page: str
    check: str
    detail: str

    def line(self) -> str:
        return f"  [{self.page}] {self.check}: {self.detail}"


@dataclass
class Findings:
    items: list[Finding] = field(default_factory=list)

    def add(self, area: str, page: str, check: str, detail: str) -> None:
        self.items.append(Finding(area, page, check, detail))

    def report(self) -> str:
        """Every finding, grouped by area in the order of ``AREAS``; a problem seen again at a
        later stop is listed once, with the other pages it was seen on."""
        seen: dict[tuple[str, str], list[Finding]] = {}
        for finding in self.items:
            seen.setdefault((finding.check, finding.detail), []).append(finding)
        order = {area: index for index, area in enumerate(AREAS)}
        firsts = [same[0] for same in seen.values()]
        areas = sorted({f.area for f in firsts}, key=lambda a: order.get(a, len(order)))
        lines = [f"{len(firsts)} problem(s) on the first-hour journey:"]
        for area in areas:
            lines.append(f"{area}:")
            for first in (f for f in firsts if f.area == area):
                again = [f.page for f in seen[(first.check, first.detail)][1:]]
                lines.append(first.line() + (f" (also at: {', '.join(again)})" if again else ""))
        return "\n".join(lines)


# --- what leaks internals: the pattern list, in one place -----------------------------------

UUID = r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"

LEAKS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("a library's name", re.compile(r"pydantic", re.I)),
    ("a Python traceback", re.compile(r"Traceback|File \"[^\"]+\", line \d+")),
    ("a validation library's message", re.compile(r"validation errors?( for)?", re.I)),
    ("an exception class name", re.compile(r"\b[A-Z][a-zA-Z]+(?:Error|Exception)\b")),
    ("a UUID as visible text", re.compile(UUID, re.I)),
    ("a snake_case field name", re.compile(r"\b[a-z]+_[a-z_]+\b")),
    # An enum value ("NOT_YET_RECRUITING") or a setting's name outside a code sample.
    ("an identifier in capitals", re.compile(r"\b[A-Z][A-Z0-9]*_[A-Z0-9_]*[A-Z0-9]\b")),
    # A terminal command in a web page ("'scholarstream models' lists the configured ones"):
    # the product's name in lower case is its command.
    ("a command for the terminal", re.compile(r"\bscholarstream\s+[a-z][a-z-]+")),
    # Text written for a model, shown to the user (issue 26, the chat tray).
    ("text meant for the model", re.compile(r"\bTell the user\b|\(sources that returned each")),
)
"""(what it is, pattern). A match in the visible text of a page is a finding."""

# What may legitimately hold an underscore or a UUID in visible text. Kept minimal:
# - code samples (<code>, <pre>, <kbd>, <samp>) and what the user typed (<textarea>, <input>)
#   are skipped before matching (VISIBLE_TEXT_JS), not allowed here;
# - a web address or e-mail address shows what it is, underscores included;
# - a file name with its extension is the user's own (e.g. "Imported from my_export.ris").
ALLOWED_IN_TEXT = re.compile(
    r"https?://\S+"
    r"|\b[\w.+-]+@[\w-]+\.[\w.-]+\b"
    r"|\b[\w.-]+\.(?:ris|bib|bibtex|nbib|txt|csv|tsv|xml|json|enw|html|pdf|png|svg)\b",
    re.I,
)

VISIBLE_TEXT_JS = """
(scope) => {
  const root = scope ? document.querySelector(scope) : document.body;
  const SKIP = "code, pre, kbd, samp, script, style, noscript, template, textarea";
  const where = (el) => {
    const parts = [];
    for (let node = el; node && node !== document.body && parts.length < 3;
         node = node.parentElement) {
      const testid = node.getAttribute("data-testid");
      const id = node.id;
      const role = node.getAttribute("role");
      const label = testid ? `[data-testid=${testid}]`
        : id ? `#${id}` : role ? `[role=${role}]` : "";
      if (label || parts.length === 0) parts.unshift(node.tagName.toLowerCase() + label);
    }
    return parts.join(" ");
  };
  const shown = (el) => el.checkVisibility({ visibilityProperty: true });
  const out = [];
  const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    const text = node.nodeValue.trim();
    const parent = node.parentElement;
    if (!text || !parent || parent.closest(SKIP) || !shown(parent)) continue;
    out.push({ text, where: where(parent) });
  }
  const ATTRS = ["placeholder", "aria-label", "title", "alt"];
  for (const el of root.querySelectorAll(ATTRS.map((a) => `[${a}]`).join(","))) {
    if (el.closest("code, pre, kbd, samp") || !shown(el)) continue;
    for (const name of ATTRS) {
      const value = (el.getAttribute(name) || "").trim();
      if (value) out.push({ text: value, where: `${where(el)} @${name}` });
    }
  }
  return out;
}
"""


def leaks(page: Page, scope: str | None = None) -> list[str]:
    """Each piece of visible text (and each shown attribute) of the page, or of the part
    ``scope`` selects, that matches ``LEAKS``."""
    found: list[str] = []
    seen: set[tuple[str, str]] = set()
    for piece in page.evaluate(VISIBLE_TEXT_JS, scope):
        text = ALLOWED_IN_TEXT.sub(" ", piece["text"])
        for what, pattern in LEAKS:
            match = pattern.search(text)
            if match and (what, match.group(0)) not in seen:
                seen.add((what, match.group(0)))
                found.append(f'{what} "{match.group(0)}" in {piece["where"]}: "{_cut(text)}"')
    return found


def _cut(text: str, limit: int = 140) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


# --- horizontal overflow -------------------------------------------------------------------

WIDTHS = {"mobile": (390, 844), "desktop": (1440, 900)}

OVERFLOW_JS = """
() => {
  const width = window.innerWidth;
  const root = document.documentElement;
  if (root.scrollWidth <= width) return null;
  // The deepest elements that stick out past the right edge: what to fix.
  const culprits = [];
  for (const el of document.body.querySelectorAll("*")) {
    const box = el.getBoundingClientRect();
    if (box.right <= width + 1 || box.width === 0 || !el.checkVisibility()) continue;
    if ([...el.children].some((c) => c.getBoundingClientRect().right > width + 1)) continue;
    const testid = el.closest("[data-testid]")?.getAttribute("data-testid");
    const cls = typeof el.className === "string" && el.className
      ? "." + el.className.trim().split(/\\s+/).join(".") : "";
    const where = testid ? ` in [data-testid=${testid}]` : "";
    const right = Math.round(box.right);
    culprits.push(`${el.tagName.toLowerCase()}${cls}${where} (right edge ${right} px)`);
    if (culprits.length >= 3) break;
  }
  return { scrollWidth: root.scrollWidth, width, culprits };
}
"""


def overflow(page: Page) -> str | None:
    """Why the page scrolls sideways at its current width, or None when it does not."""
    result = page.evaluate(OVERFLOW_JS)
    if result is None:
        return None
    culprits = "; ".join(result["culprits"]) or "no single element found"
    return (
        f"page is {result['scrollWidth']} px wide in a {result['width']} px window "
        f"(document.documentElement.scrollWidth > innerWidth): {culprits}"
    )


def settle(page: Page) -> None:
    """Wait for two animation frames: layout after a resize or a render has happened."""
    page.evaluate("() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))")


# --- the page's console and network -------------------------------------------------------


@dataclass
class PageWatch:
    """Records, between two stops of the journey, console errors, uncaught exceptions and every
    HTTP answer of 400 or more that the journey did not declare with ``expect_status``."""

    console: list[tuple[str, str]] = field(default_factory=list)
    failures: list[tuple[str, str]] = field(default_factory=list)
    _expected_hits: set[str] = field(default_factory=set)
    _allowed: list[tuple[range, re.Pattern[str]]] = field(default_factory=list)
    _in_flight: set[Request] = field(default_factory=set)

    def attach(self, page: Page) -> None:
        page.on("request", self._on_request)
        page.on("requestfinished", self._on_request_done)
        page.on("requestfailed", self._on_request_done)
        page.on("console", self._on_console)
        page.on("pageerror", self._on_page_error)
        page.on("response", self._on_response)

    @contextmanager
    def expect_status(self, status: int | range, url: str) -> Iterator[None]:
        """Within the block, answers ``status`` (one, or a range) to URLs matching the regex
        ``url`` are expected (and so are Chromium's console lines about them)."""
        statuses = range(status, status + 1) if isinstance(status, int) else status
        entry = (statuses, re.compile(url))
        self._allowed.append(entry)
        try:
            yield
        finally:
            self._allowed.remove(entry)

    def drain(self) -> tuple[list[str], list[str]]:
        """(console errors, unexpected HTTP failures) since the last drain. Chromium's own
        "Failed to load resource" line is left out for a load already counted as an HTTP
        failure, or expected."""
        failed = {url for _, url in self.failures} | self._expected_hits
        console = [
            f"{text} ({url})" if url else text
            for text, url in self.console
            if not (text.startswith("Failed to load resource") and url in failed)
        ]
        failures = [line for line, _ in self.failures]
        self.console, self.failures, self._expected_hits = [], [], set()
        return console, failures

    def idle(self, page: Page, quiet_ms: float = 300, timeout_ms: float = 2_500) -> None:
        """Wait until no request of the page has been in flight for ``quiet_ms`` (a page that
        keeps polling or streaming is waited for no longer than ``timeout_ms``)."""
        deadline = time.monotonic() + timeout_ms / 1000
        quiet_since = time.monotonic()
        while time.monotonic() < deadline:
            page.wait_for_timeout(50)
            if self._in_flight:
                quiet_since = time.monotonic()
            elif time.monotonic() - quiet_since >= quiet_ms / 1000:
                return

    def _on_request(self, request: Request) -> None:
        self._in_flight.add(request)

    def _on_request_done(self, request: Request) -> None:
        self._in_flight.discard(request)

    def _on_page_error(self, error: Exception) -> None:
        self.console.append((f"uncaught exception: {error}", ""))

    def _on_console(self, message: ConsoleMessage) -> None:
        if message.type == "error":
            self.console.append((message.text, str(message.location.get("url") or "")))

    def _on_response(self, response: Response) -> None:
        if response.status < 400:
            return
        if any(response.status in s and url.search(response.url) for s, url in self._allowed):
            self._expected_hits.add(response.url)
            return
        line = f"{response.request.method} {response.url} answered {response.status}"
        self.failures.append((line, response.url))
