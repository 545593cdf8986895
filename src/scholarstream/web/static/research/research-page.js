// One research's page. What it shows follows the research's status (seed 001, "Status ->
// UI Mapping", research/display.py):
//   draft                  the edit form (PATCH on save; Start saves, then POST /research)
//   processing             each model's progress: pending, processing, completed, failed
//   synthesizing           "Synthesizing results..."
//   retrying               "Retrying failed providers..."
//   awaiting_confirmation  a dialog: the failed models with their errors, Proceed / Retry /
//                          Cancel (POST /{id}/confirm)
//   completed              the synthesis and each model's report, in tabs ("Synthesis not
//                          available" under the seed's condition, or with the reason the
//                          synthesis failed and a Retry that runs it again), the share link
//   failed                 the error and a Retry button (POST /{id}/retry), with advice that
//                          says what Retry will do (call the failed models, or synthesise)
// The status tables themselves (labels, cards, retry rows, advice) live in status.js, which
// a browser test compares with the Python ones.
// Progress is live: the events stream (GET /{id}/events, server-sent events from the
// outbox) says when something happened and the page reads the research again; the
// browser reconnects with Last-Event-ID, and a closed stream is reopened after the last
// event seen. A model starting its call has no event, so the page also reads the research
// every second while models are being asked.

import { registerChatContext } from "/static/app/chat/page-context.js";
import { bindButtons, modelChoices, RESEARCH_API, ResearchForm } from "/static/app/research/draft-form.js";
import {
  cardDisplay,
  retriesLeft,
  STATUS_LABELS,
  synthesisNotAvailable,
  synthesisNotice,
  synthesisRetryable,
  userAction,
} from "/static/app/research/status.js";
import { dateTime } from "/static/app/shared/dates.js";
import { auditView, EvidencePanel, packList, referenceList } from "/static/app/research/evidence.js";
import { ReportTabs } from "/static/app/research/tabs.js";
import { api } from "/static/app/shared/api.js";
import { el, renderProblem } from "/static/app/shared/dom.js";
import { renderMarkdown } from "/static/app/shared/markdown.js";

const LLM_LABELS = { pending: "Pending", processing: "Processing", completed: "Completed", failed: "Failed" };
const CUT_OFF = "Cut off: this answer reached its length limit before it was finished.";
const TITLE_FEATURE = "research.title";
const IN_FLIGHT = new Set(["processing", "retrying", "synthesizing", "awaiting_confirmation"]);
const POLLED = new Set(["processing", "retrying"]);
const EVENT_TYPES = [
  "research.started", "research.llm_completed", "research.llm_failed",
  "research.awaiting_confirmation", "research.retrying", "research.synthesizing",
  "research.completed", "research.failed", "research.shared",
];
const POLL_MS = 1000;
const RECONNECT_MS = [1000, 2000, 5000, 10_000, 15_000]; // then every 15 s
const SHARE_CHECK_MS = 4000;
const EXCERPT_CHARS = 1500;
const SYNTHESIS_EXCERPT_CHARS = 4000;

const root = document.querySelector('[data-page="research"]');
const researchId = root.dataset.researchId;
const url = `${RESEARCH_API}/${encodeURIComponent(researchId)}`;
const part = (role) => root.querySelector(`[data-role="${role}"]`);
const viewOf = (name) => root.querySelector(`[data-view="${name}"]`);
const loadProblem = part("load-problem");
const view = part("research");
const titleHeading = part("title");
const meta = root.querySelector('[data-testid="research-meta"]');
const phase = part("phase");
const actionProblem = part("action-problem");
const connection = part("connection");
const dialog = root.querySelector('[data-testid="confirm-dialog"]');
const dialogProblem = dialog.querySelector('[data-role="dialog-problem"]');
const form = new ResearchForm(viewOf("draft").querySelector('[data-form="research"]'));
const tabs = new ReportTabs(part("tabs"), { label: "Reports" });
const evidence = new EvidencePanel(viewOf("evidence"), researchId, (next) => show(next));

let research = null;
let shownJson = "";
let lastSeq = 0;
let source = null;
let reconnectTimer = null;
let reconnects = 0;
let pollTimer = null;
let refreshTimer = null;
let shareTimer = null;
let dialogKey = null;
let formShownFor = null;

// --- reading ---------------------------------------------------------------------------

const time = (value) => Date.parse(value ?? "") || 0;


const completedResults = (r) => r.llmResults.filter((result) => result.status === "completed");

/** The result of each model in the order they were selected; a model without a result
 *  yet (a draft) is pending. */
