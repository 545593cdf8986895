// The Library page: import a file, search the library, read and delete a record, export;
// collections, tags and notes (labels.js); the merged duplicates (merges.js).
// The search (words, years, type, collection, tag, note, page, open record) lives in the
// URL, so reload and the browser's back button keep it.

import { addAIColumn, attachAIColumns, recordColumnItem } from "/static/app/ai-columns/ai-columns.js";
import { registerAcceptHandler, registerChatContext } from "/static/app/chat/page-context.js";
import { api } from "/static/app/shared/api.js";
import { codeLabel, el, hasAny, renderProblem, renderStatus } from "/static/app/shared/dom.js";
import { authorNames, phaseLabels, renderRecordDetail, venueLine } from "/static/app/shared/records.js";
import { attachLabels, labelsLine } from "/static/app/library/labels.js";
import { attachMerges } from "/static/app/library/merges.js";

const root = document.querySelector('[data-page="library"]');
const importForm = root.querySelector('[data-form="import"]');
const importStatus = root.querySelector('[data-testid="import-status"]');
const searchForm = root.querySelector('[data-form="search"]');
const resultsSection = root.querySelector('[data-testid="results-section"]');
const notice = root.querySelector('[data-testid="notice"]');
const count = root.querySelector('[data-testid="result-count"]');
const list = root.querySelector('[data-testid="results"]');
const pager = root.querySelector('[data-testid="pager"]');
const detail = root.querySelector('[data-testid="detail"]');
const detailRecord = detail.querySelector('[data-role="record"]');
const deleteProblem = detail.querySelector('[data-role="delete-problem"]');
const confirmDialog = root.querySelector('[data-testid="confirm-delete"]');
const screenThese = root.querySelector('[data-testid="screen-these"]');
const searchPanel = root.querySelector('[data-testid="search-panel"]');
const exportLine = root.querySelector('[data-testid="export"]');

const FILTERS = ["q", "year_from", "year_to", "publication_type", "collection", "tag", "has_note"];
const DEFAULT_LIMIT = 20;
const TABLE_KEY = "library";
let generation = 0; // answers to an older request are dropped
let current = null; // the open record: {id, title}
let flash = ""; // a message for the next results shown (e.g. what was deleted)
let shown = null; // the results on screen: {state, page}

const aiColumns = attachAIColumns({ tableKey: TABLE_KEY });
list.before(aiColumns.element);

// --- the URL as state ----------------------------------------------------------------

function readState() {
  const params = new URLSearchParams(window.location.search);
  const number = (name, fallback) => {
    const value = Number.parseInt(params.get(name) ?? "", 10);
    return Number.isFinite(value) && value >= 0 ? value : fallback;
  };
  return {
    q: params.get("q") ?? "",
    year_from: params.get("year_from") ?? "",
    year_to: params.get("year_to") ?? "",
    publication_type: params.get("publication_type") ?? "",
    collection: params.get("collection") ?? "",
    tag: params.get("tag") ?? "",
    has_note: ["true", "false"].includes(params.get("has_note")) ? params.get("has_note") : "",
    offset: number("offset", 0),
    limit: Math.min(Math.max(number("limit", DEFAULT_LIMIT), 1), 500),
    record: params.get("record") ?? "",
  };
}

/** The search's words and filters: what the records, facets and export endpoints share. */
function filterParams(state) {
  const params = new URLSearchParams();
  for (const name of FILTERS) {
    const value = String(state[name] ?? "").trim();
    if (value) params.set(name, value);
  }
  return params;
}

/** The page's own address: the search, the page of results and the open record. */
function pageParams(state) {
  const params = filterParams(state);
  if (state.offset) params.set("offset", String(state.offset));
  if (state.limit && state.limit !== DEFAULT_LIMIT) params.set("limit", String(state.limit));
  if (state.record) params.set("record", state.record);
  return params;
}

function pageUrl(state) {
  const query = pageParams(state).toString();
  return query ? `${window.location.pathname}?${query}` : window.location.pathname;
}

