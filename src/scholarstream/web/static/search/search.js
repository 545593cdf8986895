// The Search page (seed 003): ask a question, confirm or edit the search strategy, review
// the ranked results, mark papers and search again, then accept and export.
// A run is a durable workflow on the server; this page only reads its row (polling while
// it works) and posts decisions. The open run lives in the URL (?run=<id>), so a reload,
// or a return after a server restart, continues where the run is.
// Titles, abstracts, reasons and queries come from sources and models: they only ever
// reach the page as text nodes.

import { addAIColumn, attachAIColumns, recordColumnItem } from "/static/app/ai-columns/ai-columns.js";
import { registerAcceptHandler, registerChatContext } from "/static/app/chat/page-context.js";
import { paperList, paperSummaryFields } from "/static/app/search/paper-list.js";
import {
  exportLinks,
  failedSources,
  heading,
  history,
  intentSummary,
  plural,
  runUrl,
  screenLink,
  setSourceLabels,
  sourceLabel,
  statsLine,
} from "/static/app/search/search-views.js";
import { api } from "/static/app/shared/api.js";
import { el, renderProblem, renderStatus, setPressed, toggleButton } from "/static/app/shared/dom.js";

const POLL_MS = 700;
const RETRY_MS = 2000;
const SETTLED = new Set(["waiting", "completed", "failed", "cancelled"]);
const STAGES = [
  ["parsing", "Reading the question"],
  ["building", "Building the strategy"],
  ["searching", "Searching the sources"],
  ["deduplicating", "Merging duplicates"],
  ["scoring", "Scoring relevance"],
  ["organizing", "Organizing the results"],
];
const STAGE_LABELS = {
  ...Object.fromEntries(STAGES),
  queued: "Starting",
  decided: "Taking your decision",
  waiting: "Waiting for you",
};

const root = document.querySelector('[data-page="search"]');
const startSection = root.querySelector('[data-testid="start"]');
const startForm = root.querySelector('[data-form="start"]');
const startProblem = root.querySelector('[data-role="start-problem"]');
const sourceField = root.querySelector('[data-role="sources"]');
const recentSection = root.querySelector('[data-testid="recent-runs"]');
const runList = root.querySelector('[data-role="runs"]');
const runsStatus = root.querySelector('[data-role="runs-status"]');
const runSection = root.querySelector('[data-testid="run"]');
const runQuestion = runSection.querySelector('[data-role="question"]');
const runStatus = runSection.querySelector('[data-testid="run-status"]');
const stageList = runSection.querySelector('[data-testid="stages"]');
const cancelButton = runSection.querySelector('[data-action="cancel"]');
const runProblem = runSection.querySelector('[data-testid="run-problem"]');
const view = runSection.querySelector('[data-testid="run-view"]');
// The AI steps of the run that used their offline counterpart (issue 22): one line per
// step, in the run's own plain words, above whatever the run shows.
const notices = el("div", { dataset: { testid: "run-notices" }, role: "status" });
view.before(notices);

const DEFAULT_SOURCES = (root.dataset.defaultSources || "").split(",").filter(Boolean);
const MAX_ITERATIONS = Number.parseInt(root.dataset.maxIterations || "5", 10);

const TABLE_KEY = "search";
const sourcesLoaded = loadSources();
const poll = { timer: null, generation: 0 };
let current = null; // the run shown: {id, key, run} (key: which view is rendered)
// What the view shows, for the chat: {tab, collection, filters, form(), selection(),
// judgement(paper), fillQuery(target, query)}; null when it shows no strategy or papers.
let screen = null;
const aiColumns = attachAIColumns({ tableKey: TABLE_KEY });

// --- helpers ---------------------------------------------------------------------------

function terms(text) {
  return String(text || "").split(/[,;\n]/).map((t) => t.trim()).filter(Boolean);
}

// --- the start form and the list of runs ------------------------------------------------

/** Why a source cannot be searched, in the user's words (the setting's name is the
 * administrator's business: `scholarstream sources list` shows it). */
