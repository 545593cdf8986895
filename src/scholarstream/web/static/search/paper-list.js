// The scored papers of a search as a compact list: one row per paper (title, first
// author, venue, year, the sources of this search, relevance), the abstract's first line
// under it, the whole abstract and the reason on demand, and the user's marks. The list
// is worked by keyboard: j / k (or the arrows) move between papers, r and i mark them
// relevant or not, Enter or Space opens the abstract. Text from sources and models only
// ever becomes text nodes.

import { codeLabel, el, externalLink, safeUrl, setPressed, toggleButton } from "/static/app/shared/dom.js";
import { phaseLabels, venueLine } from "/static/app/shared/records.js";

const DIMENSIONS = { theme: "Theme", year: "Year", study_type: "Study type", source: "Source" };
const JUDGEMENTS = [["", "All"], ["relevant", "Relevant"], ["irrelevant", "Not relevant"], ["unmarked", "Unmarked"]];
const MARK_KEYS = { r: "relevant", i: "irrelevant" };

let sourceNames = (name) => name;
let rowCount = 0; // ids of the rows' parts, unique on the page

/** How sources are named (``name -> label``), set once the page knows them. */
export function setSourceNamer(namer) {
  sourceNames = namer;
}

function paperUrl(record) {
  if (record.ids?.doi) return `https://doi.org/${encodeURI(record.ids.doi)}`;
  if (record.ids?.nct_id) return `https://clinicaltrials.gov/study/${encodeURIComponent(record.ids.nct_id)}`;
  const links = record.links ?? [];
  const landing = links.find((link) => link.kind === "landing" && safeUrl(link.url)) ??
    links.find((link) => safeUrl(link.url));
  return landing?.url ?? null;
}

function familyName(author) {
  if (author.family) return author.family;
  const name = String(author.name ?? "").trim();
  return name.includes(",") ? name.split(",")[0].trim() : name;
}

/** "Engelhardt", "Engelhardt & Stock", "Engelhardt et al.". */
export function shortAuthors(authors = []) {
  const names = authors.map(familyName).filter(Boolean);
  if (names.length === 0) return "";
  if (names.length === 1) return names[0];
  if (names.length === 2) return `${names[0]} & ${names[1]}`;
  return `${names[0]} et al.`;
}

const SMALL_WORDS = new Set(["a", "an", "and", "at", "de", "for", "in", "of", "on", "the", "to", "und"]);

/** A name written in capitals ("VETERINARY OPHTHALMOLOGY", as Web of Science writes
 * journals) in title case; any other name as it is. */
export function readable(name) {
  const text = String(name ?? "").trim();
  if (!/[A-Z]{4}/.test(text) || text !== text.toUpperCase()) return text;
  return text.toLowerCase().split(" ").map((word, index) =>
    (index > 0 && SMALL_WORDS.has(word) ? word : word.charAt(0).toUpperCase() + word.slice(1))).join(" ");
}

function year(record) {
  return record.year ?? (record.start_date ? record.start_date.slice(0, 4) : null);
}

function abstractOf(record) {
  const text = record.kind === "trial" ? record.summary : record.abstract;
  return String(text ?? "").replace(/\s+/g, " ").trim();
}

/** An origin's name: a file format's label ("RIS file") or a source's. */
export function originLabel(name, labels = {}) {
  return labels[name] ?? sourceNames(name);
}

/**
 * One paper as a row. ``marks`` (a Map of id -> "relevant" | "irrelevant") and ``onMark``
 * make it markable; ``originLabels`` names the file formats of its origins.
 */