function go(state, { replace = false, historyState = null } = {}) {
  const url = pageUrl(state);
  if (replace) window.history.replaceState(historyState, "", url);
  else window.history.pushState(historyState, "", url);
  return show(state);
}

function fillForm(state) {
  const collection = searchForm.elements.collection;
  if (state.collection && ![...collection.options].some((option) => option.value === state.collection)) {
    collection.append(el("option", { value: state.collection }, "…"));
  }
  const type = searchForm.elements.publication_type;
  if (state.publication_type && ![...type.options].some((option) => option.value === state.publication_type)) {
    type.append(el("option", { value: state.publication_type }, state.publication_type));
  }
  for (const name of FILTERS) searchForm.elements[name].value = state[name];
  const limit = searchForm.elements.limit;
  const value = String(state.limit);
  if (![...limit.options].some((option) => option.value === value)) {
    limit.append(el("option", {}, value));
  }
  limit.value = value;
}

function formState() {
  const data = new FormData(searchForm);
  const state = { offset: 0, record: "" };
  for (const name of FILTERS) state[name] = String(data.get(name) ?? "").trim();
  state.limit = Number.parseInt(String(data.get("limit")), 10) || DEFAULT_LIMIT;
  return state;
}

const exportRelated = root.querySelector('[data-role="export-related"]');
const relatedBox = exportRelated.querySelector("input");

/** Does "all the results" take the records related by meaning too? (They are listed after
 * those with the words; exports and actions take them only when asked.) */
function relatedTaken() {
  return !exportRelated.hidden && relatedBox.checked;
}

function updateExportLinks(state) {
  for (const link of root.querySelectorAll("[data-export]")) {
    const params = new URLSearchParams({ format: link.dataset.export });
    for (const name of FILTERS) {
      if (state[name]) params.set(name, state[name]);
    }
    if (relatedTaken()) params.set("related", "true");
    link.href = `/api/v1/library/export?${params}`;
  }
}

/** The export line and the "all the results" choice, for the results on screen. */
function showExport(state, page) {
  const label = root.querySelector('[data-role="export-label"]');
  const links = root.querySelector('[data-role="export-links"]');
  const related = page && state.q ? page.related : 0;
  exportRelated.hidden = related === 0;
  if (related === 0) relatedBox.checked = false;
  exportRelated.querySelector('[data-role="export-related-label"]').textContent =
    `and the ${related === 1 ? "record" : `${related} records`} related by meaning`;
  const taken = page ? (relatedTaken() ? page.total : page.matching ?? page.total) : 0;
  links.hidden = taken === 0;
  if (!page) label.textContent = "Export what the search lists, best first:";
  else if (taken === 0) label.textContent = "Nothing to export: no record matches this search.";
  else if (state.q) {
    const noun = taken === 1 ? "record" : "records";
    label.textContent = relatedTaken()
      ? `Export the ${taken} ${noun} of this search, best first:`
      : `Export the ${taken} ${noun} with your words, best first:`;
  } else label.textContent = `Export the ${taken} ${taken === 1 ? "record" : "records"} listed:`;
  updateExportLinks(state);
  showScreenLink(state, page);
  labels.setChoices({ selected: selected.size, total: taken });
}

// --- "Screen these": a screening project of what the search lists --------------------

const SCREENED_FILTERS = ["year_from", "year_to", "publication_type", "tag"];

/** The Screening page's New project form, filled in: the collection the search looks in
 *  (all its records), else the search's words and filters (the records with the words, as a
 *  screening project takes them: not those related by meaning). Hidden with nothing to screen. */
