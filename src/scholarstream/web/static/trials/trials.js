// The Trials page: search ClinicalTrials.gov by condition, intervention, sponsor, phase,
// status, start date and free terms; read a study; page on with the source's cursor.
// The search and the open study live in the URL; the cursors of the pages before (and
// how many studies they held) live in the history entry, so "Previous page", the back
// button and reload all work.

import { addAIColumn, attachAIColumns, recordColumnItem } from "/static/app/ai-columns/ai-columns.js";
import { registerAcceptHandler, registerChatContext } from "/static/app/chat/page-context.js";
import { api } from "/static/app/shared/api.js";
import { codeLabel, el, renderProblem, renderStatus } from "/static/app/shared/dom.js";
import { phaseLabels, renderRecordDetail } from "/static/app/shared/records.js";

const SOURCE = "clinicaltrials";
const TABLE_KEY = "trials";
const PAGE_SIZE = 20;
const FIELDS = ["condition", "intervention", "q", "sponsor", "phase", "status", "date_from", "date_to"];
const FILTERS = ["condition", "intervention", "sponsor", "phase", "status"];
const TERMS = ["q", "condition", "intervention", "sponsor"];

const root = document.querySelector('[data-page="trials"]');
const form = root.querySelector('[data-form="trials"]');
const resultsSection = root.querySelector('[data-testid="results-section"]');
const notice = root.querySelector('[data-testid="notice"]');
const count = root.querySelector('[data-testid="result-count"]');
const list = root.querySelector('[data-testid="results"]');
const pager = root.querySelector('[data-testid="pager"]');
const detail = root.querySelector('[data-testid="detail"]');
const detailRecord = detail.querySelector('[data-role="record"]');

let generation = 0;
let cache = { key: null, page: null }; // the page last shown, so opening a study costs no request
let shown = null; // the results on screen: {state, page}

const aiColumns = attachAIColumns({ tableKey: TABLE_KEY });
list.before(aiColumns.element);

// --- the URL as state ----------------------------------------------------------------

function readState() {
  const params = new URLSearchParams(window.location.search);
  const state = {};
  for (const name of [...FIELDS, "page_token", "study"]) state[name] = params.get(name) ?? "";
  return state;
}

function toParams(state, { withStudy = true } = {}) {
  const params = new URLSearchParams();
  for (const name of [...FIELDS, "page_token"]) {
    const value = String(state[name] ?? "").trim();
    if (value) params.set(name, value);
  }
  if (withStudy && state.study) params.set("study", state.study);
  return params;
}

function pageUrl(state) {
  const query = toParams(state).toString();
  return query ? `${window.location.pathname}?${query}` : window.location.pathname;
}

/** The pages walked before this one, as [{token, offset}]. */
function trail() {
  return window.history.state?.trail ?? [];
}

/** How many studies the pages before this one held. */
function offset() {
  return window.history.state?.offset ?? 0;
}

function here(extra = {}) {
  return { trail: trail(), offset: offset(), ...extra };
}

function go(state, { replace = false, historyState = here() } = {}) {
  const url = pageUrl(state);
  if (replace) window.history.replaceState(historyState, "", url);
  else window.history.pushState(historyState, "", url);
  return show(state);
}

function fillForm(state) {
  for (const name of FIELDS) form.elements[name].value = state[name];
}

function formState() {
  const data = new FormData(form);
  const state = { page_token: "", study: "" };
  for (const name of FIELDS) state[name] = String(data.get(name) ?? "").trim();
  return state;
}

/** The API request of a search. The general term is required by the API: without one,
 * the first of condition, intervention and sponsor is searched as the term too. */
function searchUrl(state) {
  const params = new URLSearchParams();
  params.set("q", TERMS.map((name) => state[name]).find((value) => value) ?? "");
  params.set("limit", String(PAGE_SIZE));
  for (const name of FILTERS) {
    if (state[name]) params.append("filter", `${name}:${state[name]}`);
  }
  if (state.date_from) params.set("date_from", state.date_from);
  if (state.date_to) params.set("date_to", state.date_to);
  if (state.page_token) params.set("page_token", state.page_token);
  return `/api/v1/sources/${SOURCE}/search?${params}`;
}

