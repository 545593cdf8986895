// The pieces of the Search page that only render (no requests, no state): a strategy's
// intent, scored papers with their marks, a collection's stats, failed sources and
// groupings, export links and the history of a run. Text from sources and models only
// ever becomes text nodes.

import { codeLabel, el, externalLink, safeUrl, setPressed, toggleButton } from "/static/app/shared/dom.js";
import { authorNames, phaseLabels, venueLine } from "/static/app/shared/records.js";

const OUTCOMES = {
  strategy_rejected: "Strategy rejected",
  iterated: "Searched again with your feedback",
  approved: "Results accepted",
};
const DIMENSIONS = { theme: "Theme", year: "Year", study_type: "Study type", source: "Source" };
const EXPORTS = [["ris", "RIS"], ["bibtex", "BibTeX"], ["csv", "CSV"]];

let labels = new Map(); // source name -> label, from GET /api/v1/sources

export function setSourceLabels(infos) {
  labels = new Map(infos.map((info) => [info.name, info.label]));
}

export function sourceLabel(name) {
  return labels.get(name) ?? name;
}

export function plural(n, one, many = `${one}s`) {
  return `${n.toLocaleString("en")} ${n === 1 ? one : many}`;
}

export function heading(text, id) {
  return el("h3", { id, tabindex: "-1", class: "view-title" }, text);
}

export function runUrl(runId) {
  return `/api/v1/search/runs/${encodeURIComponent(runId)}`;
}

export function intentSummary(intent) {
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

// --- papers ------------------------------------------------------------------------------

function paperUrl(record) {
  if (record.ids?.doi) return `https://doi.org/${encodeURI(record.ids.doi)}`;
  if (record.ids?.nct_id) return `https://clinicaltrials.gov/study/${encodeURIComponent(record.ids.nct_id)}`;
  const links = record.links ?? [];
  const landing = links.find((link) => link.kind === "landing" && safeUrl(link.url)) ??
    links.find((link) => safeUrl(link.url));
  return landing?.url ?? null;
}

export function paperItem(paper, { marks = null, onMark = null } = {}) {
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
    sync();
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

export function statsLine(collection) {
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

export function failedSources(collection) {
  const statuses = (collection.source_statuses ?? []).filter((status) => !status.ok);
  // Sources not reached because the machine is offline: one line (the run's notice says why).
  const unreached = statuses.filter((status) => status.unreachable);
  const failed = statuses.filter((status) => !status.unreachable);
  const offline = unreached.length
    ? el("p", { class: "muted", dataset: { testid: "unreached-sources" } },
      `Not reached (offline): ${unreached.map((status) => sourceLabel(status.source)).join(", ")}.`)
    : null;
  if (failed.length === 0) return offline;
  const problem = el("div", { class: "problem", role: "alert", dataset: { testid: "failed-sources" } },
    el("p", { class: "problem-message" }, failed.length === 1
      ? "1 source failed, so these results have none of its papers:"
      : `${failed.length} sources failed, so these results have none of their papers:`),
    el("ul", {}, failed.map((status) => el("li", { dataset: { source: status.source } },
      el("strong", {}, sourceLabel(status.source)), `: ${status.error ?? "failed"}`,
      status.hint ? el("span", { class: "problem-hint" }, ` ${status.hint}`) : null))));
  return offline ? el("div", {}, offline, problem) : problem;
}

const JUDGEMENTS = [["", "All"], ["relevant", "Relevant"], ["irrelevant", "Not relevant"], ["unmarked", "Unmarked"]];

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
export function paperFilters(collection, list, count, judgement) {
  const groupings = (collection.groupings ?? []).filter((g) => g.groups.length > 0);
  const state = { facet: "", label: "" };
  const facet = groupings.length === 0 ? null : el("select", { name: "facet" },
    el("option", { value: "" }, `All papers (${collection.papers.length})`),
    groupings.map((grouping) => el("optgroup", { label: DIMENSIONS[grouping.dimension] ?? grouping.dimension },
      grouping.groups.map((group) => el("option", { value: `${grouping.dimension}:${group.key}` },
        `${group.label} (${group.paper_ids.length})`)))));
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

/** The papers as a list with their filters; ``judgement(id)`` is the user's mark of a paper. */
export function paperList(collection, options) {
  const list = el("ol", { class: "record-list papers", dataset: { testid: "papers" } },
    collection.papers.map((paper) => paperItem(paper, options)));
  const count = el("span", { class: "muted", "aria-live": "polite" });
  const labels = new Map(collection.papers.map((paper) => [paper.id, paper.label ?? ""]));
  const judgement = options.marks ? (id) => options.marks.get(id) ?? "" : (id) => labels.get(id) ?? "";
  const filters = paperFilters(collection, list, count, judgement);
  return { list, facets: filters.element, filters };
}

/** Short fields of a scored paper for the chat's item summaries. */
export function paperSummaryFields(paper, mark) {
  const record = paper.record;
  const fields = {
    authors: (record.authors ?? []).slice(0, 3).map((author) => author.name),
    year: record.year ?? (record.start_date ? Number.parseInt(record.start_date.slice(0, 4), 10) : null),
    score: Math.round(paper.score * 100) / 100,
    sources: paper.sources ?? [],
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

// --- the end of a run ---------------------------------------------------------------------

export function exportLinks(run) {
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

export function history(run) {
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