function showScreenLink(state, page) {
  const link = screenThese.querySelector('[data-role="screen-link"]');
  const note = screenThese.querySelector('[data-role="screen-note"]');
  const matching = page ? page.matching ?? page.total : 0;
  screenThese.hidden = matching === 0;
  if (matching === 0) return;
  const params = new URLSearchParams();
  let lead = "Screen these records";
  let rest = "in a screening project: by title and abstract, against your criteria, with the PRISMA 2020 counts.";
  if (state.collection) {
    params.set("collection", state.collection);
    lead = "Screen this collection";
    const narrowed = state.q || state.tag || state.has_note || SCREENED_FILTERS.some((name) => state[name]);
    if (narrowed) rest = "in a screening project: all its records, not only those this search lists.";
  } else {
    if (state.q) params.set("query", state.q);
    for (const name of SCREENED_FILTERS) if (state[name]) params.set(name, state[name]);
    if (state.has_note) rest = "in a screening project (the note filter is not kept: every record the other filters find).";
  }
  const query = params.toString();
  link.href = query ? `/screening?${query}` : "/screening";
  link.textContent = lead;
  note.textContent = rest;
}
relatedBox.addEventListener("change", () => showExport(readState(), shown?.page ?? null));

// --- facets: publication types and years of what the search finds, each a filter ------

const facets = root.querySelector('[data-testid="facets"]');
const FACETS_SHOWN = 12;

function facetButton(label, count, narrowed) {
  const button = el("button", { type: "button", class: "link facet" }, `${label} (${count})`);
  button.addEventListener("click", () => go({ ...narrowed, offset: 0, record: "" }));
  return button;
}

/** A row of facets: the first FACETS_SHOWN, and a "show N more" button for the rest (never
 *  cut without saying so). */
function facetRow(role, buttons, [one, many], none = null) {
  const row = facets.querySelector(`[data-role="${role}"]`);
  const hidden = buttons.length - FACETS_SHOWN;
  if (buttons.length === 0) {
    row.replaceChildren(...(none ? [none] : []));
  } else if (hidden <= 0) {
    row.replaceChildren(...buttons);
  } else {
    const more = el("button", { type: "button", class: "link facet-more", dataset: { role: "more" } },
      `show ${hidden} more ${hidden === 1 ? one : many}`);
    more.addEventListener("click", () => {
      row.replaceChildren(...buttons);
      buttons[FACETS_SHOWN]?.focus();
    });
    row.replaceChildren(...buttons.slice(0, FACETS_SHOWN), more);
  }
}

async function showFacets(state) {
  let counts;
  try {
    // The counts are of everything the search finds, whatever page of it is shown.
    counts = await api(`/api/v1/library/facets?${filterParams(state)}`);
  } catch {
    facets.hidden = true; // the results say what went wrong
    return;
  }
  const types = counts.publication_types.map((facet) =>
    facetButton(facet.value.charAt(0).toUpperCase() + facet.value.slice(1), facet.count,
      { ...state, publication_type: facet.value }));
  const years = counts.years.map((facet) =>
    facetButton(facet.value, facet.count, { ...state, year_from: facet.value, year_to: facet.value }));
  const collections = (counts.collections ?? []).map((facet) =>
    facetButton(facet.name, facet.count, { ...state, collection: facet.id }));
  const tags = (counts.tags ?? []).map((facet) =>
    facetButton(facet.value, facet.count, { ...state, tag: facet.value }));
  const notes = counts.with_note
    ? [facetButton("With a note", counts.with_note, { ...state, has_note: "true" })]
    : [];
  facetRow("types", types, ["type", "types"], "none given");
  facetRow("years", years, ["year", "years"], "none given");
  for (const [role, buttons, nouns] of [
    ["collections", collections, ["collection", "collections"]],
    ["tags", tags, ["tag", "tags"]],
    ["notes", notes, ["", ""]],
  ]) {
    facetRow(role, buttons, nouns);
    facets.querySelector(`[data-row="${role}"]`).hidden = buttons.length === 0;
  }
  facets.hidden = counts.total === 0;
}

// --- selection: records ticked in the results, kept across pages of one search ----------

const MAX_SELECTION = 1000; // the export endpoint's limit on ids
const selected = new Set();
const selectedTitles = new Map(); // id -> title, for merging the selected records by hand
let selectionSearch = "";

function clearSelection() {
  selected.clear();
  selectedTitles.clear();
}

