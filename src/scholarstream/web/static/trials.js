// The Trials page: search ClinicalTrials.gov by condition, intervention, sponsor, phase,
// status, start date and free terms; read a study; page on with the source's cursor.
// The search and the open study live in the URL; the cursors of the pages before (and
// how many studies they held) live in the history entry, so "Previous page", the back
// button and reload all work.

import { api } from "/static/app/app.js";
import {
  codeLabel,
  el,
  phaseLabels,
  renderProblem,
  renderRecordDetail,
  renderStatus,
} from "/static/app/records.js";

const SOURCE = "clinicaltrials";
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

function renderResults(state, page) {
  list.replaceChildren(...page.records.map((trial) => trialItem(trial, state)));
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
    renderProblem(notice, error, "The search failed.");
    return;
  }
  if (mine !== generation) return;
  resultsSection.removeAttribute("aria-busy");
  renderResults(state, page);
  if (state.study) showStudy(state, page);
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
