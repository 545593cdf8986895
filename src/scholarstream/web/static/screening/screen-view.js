// The focused screening view: one record at a time (title and abstract, the review's keywords
// marked), decided with the keyboard or the buttons: i include, e exclude (then a reason from
// the exclusion criteria: 1-9), m maybe, a accept the suggestion, n/j next (skip for now),
// u/z undo the last decision. The next record comes from the API (the ranker refitted on your
// decisions); your progress and the stopping aid come with it. Record text only ever reaches
// the page as text nodes.

import { api } from "/static/app/shared/api.js";
import { el, externalLink, renderProblem } from "/static/app/shared/dom.js";
import { renderProgressChart } from "/static/app/screening/chart.js";
import { markedText } from "/static/app/screening/marks.js";

const root = document.querySelector('[data-page="screening-screen"]');
const projectId = root.dataset.projectId;
const project = JSON.parse(root.querySelector('[data-role="project"]').textContent);
const base = `/api/v1/screening/projects/${encodeURIComponent(projectId)}`;
const part = (role) => root.querySelector(`[data-role="${role}"]`);

const LABELS = { include: "Include", exclude: "Exclude", maybe: "Maybe", unsure: "Unsure" };
const BASIS = { ranker: "Ranker", keywords: "Keyword relevance", order: "File order" };

let step = null; // the API's ScreeningStep shown
let suggestion = null; // the suggestion for the record shown
let busy = false;
let reasonsOpen = false;
let accepting = false; // the reason list was opened to accept an exclusion suggestion
const skipped = new Set();

/** The records passed over for now, as the next and decisions endpoints take them. */
function skipParams() {
  const params = new URLSearchParams();
  for (const id of skipped) params.append("skip", id);
  return params;
}

function setBusy(value) {
  busy = value;
  for (const button of root.querySelectorAll(".screen-decide button")) button.disabled = value;
  root.setAttribute("aria-busy", String(value));
}

function renderTally(progress) {
  part("tally").replaceChildren(
    el("strong", {}, `${progress.screened} of ${progress.total}`), " screened · ",
    el("strong", { "data-testid": "included-count" }, String(progress.included)), " included · ",
    `${progress.excluded} excluded · ${progress.maybe} maybe`,
  );
}

function renderProgress(progress) {
  renderTally(progress);
  renderProgressChart(part("chart"), progress);
  const left = progress.relevant_left;
  part("stopping").replaceChildren(
    el("dt", {}, "Screened since your last include"),
    el("dd", { "data-testid": "since-last-include" }, String(progress.since_last_include)),
    el("dt", {}, "Relevant records left (estimate)"),
    el("dd", { "data-testid": "relevant-left" }, left.value === null ? "not yet known" : `about ${left.value}`),
    el("dt", {}, "Not screened yet"),
    el("dd", {}, String(progress.unscreened)),
  );
  part("estimate").textContent = left.explanation;
}

function metaLine(record) {
  const bits = [];
  if (record.authors.length) {
    bits.push(record.authors.join("; ") + (record.more_authors ? `; and ${record.more_authors} more` : ""));
  }
  const where = [record.venue, record.year].filter(Boolean).join(", ");
  if (where) bits.push(where);
  const nodes = [bits.join(" · ")];
  if (record.doi) nodes.push(" · DOI ", externalLink(`https://doi.org/${encodeURI(record.doi)}`, record.doi));
  if (record.pmid) {
    nodes.push(" · PMID ", externalLink(`https://pubmed.ncbi.nlm.nih.gov/${encodeURIComponent(record.pmid)}/`, record.pmid));
  }
  if (record.publication_types.length) nodes.push(" · ", record.publication_types.join(", "));
  return nodes;
}

function renderRecord(current) {
  const record = current.record;
  part("loading").hidden = true;
  const shown = Boolean(record);
  for (const role of ["basis", "title", "meta", "abstract", "found"]) part(role).hidden = !shown;
  part("done").hidden = shown;
  part("yours").hidden = true;
  if (!record) {
    part("suggestion").replaceChildren(el("p", { class: "muted" }, "No record to suggest for."));
    return;
  }
  root.querySelector('[data-role="record"]').dataset.recordId = record.id;
  const score = current.score === null ? "" : ` · score ${current.score.toFixed(2)}`;
  part("basis").textContent = `${BASIS[current.basis] || ""}${score}: ${current.basis_note}`;
  part("title").replaceChildren(...markedText(record.title, record.title_marks));
  part("meta").replaceChildren(...metaLine(record));
  if (record.abstract) {
    part("abstract").replaceChildren(el("p", {}, ...markedText(record.abstract, record.abstract_marks)));
  } else {
    part("abstract").replaceChildren(el("p", { class: "muted" }, "This record has no abstract: decide on its title."));
  }
  part("found").textContent = record.keywords_found.length
    ? `Keywords found: ${record.keywords_found.join(", ")}`
    : "None of the review's keywords is in this record.";
  if (current.your_decision) {
    const yours = current.your_decision;
    part("yours").hidden = false;
    part("yours").textContent = `Your decision on it: ${LABELS[yours.decision] || yours.decision}${yours.reason ? ` (${yours.reason})` : ""}.`;
  }
}