function keepSelectionFor(state) {
  const search = JSON.stringify(FILTERS.map((name) => state[name] ?? ""));
  if (search !== selectionSearch) clearSelection();
  selectionSearch = search;
}

function renderSelection() {
  const label = root.querySelector('[data-role="selection-count"]');
  const links = root.querySelector('[data-role="selection-links"]');
  const size = selected.size;
  label.textContent = size
    ? `Export the ${size === 1 ? "selected record" : `${size} selected records`}:`
    : "Select records in the results to export just those.";
  links.hidden = size === 0;
  for (const link of root.querySelectorAll("[data-export-selection]")) {
    const params = new URLSearchParams({ format: link.dataset.exportSelection });
    for (const id of selected) params.append("id", id);
    link.href = `/api/v1/library/export?${params}`;
  }
  for (const box of list.querySelectorAll("input[data-select]")) {
    box.checked = selected.has(box.dataset.select);
  }
  labels.setChoices({ selected: size });
}

const labels = attachLabels(root, {
  readState,
  go,
  selection: () => selected,
  relatedTaken,
  onChange: () => show(readState()),
});

function toggleSelected(item, on) {
  if (on && selected.size < MAX_SELECTION) {
    selected.add(item.id);
    selectedTitles.set(item.id, item.record.title);
  } else {
    selected.delete(item.id);
    selectedTitles.delete(item.id);
  }
  renderSelection();
}

// --- results -------------------------------------------------------------------------