export function paperItem(paper, { marks = null, onMark = null, originLabels = {} } = {}) {
  const record = paper.record;
  const url = paperUrl(record);
  const n = ++rowCount;
  const titleId = `paper-${n}-title`;
  const moreId = `paper-${n}-more`;
  const abstract = abstractOf(record);
  const where = readable(record.kind === "trial" ? record.sponsor : record.venue);
  const meta = [shortAuthors(record.authors ?? []), where, year(record)].filter(Boolean);
  const label = paper.label
    ? el("span", { class: `badge label-${paper.label}`, dataset: { field: "label" } },
      paper.label === "relevant" ? "Relevant" : "Not relevant")
    : null;

  const preview = el("p", { class: abstract ? "abstract-preview" : "abstract-preview muted", "aria-hidden": "true" },
    abstract || "No abstract.");
  const origins = paper.origins ?? [];
  const more = el("div", { class: "paper-more", id: moreId, hidden: true },
    abstract ? el("p", { class: "abstract", dataset: { field: "abstract" } }, abstract) : null,
    paper.reason
      ? el("p", { class: "reason" }, el("strong", {}, "Why this score: "),
        el("span", { dataset: { field: "reason" } }, paper.reason))
      : null,
    origins.length
      ? el("p", { class: "origins muted", dataset: { field: "origins" } },
        `In your library from: ${origins.map((name) => originLabel(name, originLabels)).join(", ")}`)
      : null,
    record.kind === "trial" && record.phases?.length
      ? el("p", { class: "muted" }, `Phase: ${phaseLabels(record.phases)} · ${codeLabel(record.status)}`)
      : null,
    record.kind !== "trial" && venueLine(record) && venueLine(record) !== record.venue
      ? el("p", { class: "muted" }, venueLine(record))
      : null);
  const expand = el("button", {
    type: "button",
    class: "expand",
    "aria-expanded": "false",
    "aria-controls": moreId,
    "aria-describedby": titleId,
    dataset: { action: "expand" },
  }, abstract ? "Abstract" : "Details");

  const side = el("div", { class: "paper-side" }, expand);
  const item = el("li", {
    class: "record-item paper",
    tabindex: "-1",
    "aria-labelledby": titleId,
    dataset: { paperId: paper.id },
  },
  el("h4", { class: "paper-title", id: titleId }, url ? externalLink(url, record.title) : record.title),
  el("p", { class: "meta paper-meta" },
    meta.length ? el("span", { class: "paper-where", title: meta.join(" · ") }, meta.join(" · ")) : null,
    el("span", { class: "score", dataset: { field: "score" }, title: "Relevance to your question, 0 to 1" },
      `Relevance ${paper.score.toFixed(2)}`),
    (paper.sources ?? []).map((source) => el("span", { class: "badge source", dataset: { source } },
      sourceNames(source))),
    label),
  side,
  preview,
  more);

  const setExpanded = (open) => {
    more.hidden = !open;
    preview.hidden = open;
    expand.setAttribute("aria-expanded", String(open));
    item.classList.toggle("expanded", open);
  };
  expand.addEventListener("click", () => setExpanded(more.hidden));
  preview.addEventListener("click", () => setExpanded(true));
  item.toggleExpanded = () => setExpanded(more.hidden);

  if (marks && onMark) {
    const relevant = toggleButton("Relevant", { attrs: { dataset: { mark: "relevant" }, "aria-describedby": titleId } });
    const irrelevant = toggleButton("Not relevant", {
      attrs: { dataset: { mark: "irrelevant" }, "aria-describedby": titleId },
    });
    const sync = () => {
      setPressed(relevant, marks.get(paper.id) === "relevant");
      setPressed(irrelevant, marks.get(paper.id) === "irrelevant");
      item.dataset.mark = marks.get(paper.id) ?? "";
    };
    sync();
    const mark = (value) => {
      if (marks.get(paper.id) === value) marks.delete(paper.id);
      else marks.set(paper.id, value);
      sync();
      onMark();
    };
    relevant.addEventListener("click", () => mark("relevant"));
    irrelevant.addEventListener("click", () => mark("irrelevant"));
    item.mark = mark;
    side.append(
      el("div", { class: "marks", role: "group", "aria-label": `Your judgement of ${record.title}` },
        relevant, irrelevant));
  }
  return item;
}

function shownItems(list) {
  return [...list.children].filter((item) => !item.hidden && !item.classList.contains("ai-filtered-out"));
}

function focusItem(list, item) {
  if (!item) return;
  for (const other of list.children) other.tabIndex = other === item ? 0 : -1;
  item.focus();
  item.scrollIntoView({ block: "nearest" });
}

function typing(target) {
  return target.closest("input, textarea, select, [contenteditable]") !== null;
}

/**
 * Keys on the list: j / ArrowDown and k / ArrowUp move between the papers shown, r and i
 * mark the paper in focus, or the paper of the button in focus (when ``markable``), Enter
 * or Space on a paper opens or closes its abstract. One paper at a time is in the tab order
 * (the first shown, then the one last in focus).
 */