function unusableNote(info) {
  if (info.configured) return info.problem;
  return info.api_key === "required"
    ? "Not set up: it needs an API key, which the server's administrator adds."
    : "Not set up on this server.";
}

async function loadSources() {
  let infos;
  try {
    infos = await api("/api/v1/sources");
  } catch (error) {
    renderProblem(sourceField, error, "The sources could not be loaded.");
    return;
  }
  setSourceLabels(infos);
  // A source that cannot run says why under its name (the note wraps within its column).
  const choices = infos.map((info) => {
    const usable = info.configured && !info.problem;
    return el("label", { class: "check source-option", title: info.description },
      el("input", {
        type: "checkbox",
        name: "sources",
        value: info.name,
        checked: usable && DEFAULT_SOURCES.includes(info.name),
        disabled: !info.configured,
      }),
      el("span", { class: "source-name" }, info.label,
        usable ? null : el("span", { class: "source-note muted" }, unusableNote(info))));
  });
  sourceField.replaceChildren(el("legend", {}, "Sources"), el("div", { class: "source-grid" }, choices));
}

async function loadRecentRuns() {
  let answer;
  try {
    answer = await api("/api/v1/search/runs?limit=20");
  } catch (error) {
    renderProblem(runsStatus, error, "Your searches could not be listed.");
    return;
  }
  runsStatus.replaceChildren();
  if (answer.runs.length === 0) {
    renderStatus(runsStatus, "No searches yet. Start one above.", "empty");
    runList.replaceChildren();
    return;
  }
  runList.replaceChildren(...answer.runs.map((run) => {
    const started = new Date(run.created_at);
    return el("li", { class: "run-item", dataset: { runId: run.id } },
      el("a", { href: `?run=${encodeURIComponent(run.id)}` }, run.question),
      " ",
      el("span", { class: `badge run-${run.status}` }, run.status),
      Number.isNaN(started.getTime())
        ? null
        : el("span", { class: "muted" }, ` ${started.toLocaleString()}`));
  }));
}

startForm.addEventListener("submit", async (event) => {
  event.preventDefault();
  const data = new FormData(startForm);
  const sources = data.getAll("sources").map(String);
  if (sources.length === 0) {
    renderStatus(startProblem, "Choose at least one source to search.", "warning");
    return;
  }
  const button = startForm.querySelector('button[type="submit"]');
  button.disabled = true;
  startProblem.replaceChildren();
  try {
    const run = await api("/api/v1/search/runs", {
      method: "POST",
      body: JSON.stringify({
        question: String(data.get("question") ?? ""),
        sources,
        strategy_checkpoint: startForm.elements.strategy_checkpoint.checked,
      }),
    });
    keepRunInAddress(run.id);
    openRun(run.id, run);
  } catch (error) {
    renderProblem(startProblem, error, "The search did not start.");
  } finally {
    button.disabled = false;
  }
});

// --- polling ---------------------------------------------------------------------------

function stopPolling() {
  poll.generation += 1;
  clearTimeout(poll.timer);
  poll.timer = null;
}

function schedule(runId, delay = POLL_MS) {
  clearTimeout(poll.timer);
  const mine = poll.generation;
  poll.timer = setTimeout(() => refresh(runId, mine), delay);
}

async function refresh(runId, mine = poll.generation) {
  let run;
  try {
    run = await api(runUrl(runId));
  } catch (error) {
    if (mine !== poll.generation) return;
    if (error.body) {
      // The server answered (e.g. 404: not this user's run): nothing to wait for.
      renderProblem(runProblem, error, "The search could not be loaded.");
      if (!current?.key) runStatus.textContent = "";
      return;
    }
    // No answer (the server restarts): the run waits on the server; try again.
    renderStatus(runProblem, "Lost contact with the server; trying again…", "warning");
    schedule(runId, RETRY_MS);
    return;
  }
  if (mine !== poll.generation) return;
  if (runProblem.querySelector(".status.warning")) runProblem.replaceChildren();
  show(run);
  if (!SETTLED.has(run.status)) schedule(runId);
}

// --- the run ---------------------------------------------------------------------------