function resultItem(item, state, first = false) {
  const record = item.record;
  const meta = [
    authorNames(record.authors ?? [], 3),
    record.kind === "trial" ? record.sponsor : venueLine(record),
    record.year,
  ].filter(Boolean);
  const types = record.kind === "trial" ? record.phases : record.publication_types;
  const link = el("a", { href: pageUrl({ ...state, record: item.id }), dataset: { recordId: item.id } },
    record.title);
  link.addEventListener("click", (event) => {
    if (event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
    event.preventDefault();
    go({ ...state, record: item.id }, { historyState: { fromList: true } });
  });
  const box = el("input", {
    type: "checkbox",
    class: "select-record",
    dataset: { select: item.id },
    "aria-label": `Select “${record.title}”`,
  });
  box.checked = selected.has(item.id);
  box.addEventListener("change", () => toggleSelected(item, box.checked));
  const related = item.match === "meaning";
  return el("li", { class: related ? "record-item related" : "record-item", dataset: { recordId: item.id, match: item.match ?? "" } },
    first ? el("p", { class: "related-heading", dataset: { testid: "related-heading" } },
      "Related by meaning: these records do not have your search words.") : null,
    el("h3", {}, box, link),
    meta.length ? el("p", { class: "meta" }, meta.join(" · ")) : null,
    types?.length || record.ids?.doi || related
      ? el("p", { class: "meta muted" },
          related ? el("span", { class: "badge related-badge" }, "related by meaning") : null,
          [types?.join(", "), record.ids?.doi ? `doi:${record.ids.doi}` : null].filter(Boolean).join(" · "))
      : null,
    labelsLine(item));
}

function renderPager(state, page) {
  const hasPrevious = page.offset > 0;
  const hasNext = page.offset + page.items.length < page.total;
  pager.hidden = !hasPrevious && !hasNext;
  const previous = pager.querySelector('[data-action="previous"]');
  const next = pager.querySelector('[data-action="next"]');
  previous.disabled = !hasPrevious;
  next.disabled = !hasNext;
  const pages = Math.max(1, Math.ceil(page.total / page.limit));
  pager.querySelector('[data-role="position"]').textContent =
    `Page ${Math.floor(page.offset / page.limit) + 1} of ${pages}`;
  previous.onclick = () => go({ ...state, offset: Math.max(0, page.offset - page.limit) });
  next.onclick = () => go({ ...state, offset: page.offset + page.limit });
}

async function showResults(state) {
  const mine = ++generation;
  detail.hidden = true;
  organize.hidden = false;
  resultsSection.hidden = false;
  resultsSection.setAttribute("aria-busy", "true");
  count.textContent = "Searching…";
  const params = filterParams(state);
  params.set("offset", String(state.offset));
  params.set("limit", String(state.limit));
  let page;
  try {
    page = await api(`/api/v1/library/records?${params}`);
  } catch (error) {
    if (mine !== generation) return;
    resultsSection.removeAttribute("aria-busy");
    // A search the server refuses (422) was not run: it did not fail.
    renderProblem(notice, error, error?.status === 422 ? "This search cannot be run." : "The search failed.");
    count.textContent = "";
    list.replaceChildren();
    pager.hidden = true;
    shown = { state, page: null };
    aiColumns.setItems([]);
    showExport(state, null); // nothing was searched: there is nothing to say about exporting
    exportLine.hidden = true;
    return;
  }
  if (mine !== generation) return;
  resultsSection.removeAttribute("aria-busy");
  if (page.items.length === 0 && page.total > 0 && state.offset > 0) {
    // Past the end (e.g. the last record of the last page was deleted): show the last page.
    const last = Math.max(0, Math.floor((page.total - 1) / state.limit) * state.limit);
    go({ ...state, offset: last }, { replace: true });
    return;
  }
  if (flash) renderStatus(notice, flash, "done");
  else notice.replaceChildren();
  flash = "";
  const firstRelated = page.matching ?? page.total; // position of the first related record
  const rows = page.items.map((item, n) => ({
    key: item.id,
    node: resultItem(item, state, item.match === "meaning" && page.offset + n === firstRelated),
    item: recordColumnItem(item.id, item.record),
  }));
  list.replaceChildren(...rows.map((row) => row.node));
  shown = { state, page };
  aiColumns.setItems(rows);
  exportLine.hidden = false;
  showExport(state, page);
  // An empty library has nothing to search, export, select or tag: the page shows the
  // import and says what to do.
  const emptyLibrary = page.total === 0 && !hasAny(filterParams(state), FILTERS);
  searchPanel.hidden = emptyLibrary;
  if (page.total === 0) {
    count.textContent = "";
    const empty = emptyLibrary
      ? "Your library is empty. Import a file above to start."
      : "No records match this search. Try fewer words or wider filters.";
    notice.append(el("p", { class: "status empty" }, empty));
  } else {
    const first = page.offset + 1;
    const last = page.offset + page.items.length;
    const noun = page.total === 1 ? "record" : "records";
    count.textContent = first === 1 && last === page.total
      ? `${page.total} ${noun}`
      : `Showing ${first}–${last} of ${page.total} ${noun}`;
    if (state.q && page.related) {
      const have = page.matching === 1 ? "has" : "have";
      const words = state.q.trim().split(/\s+/).length > 1 ? "one or more of your words" : "your word";
      count.textContent += `: ${page.matching} ${have} ${words}, ${page.related} related by meaning after them`;
    }
  }
  renderPager(state, page);
}

// --- one record ----------------------------------------------------------------------

const organize = root.querySelector('[data-testid="organize"]');

async function showDetail(state) {
  const mine = ++generation;
  resultsSection.hidden = true;
  organize.hidden = true; // it acts on the results
  detail.hidden = false;
  current = null;
  labels.hideRecord();
  deleteProblem.replaceChildren();
  detail.querySelector('[data-action="delete"]').disabled = true;
  renderStatus(detailRecord, "Loading the record…", "loading");
  let item;
  try {
    item = await api(`/api/v1/library/records/${encodeURIComponent(state.record)}`);
  } catch (error) {
    if (mine !== generation) return;
    renderProblem(detailRecord, error, "The record could not be loaded.");
    return;
  }
  if (mine !== generation) return;
  const added = new Date(item.added_at);
  const extra = [
    item.source_file ? `Imported from ${item.source_file}` : null,
    item.merged_from?.length ? `Merged with copies from ${item.merged_from.join(", ")}` : null,
    Number.isNaN(added.getTime()) ? null : `Added to the library ${added.toLocaleString()}`,
  ].filter(Boolean);
  // An imported record's source is the format it was read in: say it by its label.
  const provenance = (item.record.provenance ?? []).map((p) => ({ ...p, source: formatLabel(p.source) }));
  const title = renderRecordDetail(detailRecord, { ...item.record, provenance }, extra);
  current = { id: item.id, title: item.record.title };
  labels.showRecord(item);
  detail.querySelector('[data-action="delete"]').disabled = false;
  title.focus();
}

/** A year range given backwards (2020 to 2010) is swapped, and the page says so: the
 *  server would refuse it. */
function orderedYears(state) {
  const from = Number.parseInt(state.year_from, 10);
  const to = Number.parseInt(state.year_to, 10);
  if (!(from > to)) return state;
  flash = `The first year (${from}) was after the last (${to}): swapped them, ${to} to ${from}.`;
  const swapped = { ...state, year_from: String(to), year_to: String(from) };
  window.history.replaceState(window.history.state, "", pageUrl(swapped));
  return swapped;
}

function show(given) {
  const state = orderedYears(given);
  fillForm(state);
  updateExportLinks(state);
  keepSelectionFor(state);
  renderSelection();
  if (!state.record) showFacets(state);
  return state.record ? showDetail(state) : showResults(state);
}

function backToResults() {
  if (window.history.state?.fromList) window.history.back();
  else go({ ...readState(), record: "" }, { replace: true });
}

async function deleteCurrent() {
  if (!current) return;
  const record = current;
  try {
    await api(`/api/v1/library/records/${encodeURIComponent(record.id)}`, { method: "DELETE" });
  } catch (error) {
    renderProblem(deleteProblem, error, "The record was not deleted.");
    return;
  }
  flash = `Deleted “${record.title}” from your library.`;
  go({ ...readState(), record: "" }, { replace: true });
}

// --- import --------------------------------------------------------------------------

/** A format's label as the Format list shows it ("RIS", "BibTeX"), not its id ("ris"). */
function formatLabel(name) {
  const option = [...importForm.elements.format.options].find((o) => o.value && o.value === name);
  return option ? option.textContent : name;
}

const TALLY = [
  ["imported", "Added as new records"],
  ["merged", "Merged into records already in your library"],
  ["in_file_duplicates", "Duplicates inside the file, merged"],
  ["already_present", "Already in your library exactly"],
  ["skipped", "Skipped (malformed)"],
];

function importSummary(report) {
  const problems = report.problems ?? [];
  const more = report.skipped - problems.length;
  const kind = report.skipped > 0 ? "import-summary has-problems" : "import-summary";
  return el("div", { class: kind, dataset: { testid: "import-summary" } },
    el("p", {}, el("strong", {}, report.file), ` (read as ${formatLabel(report.format)})`),
    el("dl", { class: "tally" }, TALLY.flatMap(([field, label]) => [
      el("dt", {}, label), el("dd", { dataset: { field } }, String(report[field] ?? 0)),
    ])),
    report.merged || report.in_file_duplicates
      ? el("p", { class: "muted" }, "Each merge is listed under Merged duplicates, where it can be split.")
      : null,
    problems.length
      ? el("div", { class: "problems" },
          el("h3", {}, "Skipped records"),
          el("ul", { dataset: { testid: "import-problems" } }, problems.map((p) =>
            el("li", {}, el("strong", {}, `Record ${p.record_number}`),
              p.line ? ` (line ${p.line})` : "", `: ${p.message}`))),
          more > 0 ? el("p", { class: "muted" }, `… and ${more} more.`) : null)
      : null);
}

importForm.addEventListener("submit", async (event) => {
  event.preventDefault();
  const data = new FormData(importForm);
  const file = data.get("file");
  if (!(file instanceof File) || !file.name) return;
  if (!data.get("format")) data.delete("format");
  const button = importForm.querySelector('button[type="submit"]');
  button.disabled = true;
  importStatus.setAttribute("aria-busy", "true");
  renderStatus(importStatus, `Importing ${file.name}…`, "loading");
  try {
    const report = await api("/api/v1/library/imports", { method: "POST", body: data });
    importStatus.replaceChildren(importSummary(report));
    importForm.reset();
    show(readState());
    refreshSemanticStatus();
    merges.refresh();
    labels.refreshChoices();
  } catch (error) {
    // Name the file once: most messages about a file start with its name.
    const named = String(error?.body?.message ?? "").includes(file.name);
    renderProblem(importStatus, error, named ? "Not imported:" : `${file.name} was not imported.`);
  } finally {
    button.disabled = false;
    importStatus.removeAttribute("aria-busy");
  }
});

// --- merged duplicates and labels -----------------------------------------------------

const merges = attachMerges(root, {
  onChange: () => show(readState()),
  selection: () => [...selected].map((id) => ({ id, title: selectedTitles.get(id) ?? "" })),
  onMerged: () => {
    clearSelection();
    renderSelection();
  },
});

// --- the semantic index: built in the background after an import -----------------------

const semanticStatus = root.querySelector('[data-testid="semantic-status"]');
let semanticTimer = null;

function semanticText(status) {
  if (!status.available) return status.problem ?? "";
  if (status.total === 0) return "";
  const counts = `${status.embedded.toLocaleString()} of ${status.total.toLocaleString()} records`;
  if (status.embedded >= status.total) {
    const where = status.ranking === "pgvector" ? " Meaning is ranked in the database (pgvector)." : "";
    const note = status.ranking_note ? ` ${status.ranking_note}` : "";
    return `Search ranks by words and meaning (${counts} indexed).${where}${note}`;
  }
  return `Indexing by meaning: ${counts}. Search works by words meanwhile.`;
}

async function refreshSemanticStatus() {
  clearTimeout(semanticTimer);
  let status;
  try {
    status = await api("/api/v1/library/semantic");
  } catch {
    return; // the status line is a courtesy: the page works without it
  }
  semanticStatus.textContent = semanticText(status);
  if (status.available && status.embedded < status.total) {
    semanticTimer = setTimeout(refreshSemanticStatus, 2000);
  }
}

// --- the chat: what the page shows, and what Accept does here ---------------------------

function recordFields(record) {
  if (record.kind === "trial") {
    return {
      nct_id: record.ids?.nct_id ?? null,
      phase: phaseLabels(record.phases ?? []) || null,
      status: codeLabel(record.status) || null,
      conditions: record.conditions ?? [],
      enrollment: record.enrollment ?? null,
      sponsor: record.sponsor ?? null,
      start_date: record.start_date ?? null,
    };
  }
  return {
    authors: (record.authors ?? []).slice(0, 3).map((author) => author.name),
    year: record.year ?? null,
    venue: venueLine(record) || null,
    publication_types: record.publication_types ?? [],
    doi: record.ids?.doi ?? null,
  };
}

function chatContext() {
  const state = readState();
  const page = shown?.page ?? null;
  const ai = aiColumns.state();
  const listShown = !resultsSection.hidden && page !== null;
  const byId = new Map((page?.items ?? []).map((item) => [item.id, item]));
  const visible = listShown ? aiColumns.visibleKeys().map((key) => byId.get(key)).filter(Boolean) : [];
  const form = new FormData(searchForm);
  const filters = {
    year_from: state.year_from || null,
    year_to: state.year_to || null,
    publication_type: state.publication_type || null,
    collection: state.collection ? labels.collectionName(state.collection) ?? state.collection : null,
    tag: state.tag || null,
    has_note: state.has_note ? state.has_note === "true" : null,
  };
  if (Object.keys(ai.filters).length) filters.ai_columns = ai.filters;
  return {
    search_form: Object.fromEntries([...FILTERS, "limit"].map((name) => [name, String(form.get(name) ?? "")])),
    filters,
    pagination: { page: Math.floor(state.offset / state.limit) + 1, page_size: state.limit },
    sort: ai.sort ?? { column: state.q ? "relevance" : "date_added", direction: "desc" },
    selection: [],
    viewer: state.record
      ? { kind: "library_record", id: state.record, title: current?.id === state.record ? current.title : null }
      : null,
    results: page
      ? { total: page.total, loaded: page.items.length, filtered: ai.visible, visible: listShown ? ai.visible : 0 }
      : null,
    ai_columns: ai.columns,
    item_summaries: visible.map((item) => ({
      id: item.id,
      kind: "library_record",
      title: item.record.title,
      fields: { ...recordFields(item.record), ...aiColumns.fieldsFor(item.id) },
    })),
  };
}

/** [from, to] of a suggested year filter: 2024, "2020-2024", {from, to}, [2020, 2024]. */
function yearRange(value) {
  if (Array.isArray(value)) return [value[0], value.at(-1)];
  if (value && typeof value === "object") return [value.from ?? value.min ?? "", value.to ?? value.max ?? ""];
  const years = String(value ?? "").match(/\d{4}/g) ?? [];
  return [years[0] ?? "", years.at(-1) ?? ""];
}

function applyFilterSuggestion(data) {
  const next = { ...readState(), record: "", offset: 0 };
  const applied = [];
  const others = {};
  for (const [name, value] of Object.entries(data?.filters ?? {})) {
    if (name === "year") {
      [next.year_from, next.year_to] = yearRange(value).map((year) => String(year ?? ""));
      applied.push("year");
    } else if (name === "year_from" || name === "year_to") {
      next[name] = String(value ?? "");
      applied.push(name.replace("_", " "));
    } else if (name === "publication_type" || name === "publication_types") {
      next.publication_type = String((Array.isArray(value) ? value[0] : value) ?? "");
      applied.push("publication type");
    } else {
      others[name] = value;
    }
  }
  applied.push(...aiColumns.applyFilters(others));
  const skipped = Object.keys(others).filter((name) => !applied.some((a) => a.toLowerCase() === name.toLowerCase()));
  go(next);
  const done = applied.length ? `Applied the ${applied.join(", ")} filter${applied.length === 1 ? "" : "s"}.` : "No filter applied.";
  return skipped.length ? `${done} The library has no ${skipped.join(", ")} filter.` : done;
}

registerChatContext(chatContext);
registerAcceptHandler("query_suggestion", (data) => {
  const field = searchForm.elements.q;
  field.value = String(data?.query ?? "");
  field.focus();
  return "The suggested query is in the search box: press Search to run it.";
});
registerAcceptHandler("filter_suggestion", applyFilterSuggestion);
registerAcceptHandler("ai_column_suggestion", async (data) => {
  const column = await addAIColumn(TABLE_KEY, data ?? {});
  return `Added the AI column “${column.name}” to the library's results.`;
});

// --- wiring --------------------------------------------------------------------------

searchForm.addEventListener("submit", (event) => {
  event.preventDefault();
  go(formState());
});
searchForm.addEventListener("reset", () => {
  // After the browser has reset the fields.
  setTimeout(() => go({ ...formState(), limit: DEFAULT_LIMIT }), 0);
});
root.querySelector('[data-action="select-page"]').addEventListener("click", () => {
  for (const item of shown?.page?.items ?? []) {
    if (selected.size >= MAX_SELECTION) break;
    selected.add(item.id);
    selectedTitles.set(item.id, item.record.title);
  }
  renderSelection();
});
root.querySelector('[data-action="clear-selection"]').addEventListener("click", () => {
  clearSelection();
  renderSelection();
});
detail.querySelector('[data-action="back"]').addEventListener("click", backToResults);
detail.querySelector('[data-action="delete"]').addEventListener("click", () => {
  if (!current) return;
  confirmDialog.querySelector('[data-role="title"]').textContent = current.title;
  confirmDialog.returnValue = "";
  confirmDialog.showModal();
});
confirmDialog.addEventListener("close", () => {
  if (confirmDialog.returnValue === "delete") deleteCurrent();
  else detail.querySelector('[data-action="delete"]').focus();
});
window.addEventListener("popstate", () => show(readState()));

show(readState());
refreshSemanticStatus();
merges.refresh();
