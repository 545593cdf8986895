// A research stream's page: its configuration (every field, the chat instructions, whether
// monitoring is on), its retrieval queries per source, all edited with PATCH
// /api/v1/streams/{id}; what the server refuses is shown next to the form, and the form
// keeps what the user typed. Its reports and "Run now" are report-list.js's. The chat
// tray sends the stream's id, so its chat_instructions apply.

import { api } from "/static/app/shared/api.js";
import { registerChatContext } from "/static/app/chat/page-context.js";
import { el, renderProblem } from "/static/app/shared/dom.js";
import { fieldControls, markEdited, readControl, sameValue, writeControl } from "/static/app/streams/fields.js";
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
    return updated;
  },
});

function date(value) {
  const parsed = new Date(value);
  return Number.isNaN(parsed.getTime()) ? "" : parsed.toLocaleDateString();
}

function showHeader(s) {
  nameHeading.textContent = s.stream_name;
  document.title = `${s.stream_name} · ScholarStream`;
  meta.replaceChildren(
    el("span", { class: "badge", dataset: { field: "stream_type" } }, s.stream_type),
    el("span", { dataset: { field: "report_frequency" } }, `Reports ${s.report_frequency}`),
    el("span", { class: "badge" }, s.enabled ? "Monitoring on" : "Monitoring paused"),
    el("span", { class: "muted" }, `Created ${date(s.created_at)}`),
    el("span", { class: "muted" }, s.last_run_at ? `Last run ${date(s.last_run_at)}` : "Never run"),
  );
}

function dirty(control) {
  return stream !== null && !sameValue(readControl(control), stream[control.name]);
}

function refreshEdited() {
  for (const control of controls) markEdited(control, dirty(control));
}

/** Shows ``s``; with ``keepEdits`` the fields the user changed and did not save stay. */
function show(s, { keepEdits = false } = {}) {
  const kept = new Set(keepEdits ? controls.filter(dirty).map((c) => c.name) : []);
  stream = s;
  showHeader(s);
  for (const control of controls) {
    if (!kept.has(control.name)) writeControl(control, s[control.name]);
  }
  refreshEdited();
  queries.show(s.retrieval);
}

// A finished run changes the stream's last_run_at: the header shows it.
const reports = bindReports(root, streamId, {
  onRun: async () => {
    const fresh = await api(url).catch(() => null);
    if (fresh && stream) {
      stream = { ...stream, last_run_at: fresh.last_run_at };
      showHeader(stream);
    }
  },
});

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