function openRun(runId, run = null) {
  stopPolling();
  startSection.hidden = true;
  recentSection.hidden = true;
  runSection.hidden = false;
  runProblem.replaceChildren();
  current = { id: runId, key: null };
  if (run) {
    show(run);
    if (!SETTLED.has(run.status)) schedule(runId);
  } else {
    runQuestion.textContent = "";
    runStatus.textContent = "Loading the search…";
    view.replaceChildren();
    refresh(runId);
  }
}

function showStart() {
  stopPolling();
  current = null;
  screen = null;
  aiColumns.setItems([]);
  runSection.hidden = true;
  startSection.hidden = false;
  recentSection.hidden = false;
  loadRecentRuns();
}

function route() {
  const runId = new URLSearchParams(window.location.search).get("run");
  if (runId) openRun(runId);
  else showStart();
}

function statusText(run) {
  const round = `round ${run.iteration + 1}`;
  switch (run.status) {
    case "running":
      return `Working (${round}): ${STAGE_LABELS[run.stage] ?? run.stage ?? "starting"}…`;
    case "waiting":
      return run.pending?.checkpoint.kind === "strategy_confirmation"
        ? `Waiting for you (${round}): confirm the search strategy.`
        : `Waiting for you (${round}): review the results.`;
    case "completed":
      return "Completed.";
    case "failed":
      return "The search failed.";
    case "cancelled":
      return "This search was cancelled.";
    default:
      return run.status;
  }
}

function renderNotices(run) {
  const fallbacks = run.fallbacks ?? [];
  // The latest results' notices (e.g. "You appear to be offline: …"), each said once.
  const said = [...new Set(run.collection?.notices ?? [])];
  notices.hidden = !(fallbacks.length || said.length);
  notices.replaceChildren(
    ...said.map((text) => el("p", { class: "status warning", dataset: { testid: "notice" } }, text)),
    ...fallbacks.map((fallback) =>
      el("p", { class: "status warning", dataset: { testid: "fallback", skill: fallback.skill } },
        fallback.message, ...(fallback.hint ? [" ", el("span", { class: "hint" }, fallback.hint)] : []))));
}

function renderStages(run) {
  stageList.hidden = run.status !== "running";
  if (stageList.hidden) return;
  const at = STAGES.findIndex(([name]) => name === run.stage);
  stageList.replaceChildren(...STAGES.map(([name, label], index) =>
    el("li", {
      class: index < at ? "done" : index === at ? "current" : "",
      "aria-current": index === at ? "step" : null,
      dataset: { stage: name },
    }, label)));
}

function viewKey(run) {
  if (run.status === "waiting") return `waiting:${run.pending?.id ?? ""}`;
  return run.status;
}

/** The run shown is in the address (/search?run=ID) from the moment it exists, so a
 * reload, or the link, comes back to it. */
function keepRunInAddress(runId) {
  const url = new URL(window.location.href);
  if (url.searchParams.get("run") === String(runId)) return;
  url.searchParams.set("run", runId);
  window.history.replaceState(null, "", `${url.pathname}${url.search}${url.hash}`);
}

function show(run) {
  if (!current || current.id !== run.id) return;
  keepRunInAddress(run.id);
  runQuestion.textContent = run.question;
  runStatus.textContent = statusText(run);
  runSection.dataset.status = run.status;
  renderStages(run);
  renderNotices(run);
  cancelButton.hidden = !(run.status === "running" || run.status === "waiting");
  current.run = run;
  const key = viewKey(run);
  if (key === current.key) return; // keep what the user typed into the view shown
  current.key = key;
  screen = null;
  aiColumns.setItems([]);
  let title;
  if (run.status === "waiting" && run.pending?.checkpoint.kind === "strategy_confirmation") {
    title = renderStrategy(run, run.pending);
  } else if (run.status === "waiting" && run.pending?.checkpoint.kind === "result_review") {
    title = renderReview(run, run.pending);
  } else if (run.status === "completed") {
    title = renderCompleted(run);
  } else if (run.status === "failed") {
    title = renderFailed(run);
  } else if (run.status === "cancelled") {
    view.replaceChildren(el("p", { class: "status info" }, "Nothing more happens in this search. ",
      el("a", { href: "/search" }, "Start a new one.")));
  } else {
    view.replaceChildren(el("p", { class: "status loading", dataset: { testid: "working" } },
      "The search is working; what it finds appears here."));
  }
  const focused = document.activeElement;
  if (title && (!focused || focused === document.body)) title.focus();
}