export function listKeys(list, { markable }) {
  const first = () => shownItems(list)[0];
  const reset = () => {
    const current = [...list.children].find((item) => item.tabIndex === 0 && !item.hidden);
    if (!current) focusable(first());
  };
  const focusable = (item) => {
    for (const other of list.children) other.tabIndex = other === item ? 0 : -1;
  };
  // The paper itself in focus becomes the list's tab stop (its links and buttons keep
  // their own places in the tab order).
  list.addEventListener("focusin", (event) => {
    if (event.target.parentElement === list) focusable(event.target);
  });
  list.addEventListener("keydown", (event) => {
    if (event.altKey || event.ctrlKey || event.metaKey || typing(event.target)) return;
    const item = event.target.closest("li.paper");
    if (!item || item.parentElement !== list) return;
    const shown = shownItems(list);
    const at = shown.indexOf(item);
    const key = keyName(event);
    if (key === "j" || key === "ArrowDown") {
      focusItem(list, shown[Math.min(at + 1, shown.length - 1)] ?? item);
    } else if (key === "k" || key === "ArrowUp") {
      focusItem(list, shown[Math.max(at - 1, 0)] ?? item);
    } else if (markable && MARK_KEYS[key] && item.mark) {
      item.mark(MARK_KEYS[key]);
    } else if ((key === "Enter" || key === " ") && event.target === item) {
      item.toggleExpanded();
    } else {
      return;
    }
    event.preventDefault();
  });
  reset();
  activeList = { list, markable };
  return { reset };
}

function keyName(event) {
  return event.key.length === 1 ? event.key.toLowerCase() : event.key;
}

// The keys work from anywhere on the page, not only inside the list: j, k, r and i
// pressed with no paper in focus (and not in a text field or a control that takes keys)
// go to the list's current paper, the first shown at the start; r and i mark it.
let activeList = null;
const PAGE_KEYS = new Set(["j", "k", "r", "i"]);

document.addEventListener("keydown", (event) => {
  if (event.defaultPrevented || event.altKey || event.ctrlKey || event.metaKey) return;
  const target = event.target instanceof Element ? event.target : document.body;
  if (typing(target) || target.closest('[role="dialog"], dialog, [role="listbox"], [role="menu"]')) return;
  const key = keyName(event);
  if (!PAGE_KEYS.has(key) || !activeList?.list.isConnected) return;
  const { list, markable } = activeList;
  if (list.contains(target)) return; // the list's own handler
  const shown = shownItems(list);
  const item = shown.find((candidate) => candidate.tabIndex === 0) ?? shown[0];
  if (!item) return;
  event.preventDefault();
  focusItem(list, item);
  if (markable && MARK_KEYS[key] && item.mark) item.mark(MARK_KEYS[key]);
});

/** What the keys do, shown above the list. */
export function keyHelp(markable) {
  const kbd = (text) => el("kbd", {}, text);
  return el("p", { class: "key-help muted", dataset: { testid: "key-help" } },
    "Keys: ", kbd("j"), " / ", kbd("k"), " next / previous paper",
    markable ? [" · ", kbd("r"), " relevant · ", kbd("i"), " not relevant (again: unmark)"] : null,
    " · ", kbd("Enter"), " or ", kbd("Space"), " abstract.");
}

function matchesWanted(group, wanted) {
  const text = String(wanted).trim().toLowerCase();
  return group.key.toLowerCase() === text || group.label.toLowerCase() === text;
}

/**
 * The filters of a paper list: one grouping of the collection (theme, year, study type or
 * source) and the user's judgement (``judgement(id)``: "relevant", "irrelevant" or "").
 * Hides the items that do not match. ``apply(filters)`` sets them from a suggestion
 * ({theme, year, study_type, source, label}) and returns the names applied.
 */
