// The Research page: the user's research (rendered by the server) and the New research
// form. Start research saves the draft (POST /draft) and starts it (POST /research), then
// opens its page; Save as draft only saves it. When the start is refused (no model, a
// missing key) the draft is kept, the error is shown, the form keeps what was typed, and
// the next try edits that same draft (PATCH) instead of making another.

import { registerChatContext } from "/static/app/chat/page-context.js";
import { dateTime, showTimes } from "/static/app/shared/dates.js";
import { bindButtons, modelChoices, RESEARCH_API, ResearchForm } from "/static/app/research/draft-form.js";
import { STATUS_LABELS } from "/static/app/research/status.js";
import { api } from "/static/app/shared/api.js";
import { el } from "/static/app/shared/dom.js";

const root = document.querySelector('[data-page="research-list"]');
const form = new ResearchForm(root.querySelector('[data-form="research"]'));
const draftNote = root.querySelector('[data-role="draft-note"]');
const list = root.querySelector('[data-role="list"]');
const noResearch = root.querySelector('[data-testid="no-research"]');
const runs = JSON.parse(root.querySelector('[data-role="runs"]').textContent || "[]");

let draftId = null;

showTimes(list);

async function load() {
  try {
    const defaults = await modelChoices();
    form.showTitleHelp(defaults.titleModel ?? null);
    form.showChoices(defaults.selectedLlms, defaults.selectedLlms, defaults.synthesisLlm ?? "");
  } catch (error) {
    form.showChoices([], [], "");
    form.problem(error, "The models could not be loaded.");
  }
}

/** A draft saved by a start that was refused: it joins the list (as the server would list
 *  it), so no draft is ever kept where the user cannot see it. */
function listDraft(draft) {
  const href = `/research/${encodeURIComponent(draft.id)}`;
  const existing = list.querySelector(`[data-research-id="${CSS.escape(draft.id)}"]`);
  const item = el("li", { class: "research-item", dataset: { researchId: draft.id, status: draft.status } },
    el("h3", {}, el("a", { href }, draft.title)),
    el("p", { class: "meta" },
      el("span", { class: `badge research-status status-${draft.status}`, dataset: { testid: "research-status" } },
        STATUS_LABELS[draft.status] ?? draft.status),
      el("span", { class: "muted" }, "Created ", el("time", { datetime: draft.createdAt }, dateTime(draft.createdAt)))),
    el("p", { class: "meta models-line" }, el("span", { class: "visually-hidden" }, "Models: "),
      draft.selectedLlms.length
        ? draft.selectedLlms.map((model) => el("span", { class: "model-tag" }, model))
        : el("span", { class: "muted" }, "No model selected")));
  if (existing) existing.replaceWith(item);
  else list.prepend(item);
  list.hidden = false;
  noResearch.hidden = true;
  if (!runs.some((run) => run.id === draft.id)) {
    runs.unshift({ id: draft.id, title: draft.title, status: draft.status, models: draft.selectedLlms, created_at: draft.createdAt });
  }
}

function noteDraft(id) {
  draftNote.replaceChildren("Your research was saved as a draft (listed under Your research): ",
    el("a", { href: `/research/${encodeURIComponent(id)}` }, "open the draft"),
    ". Correct the form and try again, or open the draft later.");
  draftNote.hidden = false;
}

async function submit(action) {
  const start = action === "start";
  form.clearProblem();
  form.busy(true);
  form.status(start ? "Starting…" : "Saving…");
  try {
    if (draftId === null) {
      const draft = await api(`${RESEARCH_API}/draft`, { method: "POST", body: JSON.stringify(form.draftBody()) });
      draftId = draft.id;
      listDraft(draft);
    } else {
      listDraft(await api(`${RESEARCH_API}/${encodeURIComponent(draftId)}`, {
        method: "PATCH", body: JSON.stringify(form.allFields()),
      }));
    }
    if (start) {
      await api(RESEARCH_API, { method: "POST", body: JSON.stringify({ researchId: draftId }) });
    }
  } catch (error) {
    form.busy(false);
    if (draftId !== null) noteDraft(draftId);
    form.problem(error, start ? "The research did not start." : "The draft was not saved.");
    return;
  }
  form.status(start ? "Started." : "Saved.");
  window.location.assign(`/research/${encodeURIComponent(draftId)}`);
}

bindButtons(form, submit);

registerChatContext(() => ({
  search_form: form.context(),
  results: { total: runs.length },
  research_runs: runs,
}));

load();
