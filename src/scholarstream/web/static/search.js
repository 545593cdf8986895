// The Search page (seed 003): ask a question, confirm or edit the search strategy, review
// the ranked results, mark papers and search again, then accept and export.
// A run is a durable workflow on the server; this page only reads its row (polling while
// it works) and posts decisions. The open run lives in the URL (?run=<id>), so a reload,
// or a return after a server restart, continues where the run is.
// Titles, abstracts, reasons and queries come from sources and models: they only ever
// reach the page as text nodes.

import { api } from "/static/app/app.js";
import {
  authorNames,
  el,
  externalLink,
  renderProblem,
  renderStatus,
  safeUrl,
  venueLine,
} from "/static/app/records.js";

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
const OUTCOMES = {
  strategy_rejected: "Strategy rejected",
  iterated: "Searched again with your feedback",
  approved: "Results accepted",
};
const DIMENSIONS = { theme: "Theme", year: "Year", study_type: "Study type", source: "Source" };
const EXPORTS = [["ris", "RIS"], ["bibtex", "BibTeX"], ["csv", "CSV"]];

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

const DEFAULT_SOURCES = (root.dataset.defaultSources || "").split(",").filter(Boolean);
const MAX_ITERATIONS = Number.parseInt(root.dataset.maxIterations || "5", 10);

let sourceInfo = new Map(); // name -> SourceInfo, for labels
const sourcesLoaded = loadSources();
const poll = { timer: null, generation: 0 };
let current = null; // the run shown: {id, key} (key: which view is rendered)

// --- helpers ---------------------------------------------------------------------------

function sourceLabel(name) {
  return sourceInfo.get(name)?.label ?? name;
}

function plural(n, one, many = `${one}s`) {
  return `${n.toLocaleString("en")} ${n === 1 ? one : many}`;
}

function terms(text) {
  return String(text || "").split(/[,;\n]/).map((t) => t.trim()).filter(Boolean);
}

function toggleButton(label, { pressed = false, attrs = {} } = {}) {
  return el("button", { type: "button", class: "toggle", "aria-pressed": String(pressed), ...attrs }, label);
}

function setPressed(button, pressed) {
  button.setAttribute("aria-pressed", String(pressed));
}

function heading(text, id) {
  return el("h3", { id, tabindex: "-1", class: "view-title" }, text);
}

function runUrl(runId) {
  return `/api/v1/search/runs/${encodeURIComponent(runId)}`;
}

// --- the start form and the list of runs ------------------------------------------------