function results(r) {
  const byModel = new Map(r.llmResults.map((result) => [result.model, result]));
  const models = [...new Set([...r.selectedLlms, ...byModel.keys()])];
  return models.map((model) => byModel.get(model) ?? { model, status: "pending", attempt: 1 });
}

let refreshing = null;
let refreshAgain = false;

/** Reads the research again (one read at a time; a request made meanwhile reads once more). */
function refresh() {
  if (refreshing) {
    refreshAgain = true;
    return refreshing;
  }
  refreshing = (async () => {
    do {
      refreshAgain = false;
      try {
        show(await api(url));
      } catch (error) {
        connection.textContent = `The research could not be read again: ${error.message}`;
      }
    } while (refreshAgain);
  })().finally(() => {
    refreshing = null;
  });
  return refreshing;
}

function refreshSoon() {
  clearTimeout(refreshTimer);
  refreshTimer = setTimeout(refresh, 50);
}

// --- the events stream -----------------------------------------------------------------

function onEvent(event) {
  const seq = Number.parseInt(event.lastEventId, 10);
  if (Number.isFinite(seq) && seq > lastSeq) lastSeq = seq;
  refreshSoon();
}

function stopFollowing() {
  source?.close();
  source = null;
  clearTimeout(reconnectTimer);
  reconnectTimer = null;
  connection.textContent = "";
}

function follow() {
  if (!research || !IN_FLIGHT.has(research.status)) {
    stopFollowing();
    return;
  }
  if (source || reconnectTimer) return;
  const stream = new EventSource(`${url}/events?after=${lastSeq}`);
  source = stream;
  connection.textContent = "Connecting to the progress…";
  stream.addEventListener("open", () => {
    reconnects = 0;
    connection.textContent = "Following the progress live.";
  });
  for (const type of EVENT_TYPES) stream.addEventListener(type, onEvent);
  stream.addEventListener("error", () => {
    if (source !== stream) return;
    if (stream.readyState !== EventSource.CLOSED) {
      connection.textContent = "The connection was lost; reconnecting…";
      return;
    }
    // Closed for good (an error status, or the research ended): open it again after the
    // last event seen, if the research is still under way.
    source = null;
    const delay = RECONNECT_MS[Math.min(reconnects, RECONNECT_MS.length - 1)];
    reconnects += 1;
    connection.textContent = `The progress stream stopped; reconnecting in ${delay / 1000} s…`;
    reconnectTimer = setTimeout(async () => {
      reconnectTimer = null;
      await refresh();
      follow();
    }, delay);
  });
}

function schedulePoll() {
  clearTimeout(pollTimer);
  pollTimer = null;
  if (research && POLLED.has(research.status)) pollTimer = setTimeout(refresh, POLL_MS);
}

// A completed research is shared (its shareInfo set) just after it completes.
function scheduleShareCheck() {
  clearTimeout(shareTimer);
  shareTimer = null;
  const justCompleted = research.status === "completed" && !research.shareInfo
    && Date.now() - time(research.completedAt) < 60_000;
  if (justCompleted) shareTimer = setTimeout(refresh, SHARE_CHECK_MS);
}

// --- showing ---------------------------------------------------------------------------

function phaseText(r) {
  const all = results(r);
  const count = (status) => all.filter((result) => result.status === status).length;
  switch (r.status) {
    case "draft":
      return "Draft: not started yet.";
    case "processing": {
      const working = count("pending") + count("processing");
      const parts = [`${count("completed")} answered`];
      if (count("failed")) parts.push(`${count("failed")} failed`);
      if (working) parts.push(`${working} still working`);
      return `Asking ${all.length} model${all.length === 1 ? "" : "s"}: ${parts.join(", ")}.`;
    }
    case "synthesizing":
      return "Synthesizing results...";
    case "retrying":
      return "Retrying failed providers...";
    case "awaiting_confirmation":
      return `${count("failed")} of ${all.length} models failed: proceed without them, retry them, or cancel.`;
    case "completed":
      return r.synthesizedResult ? "Completed: the synthesis and each model's report are below."
        : synthesisRetryable(r) ? "Completed without a synthesis: it failed; Retry runs it again."
          : "Completed without a synthesis.";
    case "failed":
      return `Failed: ${r.error || "the research did not finish."}`;
    default:
      return r.status;
  }
}

