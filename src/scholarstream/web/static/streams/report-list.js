// The stream page's Reports section: "Run now" (POST /api/v1/streams/{id}/runs, which
// answers at once (202) with the run's report, "running": the durable engine runs it and
// the page reads the report until it has finished; a run already in progress is a 409,
// shown inline like any other refusal) and the stream's reports, newest first, each linked
// to its page.

import { api } from "/static/app/shared/api.js";
import { el, renderProblem } from "/static/app/shared/dom.js";

const POLL_MS = 1000;
const STATUS_TEXT = { running: "Running", complete: "Complete", partial: "Partial", failed: "Failed" };

function when(value) {
  const parsed = new Date(value);
  return Number.isNaN(parsed.getTime()) ? String(value) : parsed.toLocaleString();
}

const plural = (n, word) => `${n} ${word}${n === 1 ? "" : "s"}`;

/** A report's items in words: found by the stream's first run, or new since the last. */
export function itemsText(summary) {
  if (!summary.counts) return summary.status === "running" ? "in progress" : "no report";
  const n = summary.counts.new;
  return summary.first ? `${plural(n, "item")} found (first run)` : `${plural(n, "new item")}`;
}

const pause = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Binds the Reports section inside ``root``; ``onRun`` is told when a run has finished;
 * ``sourceLabel`` names a source as the user reads it ("Semantic Scholar"). */
export function bindReports(root, streamId, { onRun = () => {}, sourceLabel = (name) => name } = {}) {
  const base = `/api/v1/streams/${encodeURIComponent(streamId)}`;
  const page = `/streams/${encodeURIComponent(streamId)}/reports`;
  const button = root.querySelector('[data-action="run"]');
  const status = root.querySelector('[data-role="run-status"]');
  const problem = root.querySelector('[data-role="run-problem"]');
  const list = root.querySelector('[data-role="report-list"]');

  const row = (summary) =>
    el("li", { class: "report-row", dataset: { status: summary.status, reportId: summary.id } },
      el("a", { href: `${page}/${encodeURIComponent(summary.id)}` }, `Report of ${when(summary.started_at)}`),
      el("span", { class: `badge run-${summary.status}` }, STATUS_TEXT[summary.status] || summary.status),
      el("span", { dataset: { field: "new" } }, itemsText(summary)),
      summary.failed_sources.length
        ? el("span", { class: "warning-text" }, `failed: ${summary.failed_sources.map(sourceLabel).join(", ")}`)
        : null);

  async function refresh() {
    let reports;
    try {
      ({ reports } = await api(`${base}/reports`));
    } catch (error) {
      renderProblem(list, error, "The reports could not be listed.");
      return;
    }
    list.replaceChildren(
      reports.length
        ? el("ul", { class: "report-list" }, reports.map(row))
        : el("p", { class: "status empty", dataset: { testid: "no-reports" } },
          "No reports yet: run the stream to get its first one."),
    );
  }

  button.addEventListener("click", async () => {
    problem.replaceChildren();
    button.disabled = true;
    list.setAttribute("aria-busy", "true");
    status.textContent = "Running: searching every enabled source, this can take a minute…";
    try {
      let stored = await api(`${base}/runs`, { method: "POST" });
      // The run is in the list while it runs; its report is read until it has finished.
      await refresh();
      while (stored.status === "running") {
        await pause(POLL_MS);
        stored = await api(`${base}/reports/${encodeURIComponent(stored.id)}`);
      }
      status.textContent = stored.report
        ? `Run ${stored.status}: ${itemsText({ ...stored, counts: stored.report.counts })}.`
        : `Run ${stored.status}${stored.error ? `: ${stored.error}` : ""}.`;
      onRun(stored);
    } catch (error) {
      status.textContent = "";
      renderProblem(problem, error, "The stream was not run.");
    } finally {
      button.disabled = false;
      await refresh();
      list.removeAttribute("aria-busy");
    }
  });

  return { refresh };
}