async function loadSources() {
  let infos;
  try {
    infos = await api("/api/v1/sources");
  } catch (error) {
    renderProblem(sourceField, error, "The sources could not be loaded.");
    return;
  }
  sourceInfo = new Map(infos.map((info) => [info.name, info]));
  const choices = infos.map((info) => {
    const usable = info.configured && !info.problem;
    return el("label", { class: "check", title: info.description },
      el("input", {
        type: "checkbox",
        name: "sources",
        value: info.name,
        checked: usable && DEFAULT_SOURCES.includes(info.name),
        disabled: !info.configured,
      }),
      ` ${info.label}`,
      usable ? null : el("span", { class: "muted" }, ` (${info.problem || "not configured"})`));
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
    window.history.pushState(null, "", `?run=${encodeURIComponent(run.id)}`);
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

function show(run) {
  if (!current || current.id !== run.id) return;
  runQuestion.textContent = run.question;
  runStatus.textContent = statusText(run);
  runSection.dataset.status = run.status;
  renderStages(run);
  cancelButton.hidden = !(run.status === "running" || run.status === "waiting");
  const key = viewKey(run);
  if (key === current.key) return; // keep what the user typed into the view shown
  current.key = key;
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
    return false;
  }
  runProblem.replaceChildren();
  stopPolling();
  show(answer);
  if (!SETTLED.has(answer.status)) schedule(run.id);
  return true;
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

function intentSummary(intent) {
  const pairs = [["Topic", intent.topic, "topic"]];
  if (intent.concepts?.length) {
    pairs.push(["Concepts", el("ul", { class: "concepts" }, intent.concepts.map((concept) =>
      el("li", {}, el("strong", {}, concept.term),
        concept.synonyms.length ? el("span", { class: "muted" }, ` — also: ${concept.synonyms.join(", ")}`) : null))),
    "concepts"]);
  }
  const pico = intent.pico ?? {};
  const picoParts = [["Population", pico.population], ["Intervention", pico.intervention],
    ["Comparison", pico.comparison], ["Outcome", pico.outcome]].filter(([, value]) => value);
  if (picoParts.length) {
    pairs.push(["PICO", el("dl", { class: "pico" },
      picoParts.flatMap(([label, value]) => [el("dt", {}, label), el("dd", {}, value)])), "pico"]);
  }
  if (intent.date_from || intent.date_to) {
    pairs.push(["Dates", `${intent.date_from ?? "any time"} to ${intent.date_to ?? "now"}`, "dates"]);
  }
  if (intent.study_types?.length) pairs.push(["Study types", intent.study_types.join(", "), "study_types"]);
  if (intent.languages?.length) pairs.push(["Languages", intent.languages.join(", "), "languages"]);
  if (intent.exclude_terms?.length) pairs.push(["Excluding", intent.exclude_terms.join(", "), "exclude"]);
  return el("dl", { class: "facts intent", dataset: { testid: "intent" } },
    pairs.flatMap(([label, value, field]) => [el("dt", {}, label), el("dd", { dataset: { field } }, value)]));
}

function normalized(strategy) {
  return JSON.stringify({
    ...strategy,
    queries: strategy.queries.map((q) => ({ ...q, query: q.query.split(/\s+/).filter(Boolean).join(" ") })),
  });
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
  form.addEventListener("input", update);
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    if (!changed()) return;
    decide(run, pending, { action: "edit", revised_data: edited() }, problem, buttons)
      .then((sent) => { if (!sent) update(); });
  });
  approve.addEventListener("click", () =>
    decide(run, pending, { action: "approve" }, problem, buttons).then((sent) => { if (!sent) update(); }));
  reject.addEventListener("click", () =>
    decide(run, pending, { action: "reject", note: note.value.trim() || null }, problem, buttons)
      .then((sent) => { if (!sent) update(); }));
  undo.addEventListener("click", () => {
    original.queries.forEach((query, index) => { form.elements[`query-${index}`].value = query.query; });
    dateFrom.value = original.date_from ?? "";
    dateTo.value = original.date_to ?? "";
    problem.replaceChildren();
    update();
  });

  view.replaceChildren(el("section", { class: "panel checkpoint", dataset: { testid: "strategy" } },
    title,
    el("h4", {}, "What the question asks"),
    intentSummary(intent),
    original.rationale
      ? el("p", { class: "rationale", dataset: { testid: "rationale" } }, el("strong", {}, "Why this strategy: "),
        original.rationale)
      : null,
    form));
  return title;
}

// --- papers ------------------------------------------------------------------------------

function paperUrl(record) {
  if (record.ids?.doi) return `https://doi.org/${encodeURI(record.ids.doi)}`;
  if (record.ids?.nct_id) return `https://clinicaltrials.gov/study/${encodeURIComponent(record.ids.nct_id)}`;
  const links = record.links ?? [];
  const landing = links.find((link) => link.kind === "landing" && safeUrl(link.url)) ??
    links.find((link) => safeUrl(link.url));
  return landing?.url ?? null;
}

function paperItem(paper, { marks = null, onMark = null } = {}) {
  const record = paper.record;
  const url = paperUrl(record);
  const meta = [
    authorNames(record.authors ?? [], 3),
    record.kind === "trial" ? record.sponsor : venueLine(record),
    record.year ?? record.start_date?.slice(0, 4),
  ].filter(Boolean);
  const item = el("li", { class: "record-item paper", dataset: { paperId: paper.id } },
    el("h4", { class: "paper-title" }, url ? externalLink(url, record.title) : record.title),
    meta.length ? el("p", { class: "meta" }, meta.join(" · ")) : null,
    el("p", { class: "meta score-line" },
      el("span", { class: "score", dataset: { field: "score" } }, `Score ${paper.score.toFixed(2)}`),
      (paper.sources ?? []).map((source) => el("span", { class: "badge source", dataset: { source } },
        sourceLabel(source))),
      paper.label
        ? el("span", { class: `badge label-${paper.label}`, dataset: { field: "label" } },
          paper.label === "relevant" ? "Relevant" : "Not relevant")
        : null),
    paper.reason ? el("p", { class: "reason", dataset: { field: "reason" } }, paper.reason) : null);
  if (marks && onMark) {
    const relevant = toggleButton("Relevant", { pressed: marks.get(paper.id) === "relevant",
      attrs: { dataset: { mark: "relevant" } } });
    const irrelevant = toggleButton("Not relevant", { pressed: marks.get(paper.id) === "irrelevant",
      attrs: { dataset: { mark: "irrelevant" } } });
    const sync = () => {
      setPressed(relevant, marks.get(paper.id) === "relevant");
      setPressed(irrelevant, marks.get(paper.id) === "irrelevant");
      item.dataset.mark = marks.get(paper.id) ?? "";
    };
    const mark = (value) => {
      if (marks.get(paper.id) === value) marks.delete(paper.id);
      else marks.set(paper.id, value);
      sync();
      onMark();
    };
    relevant.addEventListener("click", () => mark("relevant"));
    irrelevant.addEventListener("click", () => mark("irrelevant"));
    item.append(el("div", { class: "marks", role: "group", "aria-label": `Your judgement of ${record.title}` },
      relevant, irrelevant));
  }
  return item;
}

function statsLine(collection) {
  const stats = collection.stats;
  const parts = [
    plural(collection.papers.length, "paper"),
    `${stats.found.toLocaleString("en")} found`,
    `${plural(stats.duplicates_removed, "duplicate")} merged`,
  ];
  const bySource = Object.entries(stats.by_source ?? {});
  if (bySource.length) parts.push(bySource.map(([name, n]) => `${sourceLabel(name)} ${n}`).join(", "));
  return el("p", { class: "stats", dataset: { testid: "stats" } }, parts.join(" · "));
}

function failedSources(collection) {
  const failed = (collection.source_statuses ?? []).filter((status) => !status.ok);
  if (failed.length === 0) return null;
  return el("div", { class: "problem", role: "alert", dataset: { testid: "failed-sources" } },
    el("p", { class: "problem-message" }, `${plural(failed.length, "source")} failed; the results lack theirs:`),
    el("ul", {}, failed.map((status) => el("li", { dataset: { source: status.source } },
      el("strong", {}, sourceLabel(status.source)), `: ${status.error ?? "failed"}`,
      status.hint ? el("span", { class: "problem-hint" }, ` ${status.hint}`) : null))));
}

/** A compact filter over the collection's groupings; hides the items of other groups. */
function facetFilter(collection, list, count) {
  const groupings = (collection.groupings ?? []).filter((g) => g.groups.length > 0);
  if (groupings.length === 0) return null;
  const select = el("select", { name: "facet" },
    el("option", { value: "" }, `All papers (${collection.papers.length})`),
    groupings.map((grouping) => el("optgroup", { label: DIMENSIONS[grouping.dimension] ?? grouping.dimension },
      grouping.groups.map((group) => el("option", { value: `${grouping.dimension}:${group.key}` },
        `${group.label} (${group.paper_ids.length})`)))));
  select.addEventListener("change", () => {
    let ids = null;
    if (select.value) {
      const at = select.value.indexOf(":");
      const dimension = select.value.slice(0, at);
      const key = select.value.slice(at + 1);
      const group = groupings.find((g) => g.dimension === dimension)?.groups.find((g) => g.key === key);
      ids = new Set(group?.paper_ids ?? []);
    }
    let shown = 0;
    for (const item of list.children) {
      item.hidden = ids !== null && !ids.has(item.dataset.paperId);
      if (!item.hidden) shown += 1;
    }
    count.textContent = ids === null ? "" : `Showing ${shown} of ${list.children.length}`;
  });
  return el("div", { class: "facets", dataset: { testid: "facets" } },
    el("label", {}, "Show ", select), count);
}

function paperList(collection, options) {
  const list = el("ol", { class: "record-list papers", dataset: { testid: "papers" } },
    collection.papers.map((paper) => paperItem(paper, options)));
  const count = el("span", { class: "muted", "aria-live": "polite" });
  return { list, facets: facetFilter(collection, list, count) };
}

// --- checkpoint 2: the results ----------------------------------------------------------

function renderReview(run, pending) {
  const { collection, accumulated_papers: kept } = pending.checkpoint.payload;
  const title = heading("Review the results", "review-h");
  const marks = new Map();
  let direction = null;

  const markCount = el("p", { class: "muted", dataset: { testid: "mark-count" }, "aria-live": "polite" });
  const updateCount = () => {
    const relevant = [...marks.values()].filter((v) => v === "relevant").length;
    const irrelevant = marks.size - relevant;
    markCount.textContent = marks.size
      ? `You marked ${relevant} relevant and ${irrelevant} not relevant.`
      : "Mark papers as relevant or not: the next search learns from them.";
  };
  updateCount();
  const { list, facets } = paperList(collection, { marks, onMark: updateCount });

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
    if (structured) decide(run, pending, { action: "edit", revised_data: answer }, problem, buttons);
    else if (answer.free_text_feedback) {
      decide(run, pending, { action: "reject", note: answer.free_text_feedback }, problem, buttons);
    } else {
      renderStatus(problem,
        "Say what to change first: mark papers, write feedback, or choose Broaden or Narrow.", "warning");
    }
  });
  accept.addEventListener("click", () => {
    const body = marks.size
      ? { action: "approve",
        revised_data: { marked_relevant: marked("relevant"), marked_irrelevant: marked("irrelevant") } }
      : { action: "approve" };
    decide(run, pending, body, problem, buttons);
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
  return title;
}

// --- the end -----------------------------------------------------------------------------

function exportLinks(run) {
  const papers = run.collection.papers;
  const relevant = papers.filter((paper) => paper.label === "relevant").length;
  const line = (only, lead, testid) => el("p", { class: "export", dataset: { testid } },
    el("span", {}, lead),
    EXPORTS.map(([format, label]) => el("a", {
      href: `${runUrl(run.id)}/export?${new URLSearchParams({ format, only })}`,
      download: "",
      dataset: { export: format, only },
      "aria-label": `${label}, ${only === "all" ? "all papers" : "only relevant papers"}`,
    }, label)));
  return el("div", { class: "exports", dataset: { testid: "exports" } },
    el("h4", {}, "Export"),
    line("all", `All ${plural(papers.length, "paper")}:`, "export-all"),
    relevant
      ? line("relevant", `Only the ${plural(relevant, "paper")} you marked relevant:`, "export-relevant")
      : el("p", { class: "muted" }, "Mark papers relevant in a review to export only those."));
}

function feedbackSummary(feedback) {
  if (!feedback) return null;
  const parts = [];
  if (feedback.marked_relevant.length) parts.push(`${feedback.marked_relevant.length} marked relevant`);
  if (feedback.marked_irrelevant.length) parts.push(`${feedback.marked_irrelevant.length} marked not relevant`);
  if (feedback.direction) parts.push(feedback.direction);
  if (feedback.add_terms.length) parts.push(`also: ${feedback.add_terms.join(", ")}`);
  if (feedback.exclude_terms.length) parts.push(`excluding: ${feedback.exclude_terms.join(", ")}`);
  if (feedback.free_text_feedback) parts.push(`“${feedback.free_text_feedback}”`);
  return parts.length ? el("p", { class: "meta" }, `Your feedback: ${parts.join("; ")}`) : null;
}

function history(run) {
  if (!run.iterations?.length) return null;
  return el("section", { class: "history", dataset: { testid: "history" } },
    el("h4", {}, "How the search went"),
    el("ol", {}, run.iterations.map((record) => el("li", { dataset: { outcome: record.outcome } },
      el("p", {}, el("strong", {}, OUTCOMES[record.outcome] ?? record.outcome),
        record.outcome === "strategy_rejected" ? "" : ` · ${plural(record.result_count, "paper")}`),
      el("ul", { class: "plain queries" }, record.strategy.queries.map((query) =>
        el("li", {}, `${sourceLabel(query.source)}: `, el("code", {}, query.query)))),
      feedbackSummary(record.feedback)))));
}

function renderCompleted(run) {
  const title = heading("Final results", "final-h");
  const collection = run.collection;
  if (!collection) {
    view.replaceChildren(el("section", { class: "panel" }, title,
      el("p", { class: "status empty" }, "The search ended without results.")));
    return title;
  }
  const { list, facets } = paperList(collection, {});
  view.replaceChildren(el("section", { class: "panel checkpoint", dataset: { testid: "final" } },
    title,
    statsLine(collection),
    failedSources(collection),
    exportLinks(run),
    facets,
    list,
    history(run)));
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

// --- wiring ------------------------------------------------------------------------------

window.addEventListener("popstate", route);
await sourcesLoaded;
route();