function showHeader(r) {
  titleHeading.textContent = r.title;
  // Said once, under the title, while the title is the one cut because of it.
  const fallback = (r.fallbacks ?? []).find((f) => f.feature === TITLE_FEATURE);
  const titleNote = part("title-fallback");
  titleNote.hidden = !fallback;
  titleNote.textContent = fallback
    ? `The model's title could not be used (${fallback.reason}); the title was cut from the question.`
    : "";
  document.title = `${r.title} · ScholarStream`;
  const status = el("span", { class: `badge research-status status-${r.status}`, dataset: { testid: "research-status" } },
    STATUS_LABELS[r.status] ?? r.status);
  const ended = r.completedAt && ["completed", "failed"].includes(r.status);
  meta.replaceChildren(...[
    status,
    el("span", { class: "muted" }, "Created ", el("time", { datetime: r.createdAt }, dateTime(r.createdAt))),
    ended ? el("span", { class: "muted" }, `${r.status === "completed" ? "Completed" : "Ended"} `,
      el("time", { datetime: r.completedAt }, dateTime(r.completedAt))) : null,
    r.synthesisLlm ? el("span", { class: "muted" }, `Synthesis by ${r.synthesisLlm}`) : null,
  ].filter(Boolean));
  root.dataset.status = r.status;
}

function progressItem(result) {
  return el("li", {
    class: "model-row", dataset: { model: result.model, status: result.status, testid: "model-row" },
  },
  el("span", { class: "model-name" }, result.model),
  el("span", { class: `badge llm-status llm-${result.status}`, dataset: { testid: "model-status" } },
    LLM_LABELS[result.status] ?? result.status),
  result.attempt > 1 ? el("span", { class: "muted" }, `attempt ${result.attempt}`) : null,
  result.cutOff ? el("span", { class: "muted", dataset: { testid: "model-cut-off" } }, "cut off") : null,
  result.status === "failed" && result.error
    ? el("span", { class: "model-error", dataset: { testid: "model-error" } }, result.error)
    : null);
}

function showProgress(r) {
  part("model-progress").replaceChildren(...results(r).map(progressItem));
}

function showFailure(r) {
  part("error").textContent = r.error || "The research failed.";
  const synthesisError = part("synthesis-error");
  synthesisError.hidden = !r.synthesisError || r.synthesisError === r.error;
  synthesisError.textContent = r.synthesisError ? `The synthesis: ${r.synthesisError}` : "";
  const action = userAction(r)?.advice ?? "Retry tries again what failed.";
  part("user-action").replaceChildren(action, ...(r.failureReason === "api_key_invalid"
    ? [" ", el("a", { href: "/settings" }, "Open Settings")] : []));
}

function shareLink(info) {
  if (!info?.shareUrl) return null;
  try {
    const target = new URL(info.shareUrl, window.location.origin);
    if (target.protocol !== "https:" && target.protocol !== "http:") return null;
    return target.href;
  } catch {
    return null;
  }
}

function showResults(r) {
  const share = part("share");
  const href = shareLink(r.shareInfo);
  share.hidden = !href;
  share.replaceChildren(...(href
    ? ["Shareable report: ", el("a", { href, target: "_blank", rel: "noopener", dataset: { testid: "share-link" } }, href)]
    : []));
  part("no-synthesis").hidden = !synthesisNotAvailable(r);
  part("synthesis-notice").textContent = synthesisNotice(r) ?? "";
  part("synthesis-retry").hidden = !synthesisRetryable(r);

  const panels = [];
  if (r.synthesizedResult) {
    panels.push({
      key: "synthesis",
      label: "Synthesis",
      render: () => el("div", {},
        r.synthesisAudit
          ? auditView(r.synthesisAudit, { testid: "synthesis" })
          : el("div", { class: "markdown", dataset: { testid: "synthesis" } }, renderMarkdown(r.synthesizedResult)),
        r.synthesisCutOff ? el("p", { class: "muted", dataset: { testid: "synthesis-cut-off" } }, CUT_OFF) : null,
        referenceList(r.id, r.evidence, [r.synthesisAudit, ...completedResults(r).map((result) => result.audit)])),
    });
  }
  for (const result of results(r)) {
    panels.push({
      key: `model:${result.model}`,
      label: result.model,
      note: result.status === "completed" ? null : LLM_LABELS[result.status]?.toLowerCase(),
      render: () => reportPanel(result),
    });
  }
  if (r.evidence?.items?.length) {
    panels.push({
      key: "evidence",
      label: `Evidence (${r.evidence.items.length})`,
      render: () => packList(r.evidence),
    });
  }
  tabs.show(panels);
}