async function decide(run, pending, body, problemBox, buttons) {
  buttons.forEach((button) => { button.disabled = true; });
  problemBox.replaceChildren();
  let answer;
  try {
    answer = await api(`${runUrl(run.id)}/decisions`, {
      method: "POST",
      body: JSON.stringify({ checkpoint_id: pending.id, ...body }),
    });
  } catch (error) {
    buttons.forEach((button) => { button.disabled = false; });
    renderProblem(problemBox, error, "Not sent:");
    if (error.body?.code === "conflict") {
      // Answered elsewhere, or the run moved on: show where it is now.
      renderProblem(runProblem, error);
      stopPolling();
      refresh(run.id);
    }
    return { sent: false, error };
  }
  runProblem.replaceChildren();
  stopPolling();
  show(answer);
  if (!SETTLED.has(answer.status)) schedule(run.id);
  return { sent: true, error: null };
}

cancelButton.addEventListener("click", async () => {
  if (!current) return;
  const runId = current.id;
  cancelButton.disabled = true;
  try {
    const run = await api(`${runUrl(runId)}/cancel`, { method: "POST" });
    stopPolling();
    show(run);
  } catch (error) {
    renderProblem(runProblem, error, "The search was not cancelled.");
  } finally {
    cancelButton.disabled = false;
  }
});

// --- checkpoint 1: the strategy ----------------------------------------------------------

function normalized(strategy) {
  return JSON.stringify({
    ...strategy,
    queries: strategy.queries.map((q) => ({ ...q, query: q.query.split(/\s+/).filter(Boolean).join(" ") })),
  });
}

// What the strategy changed in answer to the feedback (each with the user's words), and
// what it did not (each with the reason).
function strategyChanges(payload) {
  const changes = payload.changes ?? [];
  const notMade = payload.not_made ?? [];
  if (!changes.length && !notMade.length) return null;
  return el("div", { class: "strategy-changes", dataset: { testid: "strategy-changes" } },
    changes.length ? el("h4", {}, "Changed, as your feedback asked") : null,
    changes.length ? el("ul", {}, changes.map((change) => el("li", { dataset: { kind: change.kind } },
      change.description,
      change.phrase ? el("span", { class: "muted" }, ` (you said: “${change.phrase}”)`) : null))) : null,
    notMade.length ? el("h4", {}, "Not made") : null,
    notMade.length ? el("ul", { dataset: { testid: "not-made" } }, notMade.map((change) =>
      el("li", { dataset: { kind: change.kind } }, change.description,
        change.reason ? el("span", { class: "muted" }, ` (${change.reason})`) : null))) : null);
}

