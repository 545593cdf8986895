// The streams list's "Drafts in progress": the user's open stream creations in which
// something was said (GET /api/v1/streams/creation; the one empty draft a visit to "New
// stream" keeps is not listed), most recently changed first, each linked to its creation
// page (/streams/new/<id>), which resumes it where it was left, and each with a Delete
// button that asks first (DELETE /api/v1/streams/creation/<id>). No drafts: no section.

import { api } from "/static/app/shared/api.js";
import { el, renderProblem } from "/static/app/shared/dom.js";

const section = document.querySelector('[data-testid="drafts"]');
const list = section.querySelector('[data-role="draft-list"]');
const problem = section.querySelector('[data-role="drafts-problem"]');
const status = document.querySelector('[data-role="drafts-status"]'); // outside: the section may hide
const dialog = document.querySelector('[data-testid="confirm-draft-delete"]');

let pending = null; // the draft the dialog asks about, and the button that opened it

function when(value) {
  const parsed = new Date(value);
  return Number.isNaN(parsed.getTime()) ? String(value) : parsed.toLocaleString();
}

function item(draft) {
  const remove = el("button", { type: "button", class: "secondary small", dataset: { action: "delete-draft" },
    "aria-label": `Delete the draft ${draft.title}` }, "Delete…");
  remove.addEventListener("click", () => {
    pending = { draft, button: remove };
    dialog.querySelector('[data-role="title"]').textContent = draft.title;
    dialog.returnValue = "";
    dialog.showModal();
  });
  return el("li", { class: "stream-item draft-item", dataset: { creationId: draft.id } },
    el("div", { class: "draft-main" },
      el("h3", {}, el("a", { href: `/streams/new/${encodeURIComponent(draft.id)}` }, draft.title)),
      el("p", { class: "meta" },
        el("span", { dataset: { field: "step" } }, `Step: ${draft.step_label}`),
        el("span", { class: "muted" }, `· changed ${when(draft.updated_at)}`))),
    remove);
}

async function remove(draft) {
  problem.replaceChildren();
  try {
    await api(`/api/v1/streams/creation/${encodeURIComponent(draft.id)}`, { method: "DELETE" });
  } catch (error) {
    renderProblem(problem, error, "The draft was not deleted.");
    return false;
  }
  list.querySelector(`[data-creation-id="${CSS.escape(draft.id)}"]`)?.remove();
  status.textContent = `The draft “${draft.title}” was deleted.`;
  if (!list.children.length) section.hidden = true;
  return true;
}

dialog.addEventListener("close", async () => {
  const chosen = pending;
  pending = null;
  if (!chosen) return;
  if (dialog.returnValue !== "delete") {
    chosen.button.focus();
    return;
  }
  if (await remove(chosen.draft)) {
    // The focus goes to the next draft's link, or to the page's "New stream".
    const next = list.querySelector("a") ?? document.querySelector('[data-testid="new-stream"]');
    next?.focus();
  }
});

async function show() {
  let drafts;
  try {
    drafts = (await api("/api/v1/streams/creation")).creations;
  } catch (error) {
    section.hidden = false;
    renderProblem(problem, error, "Your drafts could not be listed.");
    return;
  }
  const started = drafts.filter((draft) => draft.turns > 0);
  list.replaceChildren(...started.map(item));
  section.hidden = started.length === 0;
}

show();