function reportPanel(result) {
  if (result.status === "completed") {
    const dataset = { testid: "model-report", model: result.model };
    const report = result.audit
      ? auditView(result.audit, dataset)
      : el("div", { class: "markdown", dataset }, renderMarkdown(result.content ?? ""));
    return result.cutOff
      ? el("div", {}, report, el("p", { class: "muted", dataset: { testid: "report-cut-off" } }, CUT_OFF))
      : report;
  }
  if (result.status === "failed") {
    return el("p", { class: "model-error", dataset: { testid: "model-report", model: result.model } },
      `This model failed: ${result.error || "no reason was given."}`);
  }
  return el("p", { class: "muted", dataset: { testid: "model-report", model: result.model } }, "No answer.");
}

function showDecision(r) {
  const failed = results(r).filter((result) => result.status === "failed");
  const answered = completedResults(r).length;
  const left = retriesLeft(r);
  const summary = `${answered} model${answered === 1 ? "" : "s"} answered and ${failed.length} failed. `
    + "Go on with the answers you have, ask the failed models again, or stop.";
  part("decision-summary").textContent = summary;
  dialog.querySelector('[data-role="dialog-summary"]').textContent = summary;
  dialog.querySelector('[data-role="failed-models"]').replaceChildren(...failed.map((result) =>
    el("li", { dataset: { model: result.model } },
      el("strong", { class: "model-name" }, result.model),
      el("span", { class: "model-error" }, result.error || "no reason was given"))));
  dialog.querySelector('[data-role="retry-help"]').textContent = left
    ? `Ask the failed models again (${left} ${left === 1 ? "retry" : "retries"} left).`
    : "Both retries are used: retrying again ends the research as failed; Retry from there "
      + "synthesises the answers you have.";
}

function openDialog() {
  dialogProblem.replaceChildren();
  if (!dialog.open) dialog.showModal();
}

function updateDialog(r) {
  if (r.status !== "awaiting_confirmation") {
    dialogKey = null;
    if (dialog.open) dialog.close();
    return;
  }
  showDecision(r);
  // Opened once per partial failure: closed with Esc, it stays closed until asked for.
  const key = `${r.partialFailure?.detectedAt}|${r.partialFailure?.retryCount}`;
  if (key !== dialogKey) {
    dialogKey = key;
    openDialog();
  }
}

async function showDraft(r) {
  form.showTitleSource(r.titleSource);
  if (formShownFor === r.id) return;
  formShownFor = r.id;
  form.showText(draftValues(r));
  let available = [];
  try {
    available = (await modelChoices()).selectedLlms;
  } catch (error) {
    form.problem(error, "The models could not be loaded.");
  }
  // The draft as saved now: a save made while the models loaded may have changed it.
  form.showChoices(available, form.saved.selectedLlms, form.saved.synthesisLlm);
}

const draftValues = (r) => ({
  title: r.title, prompt: r.prompt, selectedLlms: r.selectedLlms, synthesisLlm: r.synthesisLlm ?? "",
});

/** Shows ``next`` (an older read than the one shown is ignored). */
function show(next) {
  if (research && time(next.updatedAt) < time(research.updatedAt)) return;
  research = next;
  const json = JSON.stringify(next);
  if (json !== shownJson) {
    shownJson = json;
    const card = cardDisplay(next);
    const reports = card === "synthesis_and_reports" || card === "reports_without_synthesis";
    showHeader(next);
    const phaseLine = phaseText(next);
    if (phase.textContent !== phaseLine) phase.textContent = phaseLine;
    viewOf("draft").hidden = card !== "edit_form";
    viewOf("evidence").hidden = card !== "edit_form";
    if (card === "edit_form") {
      showDraft(next);
      evidence.show(next);
    }
    viewOf("question").hidden = card === "edit_form";
    part("prompt").textContent = next.prompt;
    viewOf("progress").hidden = card === "edit_form" || reports;
    if (card !== "edit_form") showProgress(next);
    viewOf("confirmation").hidden = card !== "confirmation_dialog";
    viewOf("failed").hidden = card !== "error_with_retry";
    if (card === "error_with_retry") showFailure(next);
    const hasResults = Boolean(next.synthesizedResult) || completedResults(next).length > 0;
    viewOf("results").hidden = !(reports || (card === "error_with_retry" && hasResults));
    if (!viewOf("results").hidden) showResults(next);
    updateDialog(next);
    scheduleShareCheck();
  }
  schedulePoll();
  follow();
}

// --- actions ---------------------------------------------------------------------------

async function act(request, problemBox, lead) {
  problemBox.replaceChildren();
  try {
    const updated = await request();
    show(updated);
    return true;
  } catch (error) {
    renderProblem(problemBox, error, lead);
    if (error?.body?.code === "conflict") refresh();
    return false;
  }
}