function renderStrategy(run, pending) {
  const { intent, strategy } = pending.checkpoint.payload;
  const original = JSON.parse(JSON.stringify(strategy));
  const title = heading("Confirm the search strategy", "strategy-h");

  const queryFields = original.queries.map((query, index) => {
    const id = `query-${index}`;
    const filters = Object.entries(query.filters ?? {});
    const area = el("textarea", {
      id, name: id, rows: 3, spellcheck: "false", dataset: { source: query.source },
    });
    area.value = query.query;
    return el("div", { class: "query-field", dataset: { source: query.source } },
      el("label", { for: id }, `${sourceLabel(query.source)} query`),
      area,
      el("p", { class: "meta muted" },
        [filters.length ? `Filters: ${filters.map(([k, v]) => `${k} = ${v}`).join("; ")}` : null,
          `up to ${plural(query.limit, "result")}`].filter(Boolean).join(" · ")));
  });
  const dateFrom = el("input", { type: "date", name: "date_from", value: original.date_from ?? "" });
  const dateTo = el("input", { type: "date", name: "date_to", value: original.date_to ?? "" });
  const approve = el("button", { type: "button", dataset: { action: "approve" } }, "Approve");
  const edit = el("button", { type: "submit", dataset: { action: "edit" }, disabled: true },
    "Search with my edits");
  const undo = el("button", { type: "button", class: "secondary", dataset: { action: "undo" }, hidden: true },
    "Undo my edits");
  const note = el("textarea", { name: "note", rows: 2, placeholder: "e.g. too broad: only randomized trials" });
  const reject = el("button", { type: "button", class: "secondary", dataset: { action: "reject" } },
    "Reject and rebuild");
  const problem = el("div", { dataset: { role: "decision-problem" }, "aria-live": "polite" });
  const buttons = [approve, edit, reject, undo];

  const form = el("form", { class: "strategy-form", dataset: { form: "strategy" }, "aria-labelledby": "strategy-h" },
    el("fieldset", {}, el("legend", {}, "Queries, one per source"), queryFields),
    el("fieldset", { class: "dates" }, el("legend", {}, "Publication dates"),
      el("label", {}, "From", dateFrom), el("label", {}, "Until", dateTo)),
    problem,
    el("div", { class: "actions" }, approve, edit, undo),
    el("div", { class: "reject" },
      el("label", {}, "Or reject it, saying what is wrong (optional)", note), reject));

  const edited = () => ({
    ...original,
    queries: original.queries.map((query, index) => ({ ...query, query: form.elements[`query-${index}`].value })),
    date_from: dateFrom.value || null,
    date_to: dateTo.value || null,
  });
  const changed = () => normalized(edited()) !== normalized(original);
  const update = () => {
    const dirty = changed();
    edit.disabled = !dirty;
    undo.hidden = !dirty;
    approve.disabled = dirty; // approving would drop the edits
    approve.title = dirty ? "You edited the strategy: search with your edits, or undo them." : "";
  };
  const send = async (body) => {
    for (const area of form.querySelectorAll("textarea[aria-invalid]")) area.removeAttribute("aria-invalid");
    const { sent, error } = await decide(run, pending, body, problem, buttons);
    if (sent) return;
    update();
    // The server names the refused query by its place ("queries, item 2 › query ..."),
    // counting from 1: point at it.
    const place = /queries, item (\d+) › query/.exec(error?.body?.message ?? "");
    const area = place ? form.elements[`query-${Number(place[1]) - 1}`] : null;
    if (area) {
      area.setAttribute("aria-invalid", "true");
      area.focus();
    }
  };
  form.addEventListener("input", update);
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    if (changed()) send({ action: "edit", revised_data: edited() });
  });
  approve.addEventListener("click", () => send({ action: "approve" }));
  reject.addEventListener("click", () => send({ action: "reject", note: note.value.trim() || null }));
  undo.addEventListener("click", () => {
    original.queries.forEach((query, index) => { form.elements[`query-${index}`].value = query.query; });
    dateFrom.value = original.date_from ?? "";
    dateTo.value = original.date_to ?? "";
    problem.replaceChildren();
    update();
  });
  screen = {
    tab: "strategy",
    form: () => {
      const strategy = edited();
      return {
        strategy: {
          queries: strategy.queries.map((q) => ({ source: q.source, query: q.query, filters: q.filters ?? {} })),
          date_from: strategy.date_from,
          date_to: strategy.date_to,
        },
        reject_note: note.value,
      };
    },
    fillQuery(target, query) {
      const index = original.queries.findIndex((q) => q.source === target);
      if (index < 0) return null;
      const area = form.elements[`query-${index}`];
      area.value = query;
      update();
      area.focus();
      return `The suggested query is in the ${sourceLabel(target)} query: search with your edits to use it.`;
    },
  };

  view.replaceChildren(el("section", { class: "panel checkpoint", dataset: { testid: "strategy" } },
    title,
    el("h4", {}, "What the question asks"),
    intentSummary(intent),
    strategyChanges(pending.checkpoint.payload),
    original.rationale
      ? el("p", { class: "rationale", dataset: { testid: "rationale" } }, el("strong", {}, "Why this strategy: "),
        original.rationale)
      : null,
    form));
  return title;
}

