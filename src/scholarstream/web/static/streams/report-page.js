// One monitoring run's report (GET /api/v1/streams/{id}/reports/{report_id}): its counts,
// each source's outcome (a failed source with its message and hint, a partial report
// flagged), the publication timeline, the new items ranked with their one-line reason, or
// by focus area and competitor, each with Relevant / Not relevant buttons whose judgements
// the stream's later runs learn from. Record text only ever reaches the page as text nodes.

import { registerChatContext } from "/static/app/chat/page-context.js";
import { api } from "/static/app/shared/api.js";
import { codeLabel, el, renderProblem, safeUrl, setPressed, toggleButton } from "/static/app/shared/dom.js";
import { authorNames, venueLine } from "/static/app/shared/records.js";
import { renderTimeline } from "/static/app/streams/timeline-chart.js";

const root = document.querySelector('[data-page="stream-report"]');
const streamId = root.dataset.streamId;
const reportId = root.dataset.reportId;
const url = `/api/v1/streams/${encodeURIComponent(streamId)}/reports/${encodeURIComponent(reportId)}`;
const labels = JSON.parse(root.querySelector('[data-role="source-labels"]').textContent || "{}");
const part = (role) => root.querySelector(`[data-role="${role}"]`);

const STATUS_TEXT = { running: "Running", complete: "Complete", partial: "Partial", failed: "Failed" };
const sourceLabel = (name) => labels[name] || name;
let shown = null; // the stored report once loaded
// A report can list hundreds of items: the first ones are drawn, the rest on request, so the
// page stays a page (a 200-item report drawn whole was 38,000 pixels tall).
const RANKED_SHOWN = 50;
const GROUP_SHOWN = 10;
const judgements = new Map(); // item key -> true (relevant) | false, as stored
let judgedInStream = 0;

// The chat's view of the page: the ids compare_reports defaults to, and the report as shown.
registerChatContext(() => ({
  stream_id: streamId,
  report_id: reportId,
  viewer: { kind: "stream_report", id: reportId, title: shown?.report?.stream_name || null },
  report: shown
    ? {
        stream_name: shown.report?.stream_name || null,
        status: shown.status,
        started_at: shown.started_at,
        counts: shown.report ? { ...shown.report.counts, by_source: undefined } : null,
        failed_sources: shown.sources.filter((s) => !s.ok).map((s) => s.source),
      }
    : null,
}));

function when(value) {
  const parsed = new Date(value);
  return Number.isNaN(parsed.getTime()) ? "" : parsed.toLocaleString();
}

function day(value) {
  const parsed = new Date(value);
  return Number.isNaN(parsed.getTime()) ? String(value) : parsed.toLocaleDateString();
}

/** Where the item's title leads: its own link, else its DOI, PMID, NCT or arXiv page. */
export function recordHref(record) {
  const ids = record.ids || {};
  const candidates = [
    ...(record.links || []).map((link) => link.url),
    ids.doi && `https://doi.org/${encodeURI(ids.doi)}`,
    ids.pmid && `https://pubmed.ncbi.nlm.nih.gov/${encodeURIComponent(ids.pmid)}/`,
    ids.nct_id && `https://clinicaltrials.gov/study/${encodeURIComponent(ids.nct_id)}`,
    ids.arxiv_id && `https://arxiv.org/abs/${encodeURI(ids.arxiv_id)}`,
  ];
  for (const candidate of candidates) {
    const href = candidate && safeUrl(candidate);
    if (href) return href;
  }
  return null;
}

function itemTitle(record) {
  const href = recordHref(record);
  const text = record.title || "(untitled)";
  return href ? el("a", { href, target: "_blank", rel: "noopener noreferrer" }, text) : text;
}

function itemMeta(record) {
  if (record.kind === "trial") {
    return [record.ids?.nct_id, record.sponsor, codeLabel(record.status), record.first_posted].filter(Boolean).join(" · ");
  }
  const year = record.published || record.year;
  return [authorNames(record.authors, 3), venueLine(record), year].filter(Boolean).join(" · ");
}

