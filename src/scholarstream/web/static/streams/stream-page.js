// A research stream's page, what it is for first: Run now, when it runs on its own, and its
// reports (report-list.js); then what it follows (a summary, the settings form collapsed
// under it: every field, the chat instructions, whether monitoring is on), then its sources
// and queries, one collapsed section per source that says whether the source is on, off or
// cannot run on this server (GET /api/v1/streams/sources). Everything is edited with PATCH
// /api/v1/streams/{id}; what the server refuses is shown next to the form, and the form
// keeps what the user typed. The chat tray sends the stream's id, so its
// chat_instructions apply.

import { api } from "/static/app/shared/api.js";
import { registerChatContext } from "/static/app/chat/page-context.js";
import { el, renderProblem } from "/static/app/shared/dom.js";
import {
  choiceLabel,
  fieldControls,
  fieldLabel,
  markEdited,
  readControl,
  sameValue,
  shownValue,
  writeControl,
} from "/static/app/streams/fields.js";
import { QueryEditors } from "/static/app/streams/retrieval.js";
import { bindReports } from "/static/app/streams/report-list.js";

const root = document.querySelector('[data-page="stream"]');
const streamId = root.dataset.streamId;
const url = `/api/v1/streams/${encodeURIComponent(streamId)}`;
const loadProblem = root.querySelector('[data-role="load-problem"]');
const view = root.querySelector('[data-role="stream"]');
const nameHeading = root.querySelector('[data-role="name"]');
const meta = root.querySelector('[data-testid="stream-meta"]');
const form = root.querySelector('[data-form="config"]');
const settings = root.querySelector('[data-role="settings"]');
const summary = root.querySelector('[data-role="summary"]');
const schedule = root.querySelector('[data-role="schedule"]');
const sourcesNote = root.querySelector('[data-role="sources-note"]');
const controls = fieldControls(form);
const configProblem = form.querySelector('[data-role="config-problem"]');
const configStatus = form.querySelector('[data-role="config-status"]');
const deriveStatus = root.querySelector('[data-role="derive-status"]');
const deriveProblem = root.querySelector('[data-role="derive-problem"]');
const deleteProblem = root.querySelector('[data-role="delete-problem"]');
const confirmDialog = root.querySelector('[data-testid="confirm-delete"]');
const sources = JSON.parse(root.querySelector('[data-role="sources"]').textContent || "{}");

let stream = null;

const patch = (body) => api(url, { method: "PATCH", body: JSON.stringify(body) });

const queries = new QueryEditors(root.querySelector('[data-role="queries"]'), {
  sources,
  save: async (source, changes) => {
    const updated = await patch({ retrieval: { queries: { [source]: changes } } });
    showHeader(updated);
    stream = { ...stream, retrieval: updated.retrieval, updated_at: updated.updated_at };
    setTimeout(showSourcesNote, 0); // once the editor shows the saved query
    return updated;
  },
});

function date(value) {
  const parsed = new Date(value);
  return Number.isNaN(parsed.getTime()) ? "" : parsed.toLocaleDateString();
}

// How often, in words, and how long a report period is (the schedule's PERIODS).
const EVERY = { daily: "every day", weekly: "every week", biweekly: "every two weeks", monthly: "every month" };
const PERIOD_DAYS = { daily: 1, weekly: 7, biweekly: 14, monthly: 30 };
const SUMMARY_FIELDS = ["purpose", "focus_areas", "keywords", "competitors"];

function showHeader(s) {
  nameHeading.textContent = s.stream_name;
  document.title = `${s.stream_name} · ScholarStream`;
  meta.replaceChildren(
    el("span", { class: "badge", dataset: { field: "stream_type" } }, choiceLabel(form, "stream_type", s.stream_type)),
    el("span", { dataset: { field: "report_frequency" } }, `Reports ${EVERY[s.report_frequency] ?? s.report_frequency}`),
    el("span", { class: "badge" }, s.enabled ? "Monitoring on" : "Monitoring paused"),
    el("span", { class: "muted" }, `Created ${date(s.created_at)}`),
    el("span", { class: "muted" }, s.last_run_at ? `Last run ${date(s.last_run_at)}` : "Never run"),
  );
  showSchedule(s);
}

/** When the stream runs on its own: the next run, or why it does not. */
function showSchedule(s) {
  const every = EVERY[s.report_frequency] ?? s.report_frequency;
  if (!s.enabled) {
    schedule.textContent = "Monitoring is paused: the stream runs only when you press Run now. " +
      "Turn monitoring on in its settings to run it " + every + ".";
    return;
  }
  if (!s.last_run_at) {
    schedule.textContent = `Runs on its own ${every}. Its first run starts within minutes, or now with Run now.`;
    return;
  }
  const next = new Date(new Date(s.last_run_at).getTime() + (PERIOD_DAYS[s.report_frequency] ?? 7) * 86_400_000);
  const when = Number.isNaN(next.getTime()) ? "" : `; next run around ${next.toLocaleDateString()}`;
  schedule.textContent = `Runs on its own ${every}${when}.`;
}

/** What the stream follows, at a glance (the settings form is collapsed under it). */
function showSummary(s) {
  const rows = SUMMARY_FIELDS.filter((name) => s[name]?.length).map((name) => [
    el("dt", {}, fieldLabel(form, name)),
    el("dd", { dataset: { field: name } }, shownValue(s[name])),
  ]);
  summary.replaceChildren(...rows.flat());
}