// --- checkpoint 2: the results ----------------------------------------------------------

// The marks of a review are kept in the browser as each is made (localStorage: they
// survive a reload, another tab on the same run, a closed window), until the checkpoint is
// answered. sessionStorage is read too, for marks kept there by an earlier page.
function storages() {
  const found = [];
  for (const name of ["localStorage", "sessionStorage"]) {
    try {
      if (window[name]) found.push(window[name]);
    } catch {
      // Storage disabled: nothing kept there.
    }
  }
  return found;
}

function loadMarks(key, collection) {
  const known = new Set(collection.papers.map((paper) => paper.id));
  for (const storage of storages()) {
    try {
      const saved = JSON.parse(storage.getItem(key) ?? "null");
      if (!Array.isArray(saved)) continue;
      return saved.filter((entry) => Array.isArray(entry) && known.has(entry[0]) &&
        (entry[1] === "relevant" || entry[1] === "irrelevant"));
    } catch {
      // Not ours, or unreadable: try the next storage.
    }
  }
  return [];
}

/** Keeps the marks; false when the browser refused (storage disabled or full). */
function saveMarks(key, marks) {
  let saved = false;
  for (const storage of storages()) {
    try {
      if (marks.size && !saved) {
        storage.setItem(key, JSON.stringify([...marks]));
        saved = true;
      } else {
        storage.removeItem(key);
      }
    } catch {
      // Refused here: the next storage may take them.
    }
  }
  return saved || marks.size === 0;
}