function judgementText() {
  const here = judgements.size;
  const note = here ? `${here} item${here === 1 ? "" : "s"} of this report judged. ` : "";
  return judgedInStream
    ? `${note}The next run learns from your ${judgedInStream} judgement${judgedInStream === 1 ? "" : "s"} across this stream's reports (once at least one is relevant and one not).`
    : "Mark items Relevant or Not relevant: the stream's next runs rank new items by what you marked.";
}

function syncJudgements() {
  root.querySelectorAll('[data-testid="report-item"]').forEach((node) => {
    const value = judgements.get(node.dataset.key);
    node.dataset.judgement = value === undefined ? "" : value ? "relevant" : "irrelevant";
    node.querySelectorAll("button[data-judge]").forEach((button) =>
      setPressed(button, value !== undefined && String(value) === button.dataset.judge));
  });
  part("feedback-note").textContent = judgementText();
}

async function judge(item, relevant, problem) {
  const value = judgements.get(item.key) === relevant ? null : relevant; // pressed again: take back
  problem.replaceChildren();
  try {
    const saved = await api(`${url}/feedback`, { method: "PUT", body: JSON.stringify({ key: item.key, relevant: value }) });
    judgements.clear();
    for (const [key, judged] of Object.entries(saved.judgements)) judgements.set(key, judged);
    judgedInStream = saved.stream_judgements;
  } catch (error) {
    renderProblem(problem, error, "Your judgement was not saved.");
  }
  syncJudgements();
}

function judgeButtons(item) {
  const problem = el("div", { class: "judge-problem", "aria-live": "polite" });
  const relevant = toggleButton("Relevant", { attrs: { dataset: { judge: "true" } } });
  const irrelevant = toggleButton("Not relevant", { attrs: { dataset: { judge: "false" } } });
  relevant.addEventListener("click", () => judge(item, true, problem));
  irrelevant.addEventListener("click", () => judge(item, false, problem));
  return [
    el("div", { class: "marks", role: "group", "aria-label": `Your judgement of ${item.record.title || "this item"}` },
      relevant, irrelevant),
    problem,
  ];
}

function itemView(item, rank) {
  const tags = [
    ...item.focus_areas.map((name) => el("span", { class: "badge tag-focus" }, `Focus: ${name}`)),
    ...item.competitors.map((name) => el("span", { class: "badge tag-competitor" }, `Organisation: ${name}`)),
  ];
  return el("li", { class: "report-item", dataset: { key: item.key, testid: "report-item" } },
    el("h3", { class: "item-title" }, rank ? el("span", { class: "rank" }, `${rank}.`) : null, itemTitle(item.record)),
    el("p", { class: "item-reason", dataset: { testid: "item-reason" } }, item.reason),
    el("p", { class: "meta muted" }, itemMeta(item.record)),
    el("p", { class: "meta" },
      item.sources.map((name) => el("span", { class: "badge source", dataset: { source: name } }, sourceLabel(name))),
      el("span", { class: "muted", title: "Relevance score (0–1)" }, `score ${item.score.toFixed(2)}`),
      tags),
    ...judgeButtons(item));
}

function showCounts(counts, first) {
  const rows = [
    [first ? "Items found" : "New items", counts.new],
    ["Records found", counts.found],
    ["Distinct works", counts.distinct],
    ["Duplicates merged", counts.duplicates_dropped],
    ["Already reported", counts.already_reported],
  ];
  part("counts").replaceChildren(
    ...rows.flatMap(([label, value]) => [el("dt", {}, label), el("dd", { dataset: { count: label } }, String(value))]),
  );
}