/** The sources that are on but cannot run here: said once above the sources, with a fix. */
function showSourcesNote() {
  const stuck = queries.onButUnavailable();
  if (!stuck.length) {
    sourcesNote.replaceChildren();
    return;
  }
  const names = stuck.map((e) => e.label).join(", ");
  const problem = el("div");
  const button = el("button", { type: "button", class: "secondary", dataset: { action: "turn-off-unavailable" } },
    stuck.length === 1 ? `Turn ${names} off` : "Turn them off");
  button.addEventListener("click", async () => {
    button.disabled = true;
    problem.replaceChildren();
    try {
      const off = Object.fromEntries(stuck.map((e) => [e.name, { enabled: false }]));
      const updated = await patch({ retrieval: { queries: off } });
      stream = { ...stream, retrieval: updated.retrieval, updated_at: updated.updated_at };
      queries.show(updated.retrieval, { force: true });
      showSourcesNote();
    } catch (error) {
      button.disabled = false;
      renderProblem(problem, error, "The sources were not turned off.");
    }
  });
  sourcesNote.replaceChildren(el("div", { class: "status warning", role: "note" },
    el("p", {}, `${names} ${stuck.length === 1 ? "is" : "are"} on but cannot run on this server, `
      + "so every report of this stream is partial. Open the source to see how to make it available."),
    button, problem));
}

function dirty(control) {
  return stream !== null && !sameValue(readControl(control), stream[control.name]);
}

function refreshEdited() {
  for (const control of controls) markEdited(control, dirty(control));
  if (controls.some(dirty)) settings.open = true;
}

/** Shows ``s``; with ``keepEdits`` the fields the user changed and did not save stay. */
function show(s, { keepEdits = false } = {}) {
  const kept = new Set(keepEdits ? controls.filter(dirty).map((c) => c.name) : []);
  stream = s;
  showHeader(s);
  showSummary(s);
  for (const control of controls) {
    if (!kept.has(control.name)) writeControl(control, s[control.name]);
  }
  refreshEdited();
  queries.show(s.retrieval);
  showSourcesNote();
}

// A finished run changes the stream's last_run_at: the header shows it.
const reports = bindReports(root, streamId, {
  sourceLabel: (name) => sources[name]?.label ?? name,
  onRun: async () => {
    const fresh = await api(url).catch(() => null);
    if (fresh && stream) {
      stream = { ...stream, last_run_at: fresh.last_run_at };
      showHeader(stream);
    }
  },
});

async function loadAvailability() {
  try {
    const { sources: listed } = await api("/api/v1/streams/sources");
    queries.setAvailability(listed);
    showSourcesNote();
  } catch {
    // The sources' availability is a help, not the page: without it, editors show on/off.
  }
}

async function load() {
  try {
    show(await api(url));
  } catch (error) {
    renderProblem(loadProblem, error, "The stream could not be loaded.");
    return;
  }
  loadProblem.replaceChildren();
  view.hidden = false;
  reports.refresh();
  loadAvailability();
}

form.addEventListener("input", () => {
  configStatus.textContent = "";
  refreshEdited();
});
form.addEventListener("change", refreshEdited);
form.addEventListener("submit", async (event) => {
  event.preventDefault();
  if (!stream) return;
  configProblem.replaceChildren();
  const changes = {};
  for (const control of controls.filter(dirty)) changes[control.name] = readControl(control);
  if (!Object.keys(changes).length) {
    configStatus.textContent = "Nothing to save.";
    return;
  }
  const button = form.querySelector('button[type="submit"]');
  button.disabled = true;
  configStatus.textContent = "Saving…";
  try {
    show(await patch(changes));
    configStatus.textContent = "Saved.";
  } catch (error) {
    configStatus.textContent = "";
    settings.open = true;
    renderProblem(configProblem, error, "Not saved.");
  } finally {
    button.disabled = false;
  }
});
form.querySelector('[data-action="undo"]').addEventListener("click", () => {
  if (!stream) return;
  for (const control of controls) writeControl(control, stream[control.name]);
  configProblem.replaceChildren();
  configStatus.textContent = "Changes undone.";
  refreshEdited();
});

const deriveButton = root.querySelector('[data-action="derive"]');
deriveButton.addEventListener("click", async () => {
  deriveProblem.replaceChildren();
  deriveButton.disabled = true;
  deriveStatus.textContent = "Deriving…";
  try {
    const updated = await patch({ derive_retrieval: true });
    stream = { ...stream, retrieval: updated.retrieval };
    queries.show(updated.retrieval, { force: true });
    deriveStatus.textContent = "Every query was derived again from the keywords.";
  } catch (error) {
    deriveStatus.textContent = "";
    renderProblem(deriveProblem, error, "The queries were not changed.");
  } finally {
    deriveButton.disabled = false;
  }
});

root.querySelector('[data-action="delete"]').addEventListener("click", () => {
  if (!stream) return;
  confirmDialog.querySelector('[data-role="title"]').textContent = stream.stream_name;
  confirmDialog.returnValue = "";
  confirmDialog.showModal();
});
confirmDialog.addEventListener("close", async () => {
  if (confirmDialog.returnValue !== "delete") {
    root.querySelector('[data-action="delete"]').focus();
    return;
  }
  try {
    await api(url, { method: "DELETE" });
  } catch (error) {
    renderProblem(deleteProblem, error, "The stream was not deleted.");
    return;
  }
  window.location.assign("/streams");
});

registerChatContext(() => ({
  stream_id: streamId,
  viewer: stream ? { kind: "stream", id: stream.id, title: stream.stream_name } : null,
  stream: stream
    ? {
        stream_name: stream.stream_name,
        stream_type: stream.stream_type,
        report_frequency: stream.report_frequency,
        purpose: stream.purpose,
        focus_areas: stream.focus_areas,
        keywords: stream.keywords,
        competitors: stream.competitors,
        enabled: stream.enabled,
        sources_searched: queries.enabledSources(),
        unsaved_changes: controls.filter(dirty).map((c) => c.name),
      }
    : null,
}));

load();
