// The pieces of the Search page that only render (no requests, no state): a strategy's
// intent, a collection's stats (its sources apart from where library papers came from),
// failed sources, export links, the way to screen its papers and the history of a run; the
// papers themselves are paper-list.js's. Text from sources and models only ever becomes text nodes.

import { el } from "/static/app/shared/dom.js";
import { setSourceNamer } from "/static/app/search/paper-list.js";

const OUTCOMES = {
  strategy_rejected: "Strategy rejected",
  iterated: "Searched again with your feedback",
  approved: "Results accepted",
};
const EXPORTS = [["ris", "RIS"], ["bibtex", "BibTeX"], ["csv", "CSV"]];

let labels = new Map(); // source name -> label, from GET /api/v1/sources

export function setSourceLabels(infos) {
  labels = new Map(infos.map((info) => [info.name, info.label]));
  setSourceNamer(sourceLabel);
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

// --- a collection -----------------------------------------------------------------------

/**
 * What the collection holds, in three lines kept apart: the papers; the sources of this
 * search with what each returned (a failed source says so); and, for papers found in
 * the library, where they came from before (the files they were imported from).
 */
export function statsLine(collection) {
  const stats = collection.stats;
  const counts = [
    plural(collection.papers.length, "paper"),
    `${stats.found.toLocaleString("en")} found`,
    `${plural(stats.duplicates_removed, "duplicate")} merged`,
  ];
  const bySource = stats.by_source ?? {};
  const statuses = collection.source_statuses ?? [];
  const searched = statuses.length ? statuses.map((status) => status.source) : Object.keys(bySource);
  const sources = [...new Set(searched)].map((name) => {
    const status = statuses.find((s) => s.source === name);
    const outcome = status && !status.ok
      ? (status.unreachable ? "not reached" : "failed")
      : (bySource[name] ?? 0).toLocaleString("en");
    return el("span", { class: status && !status.ok ? "source-count failed" : "source-count", dataset: { source: name } },
      `${sourceLabel(name)} ${outcome}`);
  });
  const byOrigin = Object.entries(stats.by_origin ?? {});
  const originNames = stats.origin_labels ?? {};
  return el("div", { class: "stats", dataset: { testid: "stats" } },
    el("p", { dataset: { testid: "counts" } }, counts.join(" · ")),
    sources.length
      ? el("p", { dataset: { testid: "source-counts" } }, "Sources: ",
        sources.flatMap((span, index) => (index ? [" · ", span] : [span])))
      : null,
    byOrigin.length
      ? el("p", { dataset: { testid: "origin-counts" } },
        "In your library from: ",
        byOrigin.map(([name, n]) => `${originNames[name] ?? sourceLabel(name)} ${n.toLocaleString("en")}`).join(" · "))
      : null);
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
  if (papers.length === 0) {
    // Never an empty file: nothing to offer.
    return el("div", { class: "exports", dataset: { testid: "exports" } },
      el("h4", {}, "Export"),
      el("p", { class: "muted" }, "Nothing to export: the search found no papers."));
  }
  return el("div", { class: "exports", dataset: { testid: "exports" } },
    el("h4", {}, "Export"),
    line("all", `All ${plural(papers.length, "paper")}:`, "export-all"),
    relevant
      ? line("relevant", `Only the ${plural(relevant, "paper")} you marked relevant:`, "export-relevant")
      : el("p", { class: "muted" }, "Mark papers relevant in a review to export only those."));
}

/** "Screen these": the Screening page's New project form, filled in with this run (its
 *  papers become the project's records). Only for a finished run that found papers. */
export function screenLink(run) {
  const count = run.collection?.papers.length ?? 0;
  if (run.status !== "completed" || count === 0) return null;
  return el("p", { class: "screen-these", dataset: { testid: "screen-these" } },
    el("a", { href: `/screening?${new URLSearchParams({ run: run.id })}` }, "Screen these papers"),
    ` in a screening project: the ${plural(count, "paper")} of this search, by title and `
      + "abstract, against your criteria, with the PRISMA 2020 counts.");
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