function showSources(outcomes) {
  if (!outcomes.length) {
    part("sources").replaceChildren(el("p", { class: "status empty" }, "No source was searched."));
    return;
  }
  const row = (s) =>
    el("tr", { class: s.ok ? "" : "source-failed", dataset: { source: s.source } },
      el("th", { scope: "row" }, sourceLabel(s.source)),
      el("td", {}, s.ok ? "OK" : el("strong", {}, "Failed")),
      el("td", {}, String(s.found)),
      el("td", {}, String(s.new)),
      el("td", {}, s.total ?? ""),
      el("td", {}, s.ok ? "" : [el("span", { class: "source-error" }, s.error || s.error_code || "Failed."),
        s.hint ? el("span", { class: "source-hint muted" }, ` ${s.hint}`) : null]));
  // A phone is narrower than the table: it scrolls inside its own focusable box, not the page.
  part("sources").replaceChildren(el("div", { class: "table-scroll", tabindex: "0", role: "region", "aria-label": "Sources searched" },
    el("table", { class: "source-outcomes" },
      el("thead", {}, el("tr", {}, ["Source", "Outcome", "Returned", "New", "In the source", "Problem"]
        .map((h) => el("th", { scope: "col" }, h)))),
      el("tbody", {}, outcomes.map(row)))));
}

function showFlag(stored) {
  const failed = stored.sources.filter((s) => !s.ok);
  const flag = part("flag");
  if (stored.status === "partial") {
    flag.replaceChildren(el("p", { class: "warning", role: "note", dataset: { testid: "partial-flag" } },
      el("strong", {}, "Partial report: "),
      `${failed.length} of ${stored.sources.length} sources failed (${failed.map((s) => sourceLabel(s.source)).join(", ")}); `,
      "items only they would have found are missing, and the next run starts from this one."));
  } else if (stored.status === "failed") {
    flag.replaceChildren(el("div", { class: "problem", role: "alert" },
      el("p", { class: "problem-message" }, "This run failed: no report was written."),
      stored.error ? el("p", {}, stored.error) : null));
  } else if (stored.status === "running") {
    flag.replaceChildren(el("p", { class: "status info" }, "This run is still in progress; reload the page later."));
  } else {
    flag.replaceChildren();
  }
}

function showNotifications(deliveries) {
  const box = part("notifications");
  box.hidden = !deliveries.length;
  box.replaceChildren(
    el("strong", {}, "Announced to: "),
    ...deliveries.flatMap((d, i) => [
      i ? ", " : "",
      el("span", { class: d.ok ? "notified" : "notify-failed", dataset: { testid: "delivery" }, title: d.preview },
        d.ok ? `${d.label} (sent)` : `${d.label} (failed: ${d.error || "no reason given"})`),
    ]));
}

/** The AI steps of the run that used their offline counterpart, once each, in plain words. */
function showFallbacks(fallbacks) {
  const meta = root.querySelector('[data-testid="report-meta"]');
  let box = root.querySelector('[data-testid="report-fallbacks"]');
  if (!box) {
    box = el("div", { role: "status", dataset: { testid: "report-fallbacks" } });
    meta.after(box);
  }
  box.hidden = !fallbacks.length;
  box.replaceChildren(...fallbacks.map((fallback) =>
    el("p", { class: "status warning", dataset: { testid: "fallback", skill: fallback.skill } }, fallback.message)));
}

/** Why a report lists nothing: a first run found nothing in its window; a later one, nothing
 * new since the run before. */
function emptyText(stored) {
  if (stored.first) {
    return `The stream's first run found nothing added to its sources since ${day(stored.since)}. `
      + "Later runs report what is added from now on; if that seems wrong, check the sources and "
      + "queries on the stream's page.";
  }
  return `Nothing new since the last run (${day(stored.since)}).`;
}

function showExports(report) {
  const empty = !report.items.length;
  part("exports").querySelectorAll("a[data-format]").forEach((link) => { link.hidden = empty; });
  part("export-label").hidden = empty;
  part("no-export").hidden = !empty;
}

/** ``items`` drawn by ``render(item, index)``, the first ``limit`` at once and the rest
 * behind a "Show all" button. */
function shortList(tag, items, render, limit) {
  const list = el(tag, { class: "report-items" }, items.slice(0, limit).map((item, i) => render(item, i)));
  if (items.length <= limit) return list;
  const more = el("button", { type: "button", class: "link", dataset: { action: "show-all" } },
    `Show all ${items.length} items`);
  more.addEventListener("click", () => {
    list.append(...items.slice(limit).map((item, i) => render(item, limit + i)));
    more.parentElement.remove();
    syncJudgements();
    list.children[limit]?.querySelector("a, button")?.focus();
  });
  return el("div", {}, list, el("p", { class: "show-all" }, more));
}