export function paperFilters(collection, list, count, judgement, onChange = () => {}) {
  const groupings = (collection.groupings ?? []).filter((g) => g.groups.length > 0);
  const state = { facet: "", label: "" };
  const groupLabel = (dimension, group) => (dimension === "source" ? sourceNames(group.key) : group.label);
  const facet = groupings.length === 0 ? null : el("select", { name: "facet" },
    el("option", { value: "" }, `All papers (${collection.papers.length})`),
    groupings.map((grouping) => el("optgroup", { label: DIMENSIONS[grouping.dimension] ?? grouping.dimension },
      grouping.groups.map((group) => el("option", { value: `${grouping.dimension}:${group.key}` },
        `${groupLabel(grouping.dimension, group)} (${group.paper_ids.length})`)))));
  const label = el("select", { name: "judgement" },
    JUDGEMENTS.map(([value, text]) => el("option", { value }, text)));
  const selected = () => {
    if (!state.facet) return null;
    const at = state.facet.indexOf(":");
    const dimension = state.facet.slice(0, at);
    const key = state.facet.slice(at + 1);
    const group = groupings.find((g) => g.dimension === dimension)?.groups.find((g) => g.key === key);
    return group ? { dimension, group } : null;
  };
  const refresh = () => {
    const chosen = selected();
    const ids = chosen ? new Set(chosen.group.paper_ids) : null;
    let shown = 0;
    for (const item of list.children) {
      const id = item.dataset.paperId;
      const mark = judgement(id);
      const byLabel = state.label === "" ||
        (state.label === "unmarked" ? mark === "" : mark === state.label);
      item.hidden = (ids !== null && !ids.has(id)) || !byLabel;
      if (!item.hidden) shown += 1;
    }
    count.textContent = chosen || state.label ? `Showing ${shown} of ${list.children.length}` : "";
    onChange();
  };
  facet?.addEventListener("change", () => {
    state.facet = facet.value;
    refresh();
  });
  label.addEventListener("change", () => {
    state.label = label.value;
    refresh();
  });
  const apply = (filters) => {
    const applied = [];
    let grouped = false; // the list shows one grouping at a time
    for (const [name, wanted] of Object.entries(filters ?? {})) {
      const dimension = name === "publication_type" ? "study_type" : name;
      const grouping = groupings.find((g) => g.dimension === dimension);
      if (grouping) {
        const text = String(wanted).toLowerCase();
        const group = grouping.groups.find((g) => matchesWanted(g, wanted)) ??
          grouping.groups.find((g) => g.label.toLowerCase().includes(text));
        if (!group || grouped) continue;
        grouped = true;
        state.facet = `${dimension}:${group.key}`;
        facet.value = state.facet;
        applied.push(name);
      } else if (name === "label" || name === "judgement") {
        const text = String(wanted).toLowerCase().replace(/[\s_-]/g, "");
        const value = { relevant: "relevant", irrelevant: "irrelevant", notrelevant: "irrelevant",
          unmarked: "unmarked", all: "", any: "" }[text];
        if (value === undefined) continue;
        state.label = value;
        label.value = value;
        applied.push(name);
      }
    }
    refresh();
    return applied;
  };
  const element = el("div", { class: "facets", dataset: { testid: "facets" } },
    facet ? el("label", {}, "Show ", facet) : null,
    el("label", {}, "Marked ", label),
    count);
  return {
    element,
    apply,
    refresh,
    state() {
      const chosen = selected();
      return {
        grouping: chosen ? { dimension: chosen.dimension, key: chosen.group.key, label: chosen.group.label } : null,
        label: state.label || null,
      };
    },
  };
}

/** The papers as a list with their filters and keys; ``options.marks`` makes them markable. */
export function paperList(collection, options) {
  const markable = Boolean(options.marks && options.onMark);
  const originLabels = collection.stats?.origin_labels ?? {};
  const list = el("ol", { class: "record-list papers", dataset: { testid: "papers" }, "aria-label": "Papers" },
    collection.papers.map((paper) => paperItem(paper, { ...options, originLabels })));
  const count = el("span", { class: "muted", "aria-live": "polite" });
  const labels = new Map(collection.papers.map((paper) => [paper.id, paper.label ?? ""]));
  const judgement = markable ? (id) => options.marks.get(id) ?? "" : (id) => labels.get(id) ?? "";
  const keys = listKeys(list, { markable });
  const filters = paperFilters(collection, list, count, judgement, () => keys.reset());
  return {
    list,
    facets: filters.element,
    filters,
    keyHelp: collection.papers.length ? keyHelp(markable) : null,
  };
}

/** Short fields of a scored paper for the chat's item summaries. */
export function paperSummaryFields(paper, mark) {
  const record = paper.record;
  const fields = {
    authors: (record.authors ?? []).slice(0, 3).map((author) => author.name),
    year: record.year ?? (record.start_date ? Number.parseInt(record.start_date.slice(0, 4), 10) : null),
    score: Math.round(paper.score * 100) / 100,
    sources: paper.sources ?? [],
    origins: paper.origins ?? [],
    reason: paper.reason ?? null,
    mark: mark || null,
  };
  if (record.kind === "trial") {
    Object.assign(fields, {
      nct_id: record.ids?.nct_id ?? null,
      phase: phaseLabels(record.phases ?? []) || null,
      status: codeLabel(record.status) || null,
      sponsor: record.sponsor ?? null,
    });
  } else {
    Object.assign(fields, {
      venue: venueLine(record) || null,
      publication_types: record.publication_types ?? [],
      doi: record.ids?.doi ?? null,
    });
  }
  return fields;
}
