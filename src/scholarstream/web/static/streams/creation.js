// The stream creation page (seed 000's frontend): a conversation with the guide, whose
// answers stream token by token, with suggestion chips, option checkboxes, a skip button on
// optional steps and the review; a preview panel whose edits travel with the next answer.
//
// /streams/new opens a creation (the user's one empty draft if there is one, so opening the
// page again and again leaves one draft) and moves to /streams/new/<id>, which resumes it
// after a reload, with the guide's last chips (kept with the draft on the server). What the
// user typed and has not sent (the answer box, unsent preview edits) is kept in
// sessionStorage per creation, so a reload or a failed turn loses nothing.

import { registerChatContext } from "/static/app/chat/page-context.js";
import { api } from "/static/app/shared/api.js";
import { el, renderProblem, renderStatus } from "/static/app/shared/dom.js";
import { GuideLog, OfferPanel } from "/static/app/streams/conversation.js";
import { Preview } from "/static/app/streams/preview.js";
import { sendTurn } from "/static/app/streams/turns.js";

const root = document.querySelector('[data-page="stream-new"]');
const pageProblem = root.querySelector('[data-role="page-problem"]');
const guideKind = root.querySelector('[data-testid="guide-kind"]');
const announcer = root.querySelector('[data-role="announce"]');
const composer = root.querySelector('[data-role="composer"]');
const input = composer.elements.message;
const sendButton = composer.querySelector('[data-action="send"]');
const turnProblem = composer.querySelector('[data-role="turn-problem"]');

const log = new GuideLog(root.querySelector('[data-testid="guide-log"]'));
const preview = new Preview(root.querySelector('[data-role="preview-form"]'), root.querySelector('[data-testid="steps"]'),
  { onChange: (edits) => { saveDraft(); unmarkSettled(edits); } });
const shownChoice = (field, value) => preview.choiceLabel(field, value);
const offers = new OfferPanel(root.querySelector('[data-testid="guide-offer"]'), {
  labelOf: (field) => preview.labelOf(field),
  choiceLabel: shownChoice,
  isOptional: (step) => preview.dataFields().includes(step) && preview.isOptional(step),
  handlers: {
    choose: (field, value) => send({ action: { type: "option_selected", target_field: field, selected_value: value } },
      `Selected “${shownChoice(field, value)}” for ${preview.labelOf(field).toLowerCase()}.`),
    chooseMany: (field, values) => send({ action: { type: "options_selected", target_field: field, selected_values: values } },
      `Selected ${values.map((v) => `“${v}”`).join(", ")} for ${preview.labelOf(field).toLowerCase()}.`),
    skip: (field) => send({ action: { type: "skip_step", target_field: field } },
      `Skipped ${preview.labelOf(field).toLowerCase()}.`),
    confirm: () => send({ message: "Create the stream", action: { type: "text_input" } }, null, "Create the stream"),
  },
});

const state = {
  creation: null, // id, status, guide, step, config, completed_steps, skipped_steps, revision, stream_id
  offer: null, // the guide's last target_field, suggestions, options, proposed_message (the draft keeps it)
  busy: false,
};

// --- the draft: what the user typed and has not sent ------------------------------------

const draftKey = (id) => `scholarstream:stream-draft:${id}`;

function saveDraft() {
  const creation = state.creation;
  if (!creation || creation.status !== "open") return;
  try {
    sessionStorage.setItem(draftKey(creation.id), JSON.stringify({
      revision: creation.revision, message: input.value, edits: preview.edits(),
    }));
  } catch {
    // Storage may be full or disabled: the page works without it.
  }
}

function readDraft(id) {
  try {
    return JSON.parse(sessionStorage.getItem(draftKey(id)) ?? "null");
  } catch {
    return null;
  }
}

function dropDraft(id) {
  try {
    sessionStorage.removeItem(draftKey(id));
  } catch {
    // nothing to do
  }
}

// --- showing a creation -----------------------------------------------------------------

function announce(text) {
  announcer.textContent = text;
}

function setBusy(busy) {
  state.busy = busy;
  input.readOnly = busy;
  sendButton.disabled = busy || state.creation?.status !== "open";
  offers.setDisabled(busy);
  composer.setAttribute("aria-busy", String(busy));
}

function showSteps() {
  const c = state.creation;
  preview.showSteps({ step: c.step, completed: c.completed_steps, skipped: c.skipped_steps });
}