function showItems(stored) {
  const report = stored.report;
  const byKey = new Map(report.items.map((item) => [item.key, item]));
  const ranked = part("ranked");
  part("items-heading").textContent = stored.first ? "Found by the first run" : "New items";
  root.querySelector(".view-switch").hidden = !report.items.length;
  if (!report.items.length) {
    ranked.replaceChildren(el("p", { class: "status empty", dataset: { testid: "no-items" } }, emptyText(stored)));
    part("groups").replaceChildren();
    part("feedback-note").hidden = true;
    return;
  }
  part("feedback-note").hidden = false;
  ranked.replaceChildren(shortList("ol", report.items, (item, i) => itemView(item, i + 1), RANKED_SHOWN));
  const section = (kind, name, keys, id) =>
    el("section", { class: "report-group", "aria-labelledby": id, dataset: { kind, testid: "report-group" } },
      el("h3", { id }, kind === "competitor" ? `Organisation: ${name}` : kind === "focus_area" ? `Focus area: ${name}` : name,
        el("span", { class: "muted" }, ` (${keys.length})`)),
      keys.length
        ? shortList("ul", keys.map((key) => byKey.get(key)).filter(Boolean), (item) => itemView(item), GROUP_SHOWN)
        : el("p", { class: "status empty" }, "No new item mentions it."));
  part("groups").replaceChildren(
    ...report.groups.map((g, i) => section(g.kind, g.name, g.item_keys, `group-${i}`)),
    report.ungrouped.length ? section("ungrouped", "Matching no focus area or organisation", report.ungrouped, "group-none") : "",
  );
}

function show(stored) {
  shown = stored;
  const report = stored.report;
  const name = report?.stream_name;
  part("title").textContent = `Report of ${day(stored.started_at)}${name ? ` · ${name}` : ""}`;
  document.title = `Report${name ? ` · ${name}` : ""} · ScholarStream`;
  root.querySelector('[data-testid="report-meta"]').replaceChildren(
    el("span", { class: `badge run-${stored.status}`, dataset: { testid: "report-status" } }, STATUS_TEXT[stored.status] || stored.status),
    el("span", {}, `Run ${when(stored.started_at)}`),
    el("span", { class: "muted" }, stored.first
      ? `First run: what the sources added since ${day(stored.since)}`
      : `New to the sources since ${day(stored.since)}`),
    report
      ? el("span", { class: "muted", dataset: { testid: "report-scorer" } },
        (report.scorer === "model" ? "Relevance judged by the model" : "Relevance scored offline")
          + (report.feedback_used ? `, learning from ${report.feedback_used} of your judgements` : ""))
      : "",
  );
  showFlag(stored);
  showFallbacks(report?.fallbacks ?? []);
  showNotifications(stored.notifications || []);
  showSources(stored.sources);
  for (const role of ["exports"]) part(role).hidden = !report;
  for (const id of ["counts", "timeline", "items"]) root.querySelector(`[data-testid="${id}"]`).hidden = !report;
  if (!report) return;
  showCounts(report.counts, stored.first);
  renderTimeline(part("timeline"), report.timeline);
  showExports(report);
  showItems(stored);
  syncJudgements();
}

root.querySelectorAll('input[name="view"]').forEach((radio) =>
  radio.addEventListener("change", () => {
    const groups = radio.value === "groups" && radio.checked;
    part("ranked").hidden = groups;
    part("groups").hidden = !groups;
  }));

async function load() {
  try {
    const [stored, feedback] = await Promise.all([api(url), api(`${url}/feedback`)]);
    for (const [key, judged] of Object.entries(feedback.judgements)) judgements.set(key, judged);
    judgedInStream = feedback.stream_judgements;
    show(stored);
  } catch (error) {
    renderProblem(part("load-problem"), error, "The report could not be loaded.");
    return;
  }
  part("load-problem").replaceChildren();
  part("report").hidden = false;
}

load();