function renderReview(run, pending) {
  const { collection, accumulated_papers: kept } = pending.checkpoint.payload;
  const title = heading("Review the results", "review-h");
  // Each mark is kept as it is made, until the checkpoint is answered (see saveMarks).
  const draftKey = `scholarstream.search.marks:${run.id}:${pending.id}`;
  const marks = new Map(loadMarks(draftKey, collection));
  let direction = null;

  const markCount = el("p", { class: "muted", dataset: { testid: "mark-count" }, "aria-live": "polite" });
  const markProblem = el("div", { dataset: { testid: "mark-problem" }, role: "alert" });
  const updateCount = (changed = true) => {
    const relevant = [...marks.values()].filter((v) => v === "relevant").length;
    const irrelevant = marks.size - relevant;
    markCount.textContent = marks.size
      ? `You marked ${relevant} relevant and ${irrelevant} not relevant.`
      : "Mark papers as relevant or not: the next search learns from them.";
    if (!changed) return;
    if (saveMarks(draftKey, marks)) markProblem.replaceChildren();
    else {
      renderStatus(markProblem, "Your marks could not be saved in this browser: they are lost if " +
        "you reload or leave the page. Search again or accept the results to keep them.", "warning");
    }
  };
  updateCount(false);
  const { list, facets, filters, keyHelp } = paperList(collection, {
    marks,
    onMark: () => {
      updateCount();
      filters.refresh();
    },
  });

  const feedback = el("textarea", { id: "feedback", name: "feedback", rows: 3,
    placeholder: "e.g. more on transformers, nothing on speech recognition" });
  const broaden = toggleButton("Broaden", { attrs: { dataset: { direction: "broaden" } } });
  const narrow = toggleButton("Narrow", { attrs: { dataset: { direction: "narrow" } } });
  for (const button of [broaden, narrow]) {
    button.addEventListener("click", () => {
      direction = direction === button.dataset.direction ? null : button.dataset.direction;
      setPressed(broaden, direction === "broaden");
      setPressed(narrow, direction === "narrow");
    });
  }
  const addTerms = el("input", { name: "add_terms", placeholder: "comma-separated" });
  const excludeTerms = el("input", { name: "exclude_terms", placeholder: "comma-separated" });
  const again = el("button", { type: "button", dataset: { action: "iterate" } }, "Search again with my feedback");
  const accept = el("button", { type: "button", class: "secondary", dataset: { action: "accept" } },
    "Accept these results");
  const problem = el("div", { dataset: { role: "decision-problem" }, "aria-live": "polite" });
  const buttons = [again, accept];
  const lastRound = run.iteration + 1 >= (run.options?.max_iterations ?? MAX_ITERATIONS);

  const send = async (body) => {
    const { sent } = await decide(run, pending, body, problem, buttons);
    if (sent) saveMarks(draftKey, new Map());
  };
  const marked = (value) => [...marks].filter(([, v]) => v === value).map(([id]) => id);
  again.addEventListener("click", () => {
    const answer = {
      marked_relevant: marked("relevant"),
      marked_irrelevant: marked("irrelevant"),
      free_text_feedback: feedback.value.trim(),
      direction,
      add_terms: terms(addTerms.value),
      exclude_terms: terms(excludeTerms.value),
    };
    const structured = marks.size > 0 || direction !== null ||
      answer.add_terms.length > 0 || answer.exclude_terms.length > 0;
    if (structured) send({ action: "edit", revised_data: answer });
    else if (answer.free_text_feedback) send({ action: "reject", note: answer.free_text_feedback });
    else {
      renderStatus(problem,
        "Say what to change first: mark papers, write feedback, or choose Broaden or Narrow.", "warning");
    }
  });
  accept.addEventListener("click", () => {
    const body = marks.size
      ? { action: "approve",
        revised_data: { marked_relevant: marked("relevant"), marked_irrelevant: marked("irrelevant") } }
      : { action: "approve" };
    send(body);
  });

  view.replaceChildren(el("section", { class: "panel checkpoint", dataset: { testid: "review" } },
    title,
    statsLine(collection),
    failedSources(collection),
    kept?.length
      ? el("details", { class: "kept", dataset: { testid: "kept" } },
        el("summary", {}, `${plural(kept.length, "paper")} you marked relevant before are kept`),
        el("ul", { class: "plain" }, kept.map((paper) => el("li", {}, paper.record.title))))
      : null,
    collection.papers.length
      ? null
      : el("p", { class: "status empty" }, "Nothing was found. Broaden the search, or write what to look for."),
    facets,
    markCount,
    markProblem,
    aiColumns.element,
    keyHelp,
    list,
    el("div", { class: "feedback", dataset: { testid: "feedback" } },
      el("h4", {}, "Tell the next search what to change"),
      el("label", { for: "feedback" }, "Feedback"),
      feedback,
      el("div", { class: "direction", role: "group", "aria-label": "Direction" }, broaden, narrow),
      el("div", { class: "term-fields" },
        el("label", {}, "Also search for", addTerms),
        el("label", {}, "Exclude", excludeTerms)),
      lastRound
        ? el("p", { class: "status warning" }, "This is the last round: searching again ends the run with its results.")
        : null,
      problem,
      el("div", { class: "actions" }, again, accept))));
  showPapers(collection, list);
  screen = {
    tab: "results",
    collection,
    filters,
    form: () => ({
      feedback: feedback.value,
      direction,
      add_terms: terms(addTerms.value),
      exclude_terms: terms(excludeTerms.value),
      marked_relevant: marked("relevant"),
      marked_irrelevant: marked("irrelevant"),
    }),
    selection: () => marked("relevant"),
    judgement: (paper) => marks.get(paper.id) ?? null,
  };
  return title;
}

/** The papers' rows for their AI columns. */
function showPapers(collection, list) {
  aiColumns.setItems(collection.papers.map((paper, index) => ({
    key: paper.id,
    node: list.children[index],
    item: recordColumnItem(paper.id, paper.record),
  })));
}

// --- the end -----------------------------------------------------------------------------