async function submitDraft(action) {
  const start = action === "start";
  form.clearProblem();
  actionProblem.replaceChildren();
  form.busy(true);
  form.status(start ? "Starting…" : "Saving…");
  try {
    const changes = form.changes();
    if (Object.keys(changes).length) {
      const saved = await api(url, { method: "PATCH", body: JSON.stringify(changes) });
      form.show(draftValues(saved));
      show(saved);
    } else if (!start) {
      form.status("Nothing to save.");
      return;
    }
    if (start) {
      show(await api(RESEARCH_API, { method: "POST", body: JSON.stringify({ researchId }) }));
      phase.focus();
    }
    form.status(start ? "" : "Saved.");
  } catch (error) {
    form.problem(error, start ? "The research did not start." : "The draft was not saved.");
    if (error?.body?.code === "conflict") refresh(); // started meanwhile (another tab)
  } finally {
    form.busy(false);
  }
}

async function decide(action) {
  const buttons = [...dialog.querySelectorAll("button[data-action]")];
  buttons.forEach((button) => { button.disabled = true; });
  const done = await act(
    () => api(`${url}/confirm`, { method: "POST", body: JSON.stringify({ action }) }),
    dialogProblem, "Nothing changed.");
  buttons.forEach((button) => { button.disabled = false; });
  if (done) {
    if (dialog.open) dialog.close();
    phase.focus();
  }
}

bindButtons(form, submitDraft);
for (const action of ["proceed", "retry", "cancel"]) {
  dialog.querySelector(`[data-action="${action}"]`).addEventListener("click", () => decide(action));
}
root.querySelector('[data-action="open-dialog"]').addEventListener("click", openDialog);

const retryButton = root.querySelector('[data-action="retry-failed"]');
retryButton.addEventListener("click", async () => {
  retryButton.disabled = true;
  part("retry-status").textContent = "Retrying…";
  const done = await act(() => api(`${url}/retry`, { method: "POST" }), actionProblem, "The research was not retried.");
  part("retry-status").textContent = "";
  retryButton.disabled = false;
  if (done) phase.focus();
});

const synthesisRetryButton = root.querySelector('[data-action="retry-synthesis"]');
synthesisRetryButton.addEventListener("click", async () => {
  synthesisRetryButton.disabled = true;
  part("synthesis-retry-status").textContent = "Running the synthesis again…";
  const done = await act(() => api(`${url}/retry`, { method: "POST" }), actionProblem,
    "The synthesis was not run again.");
  part("synthesis-retry-status").textContent = "";
  synthesisRetryButton.disabled = false;
  if (done) phase.focus();
});

// --- the chat ---------------------------------------------------------------------------

const excerpt = (text, limit) => (text && text.length > limit ? text.slice(0, limit) : text || null);

function chatResearch(r) {
  return {
    id: r.id,
    title: r.title,
    prompt: r.prompt,
    status: r.status,
    models: r.selectedLlms,
    synthesis_model: r.synthesisLlm,
    external_reports: r.externalReports?.length ?? 0,
    created_at: r.createdAt,
    started_at: r.startedAt,
    completed_at: r.completedAt,
    results: results(r).map((result) => ({
      model: result.model,
      status: result.status,
      attempt: result.attempt,
      error: result.error ?? null,
      answer_excerpt: excerpt(result.content, EXCERPT_CHARS),
      cut_off: Boolean(result.cutOff),
      answer_chars: result.content?.length ?? 0,
    })),
    synthesis_excerpt: excerpt(r.synthesizedResult, SYNTHESIS_EXCERPT_CHARS),
    synthesis_chars: r.synthesizedResult?.length ?? 0,
    synthesis_not_available: synthesisNotAvailable(r),
    synthesis_notice: synthesisNotice(r),
    partial_failure: r.partialFailure
      ? { failed_models: r.partialFailure.failedProviders, retry_count: r.partialFailure.retryCount }
      : null,
    error: r.error,
    synthesis_error: r.synthesisError,
    user_action: userAction(r)?.advice ?? null,
    share_url: shareLink(r.shareInfo),
    showing: viewOf("results").hidden ? null : tabs.selectedLabel(),
    unsaved_changes: r.status === "draft" ? form.changes() : null,
  };
}

registerChatContext(() => ({
  viewer: research ? { kind: "research", id: research.id, title: research.title } : null,
  research: research ? chatResearch(research) : null,
}));

// --- start ------------------------------------------------------------------------------

async function load() {
  let first;
  try {
    first = await api(url);
  } catch (error) {
    renderProblem(loadProblem, error, "The research could not be loaded.");
    return;
  }
  loadProblem.replaceChildren();
  view.hidden = false;
  show(first);
}

load();