function show(current) {
  step = current;
  suggestion = null;
  closeReasons();
  part("problem").replaceChildren();
  part("message").textContent = current.message || "";
  renderRecord(current);
  renderProgress(current.progress);
  if (current.record) loadSuggestion(current.record.id);
}

async function load(url, options) {
  setBusy(true);
  try {
    show(await api(url, options));
  } catch (error) {
    renderProblem(part("problem"), error);
  } finally {
    setBusy(false);
  }
}

function renderSuggestion(found) {
  const box = part("suggestion");
  const label = LABELS[found.label] || found.label;
  // A stand-in's note says what stands in and why; a model's suggestion names the model.
  const who = found.source === "model" ? `Suggested by ${found.model || "the model"}.` : null;
  const parts = [
    el("p", { class: `suggested suggested-${found.label}`, "data-testid": "suggested-label" },
      el("strong", {}, label), found.criterion ? ` · ${found.criterion}` : ""),
    el("p", { "data-testid": "suggestion-rationale" }, found.rationale),
    found.quote ? el("blockquote", { "data-testid": "suggestion-quote" }, `“${found.quote}”`) : null,
    who ? el("p", { class: "muted small", "data-testid": "suggestion-source" }, who) : null,
    ...found.notes.map((note) => el("p", { class: "muted small note", "data-testid": "suggestion-note" }, note)),
    el("button", { type: "button", class: "secondary", "data-action": "accept", "aria-keyshortcuts": "a" },
      el("kbd", {}, "a"), " Accept the suggestion"),
  ];
  box.replaceChildren(...parts.filter(Boolean));
}

async function loadSuggestion(recordId) {
  part("suggestion").replaceChildren(el("p", { class: "status loading" }, "Asking for a suggestion…"));
  try {
    const found = await api(`${base}/records/${encodeURIComponent(recordId)}/suggestion`, { method: "POST" });
    if (step?.record?.id !== recordId) return; // the reviewer has moved on
    suggestion = found;
    renderSuggestion(found);
  } catch (error) {
    if (step?.record?.id === recordId) renderProblem(part("suggestion"), error, "No suggestion:");
  }
}

function decide(decision, reason = null, accepted = false) {
  if (busy || !step?.record) return;
  const body = { record_id: step.record.id, decision, reason, accepted_suggestion: accepted };
  skipped.delete(step.record.id);
  load(`${base}/decisions?${skipParams()}`, { method: "POST", body: JSON.stringify(body) });
}

function openReasons(forSuggestion = false) {
  if (busy || !step?.record) return;
  accepting = forSuggestion;
  if (!project.exclusion_criteria.length) {
    decide("exclude", null, accepting);
    return;
  }
  reasonsOpen = true;
  const list = part("reason-list");
  list.replaceChildren(...project.exclusion_criteria.map((criterion, index) =>
    el("li", {}, el("button", { type: "button", class: "reason", "data-reason": String(index) },
      index < 9 ? el("kbd", {}, String(index + 1)) : null, " ", criterion))));
  part("reasons").hidden = false;
  list.querySelector("button")?.focus();
}

function closeReasons() {
  reasonsOpen = false;
  part("reasons").hidden = true;
}

function accept() {
  if (!suggestion || busy || !step?.record) return;
  if (suggestion.label === "include") decide("include", null, true);
  else if (suggestion.label === "unsure") decide("maybe", null, true);
  else if (suggestion.criterion && project.exclusion_criteria.includes(suggestion.criterion)) {
    decide("exclude", suggestion.criterion, true);
  } else {
    openReasons(true); // the suggestion names no exclusion criterion: the reviewer picks one
  }
}

function next() {
  if (busy || !step?.record) return;
  skipped.add(step.record.id);
  load(`${base}/next?${skipParams()}`);
}

function undo() {
  if (busy) return;
  load(`${base}/undo`, { method: "POST" });
}

const ACTIONS = { include: () => decide("include"), exclude: () => openReasons(), maybe: () => decide("maybe"), next, undo, accept };
const KEYS = { i: "include", e: "exclude", m: "maybe", n: "next", j: "next", u: "undo", z: "undo", a: "accept" };

root.addEventListener("click", (event) => {
  const reason = event.target.closest("button[data-reason]");
  if (reason) {
    decide("exclude", project.exclusion_criteria[Number(reason.dataset.reason)], accepting);
    return;
  }
  const action = event.target.closest("button[data-action]")?.dataset.action;
  if (action) ACTIONS[action]();
});

document.addEventListener("keydown", (event) => {
  if (event.ctrlKey || event.metaKey || event.altKey) return;
  const target = event.target;
  if (target.closest?.("input, textarea, select, [contenteditable], #chat-tray")) return;
  if (reasonsOpen) {
    if (event.key === "Escape") {
      closeReasons();
      event.preventDefault();
      return;
    }
    const number = Number(event.key);
    if (Number.isInteger(number) && number >= 1 && number <= Math.min(9, project.exclusion_criteria.length)) {
      event.preventDefault();
      decide("exclude", project.exclusion_criteria[number - 1], accepting);
    }
    return;
  }
  const action = KEYS[event.key.toLowerCase()];
  if (action) {
    event.preventDefault();
    ACTIONS[action]();
  }
});

load(`${base}/next`);