function showClosed(view) {
  input.disabled = true;
  sendButton.disabled = true;
  if (view.status === "completed" && view.stream_id) {
    pageProblem.replaceChildren(el("p", { class: "status done" }, "This stream has been created. ",
      el("a", { href: `/streams/${encodeURIComponent(view.stream_id)}` }, "Open the stream")));
  } else {
    pageProblem.replaceChildren(el("p", { class: "status info" }, "This draft was abandoned. ",
      el("a", { href: "/streams/new" }, "Start a new stream")));
  }
}

/** The created stream's own page, in place of the guide's address (which, reopened, would
 * only say the stream was created): the address bar and the history show the stream. */
function openStream(streamId) {
  const address = `/streams/${encodeURIComponent(streamId)}`;
  window.history.replaceState(null, "", address);
  window.location.replace(address);
}

function load(view) {
  if (view.status === "completed" && view.stream_id) {
    openStream(view.stream_id); // a created stream's guide address opens the stream
    return;
  }
  // Read before showing anything: showing the configuration saves the draft again.
  const draft = view.status === "open" ? readDraft(view.id) : null;
  state.creation = {
    id: view.id, status: view.status, guide: view.guide, step: view.step, config: view.config,
    completed_steps: view.completed_steps, skipped_steps: view.skipped_steps,
    revision: view.revision, stream_id: view.stream_id,
  };
  guideKind.textContent = view.guide === "model"
    ? "(a language model)"
    : "(rule-based: no language model is configured)";
  log.clear();
  for (const message of view.messages) {
    if (message.role === "assistant") log.assistant(message.content);
    else log.user(message);
  }
  preview.show(view.config);
  showSteps();
  state.offer = view.offer ?? null;
  if (draft) {
    if (draft.message && !input.value) input.value = draft.message;
    preview.restore(draft.edits);
  }
  if (view.status !== "open") showClosed(view);
  offers.render(state.offer, view.status === "open" ? view.step : "complete");
  setBusy(false);
}

// --- one turn ---------------------------------------------------------------------------

// Error codes of a turn refused before the guide was asked (its input, or a closed draft).
const REFUSED = new Set(["invalid_input", "conflict"]);

const refusedControls = () => root.querySelectorAll('[data-role="preview-form"] [aria-invalid="true"]');

/** Marks the preview control a refused turn named (an inline edit it could not take). */
function markRefused(field) {
  for (const marked of refusedControls()) marked.removeAttribute("aria-invalid");
  const control = field ? preview.form.elements.namedItem(field) : null;
  if (control instanceof HTMLElement) control.setAttribute("aria-invalid", "true");
}

/** A refused edit that was undone (or changed) is no longer marked. */
function unmarkSettled(edits) {
  for (const marked of refusedControls()) {
    if (!Object.hasOwn(edits, marked.name)) marked.removeAttribute("aria-invalid");
  }
}

function problemOf(error) {
  if (error?.body) return error;
  return { body: { code: "unreachable", message: "The server could not be reached.", hint: "Check that it is running, then send your answer again." } };
}

/** After a lost connection: the turn may have been saved before the answer reached us. */
async function recoverLostTurn(terminal) {
  try {
    const view = await api(`/api/v1/streams/creation/${encodeURIComponent(state.creation.id)}`);
    if (view.revision > state.creation.revision) {
      load(view);
      return true;
    }
  } catch {
    // Said below.
  }
  renderProblem(turnProblem, { body: terminal }, "The guide's answer did not arrive.");
  return false;
}

/**
 * Sends one turn: ``body`` (message, action) plus the preview's unsent edits. ``shown`` is
 * the action in words for the log (null: the typed ``message``). Resolves true when the
 * turn was saved. On any failure nothing is lost: the answer box, the edits, the chips and
 * the ticked options stay as they were, and the problem is shown above the answer box.
 */
async function send(body, action, message = "") {
  if (state.busy || state.creation?.status !== "open") return false;
  turnProblem.replaceChildren();
  markRefused(null);
  const edits = preview.edits();
  const request = { message: body.message ?? "", action: body.action };
  if (Object.keys(edits).length) request.edits = edits;
  setBusy(true);
  const pending = log.pendingUser({ content: action ? "" : message || request.message, action: action ?? "" });
  const answer = log.startAnswer();
  announce("The guide is writing…");
  let terminal;
  try {
    terminal = await sendTurn(state.creation.id, request, {
      onEvent: (event) => {
        if (event.type === "text_delta") answer.append(event.text);
        else if (event.type === "retry") answer.reset();
      },
    });
  } catch (error) {
    terminal = null;
    pending.remove();
    answer.remove();
    renderProblem(turnProblem, problemOf(error), "Not sent.");
  }
  if (terminal?.type === "error") {
    pending.remove();
    answer.remove();
    if (terminal.code === "connection_lost" && await recoverLostTurn(terminal)) {
      announce("The guide answered.");
      return true;
    }
    if (REFUSED.has(terminal.code)) {
      // Refused before the guide was asked: the answer box and the edits stay as they are.
      renderProblem(turnProblem, { body: terminal }, "Not sent.");
      if (Object.hasOwn(edits, terminal.field ?? "")) markRefused(terminal.field);
    } else if (terminal.code !== "connection_lost") {
      renderProblem(turnProblem, { body: terminal }, "The guide could not answer.");
    }
  }
  if (terminal?.type !== "turn_result") {
    announce("Your answer was not sent; see the problem above the answer box.");
    setBusy(false);
    return false;
  }
  accept(terminal, edits, pending, answer);
  return true;
}

