// The Research page: the user's research (rendered by the server) and the New research
// form. Start research saves the draft (POST /draft) and starts it (POST /research), then
// opens its page; Save as draft only saves it. When the start is refused (no model, a
// missing key) the draft is kept, the error is shown, the form keeps what was typed, and
// the next try edits that same draft (PATCH) instead of making another.

import { registerChatContext } from "/static/app/chat/page-context.js";
import { bindButtons, modelChoices, RESEARCH_API, ResearchForm } from "/static/app/research/draft-form.js";
import { api } from "/static/app/shared/api.js";
import { el } from "/static/app/shared/dom.js";

const root = document.querySelector('[data-page="research-list"]');
const form = new ResearchForm(root.querySelector('[data-form="research"]'));
const draftNote = root.querySelector('[data-role="draft-note"]');
const runs = JSON.parse(root.querySelector('[data-role="runs"]').textContent || "[]");

let draftId = null;

async function load() {
  try {
    const defaults = await modelChoices();
    form.showChoices(defaults.selectedLlms, defaults.selectedLlms, defaults.synthesisLlm ?? "");
  } catch (error) {
    form.showChoices([], [], "");
    form.problem(error, "The models could not be loaded.");
  }
}

function noteDraft(id) {
  draftNote.replaceChildren("Your research was saved as a draft: ",
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
    } else {
      await api(`${RESEARCH_API}/${encodeURIComponent(draftId)}`, {
        method: "PATCH", body: JSON.stringify(form.allFields()),
      });
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