// --- results -------------------------------------------------------------------------

function trialItem(trial, state) {
  const nct = trial.ids?.nct_id ?? "";
  const link = el("a", { href: pageUrl({ ...state, study: nct }) }, trial.title);
  link.addEventListener("click", (event) => {
    if (event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
    event.preventDefault();
    go({ ...state, study: nct }, { historyState: here({ fromList: true }) });
  });
  const status = trial.status
    ? el("span", { class: `badge status-${trial.status.toLowerCase()}`, dataset: { field: "status" } },
        codeLabel(trial.status))
    : null;
  const facts = [
    trial.sponsor ? `Sponsor: ${trial.sponsor}` : null,
    trial.start_date ? `Start: ${trial.start_date}` : null,
    trial.enrollment !== null && trial.enrollment !== undefined ? `Enrollment: ${trial.enrollment}` : null,
  ].filter(Boolean);
  return el("li", { class: "record-item trial", dataset: { nct } },
    el("p", { class: "meta" },
      el("span", { class: "nct", dataset: { field: "nct_id" } }, nct), " ", status,
      trial.phases?.length ? el("span", { class: "phase", dataset: { field: "phases" } },
        phaseLabels(trial.phases)) : null),
    el("h3", {}, link),
    trial.conditions?.length
      ? el("p", { class: "meta", dataset: { field: "conditions" } }, `Conditions: ${trial.conditions.join("; ")}`)
      : null,
    facts.length ? el("p", { class: "meta muted" }, facts.join(" · ")) : null);
}

function renderPager(state, page) {
  const before = trail();
  const hasPrevious = Boolean(state.page_token);
  const hasNext = Boolean(page.next_page_token);
  pager.hidden = !hasPrevious && !hasNext;
  const previous = pager.querySelector('[data-action="previous"]');
  const next = pager.querySelector('[data-action="next"]');
  previous.disabled = !hasPrevious;
  next.disabled = !hasNext;
  // Page numbers are known when the pages before were walked here (not for a pasted URL).
  const known = !state.page_token || before.length > 0;
  pager.querySelector('[data-role="position"]').textContent = known
    ? `Page ${state.page_token ? before.length + 1 : 1}`
    : "";
  previous.onclick = () => {
    const back = before.at(-1) ?? { token: "", offset: 0 };
    go({ ...state, page_token: back.token },
      { historyState: { trail: before.slice(0, -1), offset: back.offset } });
  };
  next.onclick = () =>
    go({ ...state, page_token: page.next_page_token }, {
      historyState: {
        trail: [...before, { token: state.page_token, offset: offset() }],
        offset: offset() + page.records.length,
      },
    });
}

function trialKey(trial) {
  return trial.ids?.nct_id || trial.title;
}

function renderResults(state, page) {
  const rows = page.records.map((trial) => ({
    key: trialKey(trial),
    node: trialItem(trial, state),
    item: recordColumnItem(trialKey(trial), trial),
  }));
  list.replaceChildren(...rows.map((row) => row.node));
  shown = { state, page };
  aiColumns.setItems(rows);
  notice.replaceChildren();
  if (page.records.length === 0) {
    count.textContent = "";
    renderStatus(notice, "No studies match this search. Try fewer filters or other words.", "empty");
  } else {
    const n = page.records.length;
    const total = page.total ?? null;
    const studies = (k) => `${k.toLocaleString("en")} ${k === 1 ? "study" : "studies"}`;
    if (state.page_token && trail().length === 0) {
      // A pasted URL of a later page: where it starts is unknown.
      count.textContent = `${studies(n)} on this page${total === null ? "" : ` (${studies(total)} in all)`}`;
    } else {
      const first = (state.page_token ? offset() : 0) + 1;
      const range = `${first}–${first + n - 1}`;
      count.textContent = total === null ? `Showing ${range}` : `Showing ${range} of ${studies(total)}`;
    }
  }
  renderPager(state, page);
}

async function loadPage(state) {
  const key = toParams(state, { withStudy: false }).toString();
  if (cache.key === key) return cache.page;
  const page = await api(searchUrl(state));
  cache = { key, page };
  return page;
}

function clearResults() {
  count.textContent = "";
  list.replaceChildren();
  pager.hidden = true;
  shown = null;
  aiColumns.setItems([]);
}

async function show(state) {
  fillForm(state);
  const mine = ++generation;
  if (!TERMS.some((name) => state[name])) {
    detail.hidden = true;
    resultsSection.hidden = false;
    clearResults();
    const any = FIELDS.some((name) => state[name]);
    renderStatus(notice, any
      ? "Enter a condition, an intervention, a sponsor or other terms to search with."
      : "Search by condition, intervention, sponsor or any terms; narrow by phase, status and start date.",
      any ? "warning" : "info");
    return;
  }
  resultsSection.setAttribute("aria-busy", "true");
  if (state.study) {
    resultsSection.hidden = true;
    detail.hidden = false;
    renderStatus(detailRecord, "Loading the study…", "loading");
  } else {
    detail.hidden = true;
    resultsSection.hidden = false;
    count.textContent = "Searching ClinicalTrials.gov…";
  }
  let page;
  try {
    page = await loadPage(state);
  } catch (error) {
    if (mine !== generation) return;
    resultsSection.removeAttribute("aria-busy");
    detail.hidden = true;
    resultsSection.hidden = false;
    clearResults();
    showFailure(state, error);
    return;
  }
  if (mine !== generation) return;
  resultsSection.removeAttribute("aria-busy");
  renderResults(state, page);
  if (state.study) showStudy(state, page);
}

/** The search failed: the source's own words (what happened, what to do) and a Retry
 *  that asks ClinicalTrials.gov again. */
function showFailure(state, error) {
  renderProblem(notice, error, "The search failed.");
  const retry = el("button", { type: "button", class: "secondary", dataset: { action: "retry", testid: "retry" } },
    "Retry");
  retry.addEventListener("click", () => {
    retry.disabled = true;
    cache = { key: null, page: null };
    show(state);
  });
  notice.querySelector(".problem")?.append(el("p", { class: "actions" }, retry));
}

function showStudy(state, page) {
  const trial = page.records.find((record) => record.ids?.nct_id === state.study);
  if (!trial) {
    renderStatus(detailRecord,
      `${state.study} is not among these results; search for it by its NCT id under Other terms.`,
      "warning");
    return;
  }
  renderRecordDetail(detailRecord, trial).focus();
}

function backToResults() {
  if (window.history.state?.fromList) window.history.back();
  else go({ ...readState(), study: "" }, { replace: true });
}

// --- the chat: what the page shows, and what Accept does here ---------------------------

function trialFields(trial) {
  return {
    phase: phaseLabels(trial.phases ?? []) || null,
    status: codeLabel(trial.status) || null,
    conditions: trial.conditions ?? [],
    enrollment: trial.enrollment ?? null,
    sponsor: trial.sponsor ?? null,
    start_date: trial.start_date ?? null,
  };
}

function chatContext() {
  const state = readState();
  const page = shown?.page ?? null;
  const ai = aiColumns.state();
  const listShown = !resultsSection.hidden && page !== null;
  const byKey = new Map((page?.records ?? []).map((trial) => [trialKey(trial), trial]));
  const visible = listShown ? aiColumns.visibleKeys().map((key) => byKey.get(key)).filter(Boolean) : [];
  const data = new FormData(form);
  const filters = {};
  for (const name of [...FILTERS, "date_from", "date_to"]) filters[name] = state[name] || null;
  if (Object.keys(ai.filters).length) filters.ai_columns = ai.filters;
  const open = state.study ? byKey.get(state.study) : null;
  return {
    search_form: Object.fromEntries(FIELDS.map((name) => [name, String(data.get(name) ?? "")])),
    filters,
    pagination: { page: state.page_token ? trail().length + 1 : 1, page_size: PAGE_SIZE },
    sort: ai.sort ?? { column: "relevance", direction: "desc" },
    selection: [],
    viewer: state.study ? { kind: "trial", id: state.study, title: open?.title ?? null } : null,
    results: page
      ? {
          total: page.total ?? null,
          loaded: page.records.length,
          filtered: ai.visible,
          visible: listShown ? ai.visible : 0,
        }
      : null,
    ai_columns: ai.columns,
    item_summaries: visible.map((trial) => ({
      id: trialKey(trial),
      kind: "trial",
      title: trial.title,
      fields: { ...trialFields(trial), ...aiColumns.fieldsFor(trialKey(trial)) },
    })),
  };
}

/** Chooses the option of ``select`` matching ``wanted`` by code or label ("PHASE3",
 * "Phase 3", "phase_3"); returns its label, or null when none matches. */
function chooseOption(select, wanted) {
  const norm = (text) => String(text ?? "").toLowerCase().replace(/[\s_-]/g, "");
  const target = norm(Array.isArray(wanted) ? wanted[0] : wanted);
  if (!target || target === "any") {
    select.value = "";
    return "any";
  }
  const option = [...select.options].find((o) => o.value && (norm(o.value) === target || norm(o.textContent) === target));
  if (!option) return null;
  select.value = option.value;
  return option.textContent;
}

function acceptQuery(data) {
  const field = form.elements.q;
  field.value = String(data?.query ?? "");
  field.focus();
  return "The suggested terms are in Other terms: press Search trials to run the search.";
}

function acceptFilters(data) {
  const applied = [];
  const skipped = [];
  const others = {};
  for (const [name, value] of Object.entries(data?.filters ?? {})) {
    const field = { phase: "phase", phases: "phase", status: "status", statuses: "status" }[name];
    if (!field) others[name] = value;
    else if (chooseOption(form.elements[field], value) === null) skipped.push(name);
    else applied.push(field);
  }
  const searchChanged = applied.length > 0;
  const byColumn = aiColumns.applyFilters(others);
  applied.push(...byColumn);
  skipped.push(...Object.keys(others).filter((name) =>
    !byColumn.some((column) => column.toLowerCase() === name.toLowerCase())));
  if (searchChanged) {
    const next = formState();
    if (TERMS.some((name) => next[name])) {
      cache = { key: null, page: null };
      go(next, { historyState: { trail: [], offset: 0 } });
    }
  }
  const done = applied.length ? `Applied the ${applied.join(", ")} filter${applied.length === 1 ? "" : "s"}.` : "No filter applied.";
  return skipped.length ? `${done} Not applied here: ${skipped.join(", ")}.` : done;
}

function acceptTrialSearch(data) {
  const text = (value) => (Array.isArray(value) ? value.join(" ") : String(value ?? "")).trim();
  form.elements.condition.value = text(data?.condition);
  form.elements.intervention.value = text(data?.intervention);
  form.elements.q.value = text(data?.terms);
  form.elements.sponsor.value = text(data?.sponsor);
  const notes = [];
  for (const [field, values] of [["phase", data?.phases], ["status", data?.statuses]]) {
    const list = Array.isArray(values) ? values.filter(Boolean) : values ? [values] : [];
    form.elements[field].value = "";
    if (!list.length) continue;
    const chosen = chooseOption(form.elements[field], list[0]);
    if (chosen === null) notes.push(`${field} ${list[0]} is not an option here`);
    else if (list.length > 1) notes.push(`the form takes one ${field}: ${chosen} was chosen`);
  }
  form.elements.condition.focus();
  const lead = "The trial search form is filled in: press Search trials to run it.";
  return notes.length ? `${lead} Note: ${notes.join("; ")}.` : lead;
}

registerChatContext(chatContext);
registerAcceptHandler("query_suggestion", acceptQuery);
registerAcceptHandler("filter_suggestion", acceptFilters);
registerAcceptHandler("trial_search_suggestion", acceptTrialSearch);
registerAcceptHandler("ai_column_suggestion", async (data) => {
  const column = await addAIColumn(TABLE_KEY, data ?? {});
  return `Added the AI column “${column.name}” to the trial results.`;
});

form.addEventListener("submit", (event) => {
  event.preventDefault();
  cache = { key: null, page: null }; // an explicit search asks the source again
  go(formState(), { historyState: { trail: [], offset: 0 } });
});
form.addEventListener("reset", () => {
  setTimeout(() => go(formState(), { historyState: { trail: [], offset: 0 } }), 0);
});
detail.querySelector('[data-action="back"]').addEventListener("click", backToResults);
window.addEventListener("popstate", () => show(readState()));

show(readState());
