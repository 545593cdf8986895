"""Accessibility checks in the browser: axe-core (from the npm registry, pinned in the root
package.json, installed by ``npm install``) injected into the page by Playwright, and a walk
through the page with the Tab key that every control must be reached by, each with a visible
focus indicator."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from playwright.sync_api import Page

from tests.conftest import skip_or_fail

ROOT = Path(__file__).resolve().parents[2]
AXE = ROOT / "node_modules" / "axe-core" / "axe.min.js"
BLOCKING_IMPACTS = frozenset({"serious", "critical"})
LIST_ITEMS_CHECKED = 12
"""Of a run of like items (the rows of a list of results), axe-core checks the first this
many, and so does the focus-style check beyond the Tab walk."""


def require_axe() -> Path:
    """The axe-core script; skips without it (fails under CI, like a missing Chromium)."""
    if not AXE.is_file():
        skip_or_fail(f"accessibility checks need axe-core at {AXE} (run `npm install` at {ROOT})")
    return AXE


# The items after the first ``keep`` of every run of like siblings (same tag and class, e.g.
# the rows of a list of results): what the checks may leave out on a long page.
REPEATS_JS = """
() => {
  window.__repeats = (root, keep) => {
    const out = [];
    for (const parent of [root, ...root.querySelectorAll("*")]) {
      // (a select's options stay: taking one out would change what is selected)
      if (parent.children.length <= keep || parent.matches("select, datalist, optgroup")) continue;
      const seen = new Map();
      for (const child of parent.children) {
        const kind = child.tagName + "." + child.className;
        const n = (seen.get(kind) || 0) + 1;
        seen.set(kind, n);
        if (n > keep) out.push(child);
      }
    }
    return out;
  };
}
"""

# --- axe-core -------------------------------------------------------------------------------


def axe_violations(page: Page, axe: Path, scope: str | None = None) -> list[str]:
    """The serious and critical axe-core violations of the page as it is now (or of the part
    ``scope`` selects), one line each: the rule, what it asks, and the first elements that
    break it."""
    if not page.evaluate("() => typeof window.axe === 'object'"):
        page.add_script_tag(path=str(axe))
    page.evaluate(REPEATS_JS)
    results: list[dict[str, Any]] = page.evaluate(
        """async ([scope, keep]) => {
          // A long run of like items is checked on its first ones: the rest repeat them, and
          // axe's time grows with the whole document, so they leave it while axe runs.
          const root = scope ? document.querySelector(scope) : document;
          const away = window.__repeats(document.documentElement, keep).map((item) => {
            const mark = document.createComment("");
            item.replaceWith(mark);
            return [mark, item];
          });
          let result;
          try {
            result = await axe.run(root, { resultTypes: ["violations"] });
          } finally {
            for (const [mark, item] of away) mark.replaceWith(item);
          }
          return result.violations.map((v) => ({
            id: v.id, impact: v.impact, help: v.help,
            nodes: v.nodes.map((n) => ({ target: n.target.join(" "), html: n.html })),
          }));
        }""",
        [scope, LIST_ITEMS_CHECKED],
    )
    lines: list[str] = []
    for violation in results:
        if violation["impact"] not in BLOCKING_IMPACTS:
            continue
        nodes = violation["nodes"]
        shown = "; ".join(f"{n['target']} {_short(n['html'])}" for n in nodes[:3])
        more = f" (+{len(nodes) - 3} more)" if len(nodes) > 3 else ""
        lines.append(
            f"{violation['id']} ({violation['impact']}, {len(nodes)} element(s)): "
            f"{violation['help']}: {shown}{more}"
        )
    return lines


def _short(html: str, limit: int = 110) -> str:
    html = " ".join(html.split())
    return html if len(html) <= limit else html[: limit - 1] + "…"


# --- the keyboard ---------------------------------------------------------------------------

# Marks every control a keyboard user must reach (in document order) inside the page or a part
# of it, remembers how each one (with its parent and labels, which may carry the indicator)
# looks unfocused, and records each element that then gets focus. Transitions are turned off
# so that a focus style is read as it ends up, not halfway.
PREPARE_WALK_JS = """
(scope) => {
  const root = scope ? document.querySelector(scope) : document.body;
  const SELECTOR = "a[href], button, input:not([type=hidden]), select, textarea, summary, "
    + "[tabindex], [contenteditable=''], [contenteditable=true], audio[controls], video[controls]";
  const style = document.createElement("style");
  style.id = "__kb_style";
  style.textContent = "*, *::before, *::after "
    + "{ transition: none !important; animation: none !important; }";
  document.head.append(style);
  document.activeElement?.blur?.();  // every control is measured unfocused

  const look = (el) => {
    const s = getComputedStyle(el);
    const outline = s.outlineStyle === "none" || parseFloat(s.outlineWidth) === 0
      ? "none" : `${s.outlineStyle} ${s.outlineWidth} ${s.outlineColor} ${s.outlineOffset}`;
    return [outline, s.boxShadow, s.borderTopColor, s.borderBottomColor, s.borderLeftColor,
      s.borderTopWidth, s.borderBottomWidth, s.backgroundColor, s.textDecorationLine].join("|");
  };
  const carriers = (el) =>
    [el, el.parentElement, ...(el.labels ? [...el.labels] : [])].filter(Boolean);
  const looks = (el) => carriers(el).map(look).join("||");
  const shown = (el) => el.checkVisibility({ visibilityProperty: true });
  const describe = (el) => {
    const name = (el.getAttribute("aria-label") || el.innerText || el.value || el.name
      || el.getAttribute("placeholder") || el.id || "").trim().replace(/\\s+/g, " ").slice(0, 50);
    const testid = el.closest("[data-testid]")?.getAttribute("data-testid");
    const type = el.tagName === "INPUT" ? `[${el.type}]` : "";
    return `${el.tagName.toLowerCase()}${type} "${name}"`
      + (testid ? ` in [data-testid=${testid}]` : "");
  };

  const expected = [];
  const radioGroups = new Map();
  for (const el of root.querySelectorAll(SELECTOR)) {
    if (el.disabled || el.tabIndex < 0 || el.closest("[inert]") || !shown(el)) continue;
    el.__kbRest = looks(el);
    if (el.type === "radio" && el.name) {
      // One stop per radio group (the arrow keys move inside it): any member covers it.
      const group = `${el.form ? [...document.forms].indexOf(el.form) : -1}:${el.name}`;
      if (radioGroups.has(group)) {
        el.__kbIndex = radioGroups.get(group);
        continue;
      }
      radioGroups.set(group, expected.length);
    }
    el.__kbIndex = expected.length;
    expected.push(el);
  }

  // Controls by role (or a click attribute) that Tab can never reach.
  const ROLES = "[role=button], [role=link], [role=checkbox], [role=switch], [role=tab], "
    + "[role=menuitem], [role=option], [role=radio], [onclick]";
  const ROVING = new Set(["tab", "menuitem", "option", "radio"]);
  const unreachable = [];
  for (const el of root.querySelectorAll(ROLES)) {
    if (el.tabIndex >= 0 || el.matches(":disabled, [aria-disabled=true]") || !shown(el)) continue;
    const role = el.getAttribute("role");
    const group = el.parentElement?.closest("[role]") || el.parentElement;
    if (ROVING.has(role) && group?.querySelector(`[role=${role}][tabindex="0"]`)) continue;
    unreachable.push(describe(el));
  }

  const kb = { root, expected, log: [], describe, looks, unreachable };
  kb.onFocus = (event) => {
    const el = event.target;
    kb.log.push({
      index: el.__kbIndex ?? null,
      inside: root.contains(el) && el.id !== "__kb_start",
      name: describe(el),
      visible: el.__kbRest === undefined || looks(el) !== el.__kbRest,
    });
  };
  window.__kb = kb;
  document.addEventListener("focusin", kb.onFocus, true);
  // Start the walk at the top of the page (or part): focus a stand-in first element, then Tab.
  const start = document.createElement("span");
  start.tabIndex = -1;
  start.id = "__kb_start";
  root.prepend(start);
  start.focus();
  return expected.length;
}
"""

# Where the walk is: done when it reached the last control, or focus left the page (or part).
WALK_STATUS_JS = """
(walked) => {
  const kb = window.__kb;
  const last = walked - 1;
  const entered = kb.log.some((e) => e.inside);
  const lastEntry = kb.log[kb.log.length - 1];
  const left = entered && lastEntry && !lastEntry.inside
    || entered && !kb.root.contains(document.activeElement);
  return last < 0 || left || kb.log.some((e) => e.index === last);
}
"""

# The outcome of the walk; then every control is focused by script (after the Tab presses, so
# Chromium shows focus as for the keyboard, :focus-visible) to read its focus style.
FINISH_WALK_JS = """
([walked, keep]) => {
  const kb = window.__kb;
  document.removeEventListener("focusin", kb.onFocus, true);
  document.getElementById("__kb_start")?.remove();
  const reached = new Map();
  const order = [];
  for (const entry of kb.log) {
    if (entry.index === null) continue;
    if (reached.has(entry.index)) break;  // round the page again
    reached.set(entry.index, entry.visible);
    order.push(entry.index);
  }
  const missed = kb.expected.slice(0, walked)
    .filter((el) => !reached.has(el.__kbIndex)).map(kb.describe);
  const outOfOrder = [];
  for (let i = 1; i < order.length; i++) {
    if (order[i] < order[i - 1]) outOfOrder.push(kb.describe(kb.expected[order[i]]));
  }
  const invisible = [];
  const repeats = window.__repeats(kb.root, keep);
  for (const el of kb.expected) {
    let visible = reached.get(el.__kbIndex);
    if (visible === undefined && repeats.some((item) => item.contains(el))) continue;
    if (visible === undefined) {
      el.focus({ preventScroll: true });
      visible = document.activeElement !== el || kb.looks(el) !== el.__kbRest;
    }
    if (!visible) invisible.push(kb.describe(el));
  }
  document.activeElement?.blur?.();
  document.getElementById("__kb_style")?.remove();
  delete window.__kb;
  return { missed, invisible, outOfOrder, unreachable: kb.unreachable };
}
"""

MAX_TABS = 120
"""The Tab key walks this many controls at most; the rest of a longer page is checked for a
visible focus by focusing each one from script. (Every Tab press is a round trip to the
browser: a results page of 400 controls would take most of the time budget.)"""
_BATCH = 10


def keyboard_walk(page: Page, scope: str | None = None) -> list[str]:
    """Tab through the page (or the part ``scope`` selects) from its top: every visible, enabled
    control gets focus, in document order, and shows that it has it; no control made of a role
    stays out of reach. Returns what fails, one line per kind."""
    count: int = page.evaluate(PREPARE_WALK_JS, scope)
    walked = min(count, MAX_TABS)
    presses = 0
    while presses < walked + 20:
        for _ in range(_BATCH):
            page.keyboard.press("Tab")
        presses += _BATCH
        if presses >= walked and page.evaluate(WALK_STATUS_JS, walked):
            break
    page.evaluate(REPEATS_JS)
    result: dict[str, Any] = page.evaluate(FINISH_WALK_JS, [walked, LIST_ITEMS_CHECKED])
    problems: list[str] = []
    if result["missed"]:
        problems.append(
            f"{len(result['missed'])} of {walked} controls walked never got focus with Tab: "
            f"{_list(result['missed'])}"
        )
    if result["unreachable"]:
        problems.append(
            f"{len(result['unreachable'])} control(s) with a role but no tabindex: "
            f"{_list(result['unreachable'])}"
        )
    if result["outOfOrder"]:
        problems.append(f"focus left document order at: {_list(result['outOfOrder'])}")
    if result["invisible"]:
        problems.append(
            f"{len(result['invisible'])} of {count} control(s) show no visible focus (outline, "
            f"box-shadow, border or background unchanged): {_list(result['invisible'])}"
        )
    return problems


def _list(items: list[str], limit: int = 6) -> str:
    unique = list(dict.fromkeys(items))
    more = f" (+{len(unique) - limit} more)" if len(unique) > limit else ""
    return "; ".join(unique[:limit]) + more