function renderCompleted(run) {
  const title = heading("Final results", "final-h");
  const collection = run.collection;
  if (!collection) {
    view.replaceChildren(el("section", { class: "panel" }, title,
      el("p", { class: "status empty" }, "The search ended without results.")));
    return title;
  }
  const { list, facets, filters, keyHelp } = paperList(collection, {});
  view.replaceChildren(el("section", { class: "panel checkpoint", dataset: { testid: "final" } },
    title,
    statsLine(collection),
    failedSources(collection),
    exportLinks(run),
    screenLink(run),
    facets,
    aiColumns.element,
    keyHelp,
    list,
    history(run)));
  showPapers(collection, list);
  screen = {
    tab: null,
    collection,
    filters,
    form: () => ({}),
    selection: () => [],
    judgement: (paper) => paper.label ?? null,
  };
  return title;
}

function renderFailed(run) {
  const title = heading("The search failed", "failed-h");
  const box = el("div");
  renderProblem(box, { body: run.error ?? { message: "The search stopped with an error." } });
  view.replaceChildren(el("section", { class: "panel", dataset: { testid: "failed" } },
    title, box, el("p", {}, el("a", { href: "/search" }, "Start a new search"))));
  return title;
}

// --- the chat: what the page shows, and what Accept does here ---------------------------

function chatContext() {
  const context = { search_run_id: current?.id ?? null };
  if (screen?.tab) context.active_tab = screen.tab;
  if (current) {
    context.search_form = { question: current.run?.question ?? "", ...(screen?.form() ?? {}) };
  } else {
    const data = new FormData(startForm);
    context.search_form = {
      question: String(data.get("question") ?? ""),
      sources: data.getAll("sources").map(String),
      strategy_checkpoint: startForm.elements.strategy_checkpoint.checked,
    };
  }
  if (current?.run) context.run_status = statusText(current.run);
  const collection = screen?.collection;
  if (!collection) return context;
  const ai = aiColumns.state();
  const filters = screen.filters.state();
  if (Object.keys(ai.filters).length) filters.ai_columns = ai.filters;
  const byId = new Map(collection.papers.map((paper) => [paper.id, paper]));
  const shown = aiColumns.visibleKeys().map((id) => byId.get(id)).filter(Boolean);
  return {
    ...context,
    filters,
    pagination: { page: 1, page_size: collection.papers.length || null },
    sort: ai.sort ?? { column: "score", direction: "desc" },
    selection: screen.selection(),
    viewer: null,
    results: {
      total: collection.papers.length,
      loaded: collection.papers.length,
      filtered: shown.length,
      visible: shown.length,
    },
    ai_columns: ai.columns,
    item_summaries: shown.map((paper) => ({
      id: paper.id,
      kind: "search_result",
      title: paper.record.title,
      fields: { ...paperSummaryFields(paper, screen.judgement(paper)), ...aiColumns.fieldsFor(paper.id) },
    })),
  };
}

function acceptQuery(data) {
  const query = String(data?.query ?? "");
  const inStrategy = screen?.fillQuery?.(data?.target, query);
  if (inStrategy) return inStrategy;
  if (current) {
    window.history.pushState(null, "", window.location.pathname);
    showStart();
  }
  const field = startForm.elements.question;
  field.value = query;
  field.focus();
  return "The suggested query is in the question field: press Start to search.";
}

function acceptFilters(data) {
  if (!screen?.filters) return "There are no results on this page to filter yet.";
  const wanted = data?.filters ?? {};
  const applied = [...screen.filters.apply(wanted), ...aiColumns.applyFilters(wanted)];
  const skipped = Object.keys(wanted).filter((name) => !applied.some((a) => a.toLowerCase() === name.toLowerCase()));
  const done = applied.length ? `Applied the ${applied.join(", ")} filter${applied.length === 1 ? "" : "s"}.` : "No filter applied.";
  return skipped.length ? `${done} Not applied here: ${skipped.join(", ")}.` : done;
}

registerChatContext(chatContext);
registerAcceptHandler("query_suggestion", acceptQuery);
registerAcceptHandler("filter_suggestion", acceptFilters);
registerAcceptHandler("ai_column_suggestion", async (data) => {
  const column = await addAIColumn(TABLE_KEY, data ?? {});
  return `Added the AI column “${column.name}” to the search results.`;
});

// --- wiring ------------------------------------------------------------------------------

window.addEventListener("popstate", route);
await sourcesLoaded;
route();