function accept(result, sentEdits, pending, answer) {
  const history = result.session?.history ?? [];
  pending.settle(history.at(-2)?.role === "user" ? history.at(-2) : null);
  answer.finish(result.message);
  state.creation = {
    ...state.creation,
    step: result.next_step,
    config: result.updated_config,
    completed_steps: result.completed_steps,
    skipped_steps: result.session?.skipped_steps ?? state.creation.skipped_steps,
    revision: result.revision,
    stream_id: result.stream_id,
  };
  state.offer = {
    target_field: result.target_field,
    suggestions: result.suggestions,
    options: result.options,
    proposed_message: result.proposed_message,
  };
  preview.afterTurn(result.updated_config, sentEdits);
  showSteps();
  // The details (result.warnings) are the API's and the server log's: the page says it
  // plainly, without the guide's field names.
  if (result.warnings?.length) {
    turnProblem.replaceChildren(el("p", { class: "status warning", role: "note", dataset: { testid: "guide-warnings" } },
      "Part of the guide's answer could not be used and was left out. Check the panel, or tell the guide what you meant."));
  }
  // The offline guide answered this turn (the model's answer was unusable, late or
  // failed): said once per creation, at the first turn it happens.
  const earlier = history.slice(0, -1).some((m) => m.role === "assistant" && m.fallback);
  if (result.fallback && !earlier) {
    turnProblem.append(el("p", { class: "status warning", role: "note", dataset: { testid: "guide-fallback" } },
      result.fallback.message, ...(result.fallback.hint ? [" ", el("span", { class: "hint" }, result.fallback.hint)] : [])));
  }
  if (result.stream_id) {
    state.creation.status = "completed";
    dropDraft(state.creation.id);
    announce("The stream is created. Opening it…");
    renderStatus(pageProblem, "The stream is created. Opening it…", "done");
    openStream(result.stream_id);
    return;
  }
  offers.render(state.offer, result.next_step);
  setBusy(false);
  saveDraft();
  announce("The guide answered.");
  // A clicked chip or button is gone with the old offer: keep the focus on the page.
  if (!root.contains(document.activeElement)) input.focus({ preventScroll: true });
}

// --- wiring -----------------------------------------------------------------------------

composer.addEventListener("submit", async (event) => {
  event.preventDefault();
  const message = input.value.trim();
  if (!message) {
    renderStatus(turnProblem, "Type an answer first, or pick one of the suggestions.", "warning");
    input.focus();
    return;
  }
  if (await send({ message, action: { type: "text_input" } }, null, message)) {
    input.value = "";
    saveDraft();
  }
  input.focus();
});
input.addEventListener("keydown", (event) => {
  if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
    event.preventDefault();
    composer.requestSubmit();
  }
});
input.addEventListener("input", () => saveDraft());
preview.form.addEventListener("input", (event) => event.target.removeAttribute?.("aria-invalid"));

registerChatContext(() => {
  const creation = state.creation;
  if (!creation) return {};
  return {
    viewer: { kind: "stream_creation", id: creation.id, step: creation.step },
    stream_creation: {
      step: creation.step,
      guide: creation.guide,
      config: { ...creation.config, ...preview.edits() },
      skipped_steps: creation.skipped_steps,
    },
  };
});

async function start() {
  const id = root.dataset.creationId;
  setBusy(true);
  try {
    const view = id
      ? await api(`/api/v1/streams/creation/${encodeURIComponent(id)}`)
      : await api("/api/v1/streams/creation", { method: "POST" });
    if (!id) window.history.replaceState(null, "", `/streams/new/${encodeURIComponent(view.id)}`);
    load(view);
  } catch (error) {
    log.clear();
    renderProblem(pageProblem, error, id ? "This stream draft could not be opened." : "The guide could not be started.");
    input.disabled = true;
    return;
  }
  input.focus();
}

start();
