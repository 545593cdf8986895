// The streams list's "Drafts in progress": the user's open stream creations
// (GET /api/v1/streams/creation), most recently changed first, each linked to its creation
// page (/streams/new/<id>), which resumes it where it was left. No drafts: no section.

import { api } from "/static/app/shared/api.js";
import { el, renderProblem } from "/static/app/shared/dom.js";

const section = document.querySelector('[data-testid="drafts"]');
const list = section.querySelector('[data-role="draft-list"]');
const problem = section.querySelector('[data-role="drafts-problem"]');

const STEP_TEXT = { exploration: "getting started", review: "ready for review" };

function when(value) {
  const parsed = new Date(value);
  return Number.isNaN(parsed.getTime()) ? String(value) : parsed.toLocaleString();
}

function item(draft) {
  const step = STEP_TEXT[draft.step] ?? draft.step.replaceAll("_", " ");
  return el("li", { class: "stream-item", dataset: { creationId: draft.id } },
    el("h3", {}, el("a", { href: `/streams/new/${encodeURIComponent(draft.id)}` },
      draft.stream_name || "Untitled stream")),
    el("p", { class: "meta" },
      el("span", { dataset: { field: "step" } }, `Step: ${step}`),
      el("span", { class: "muted" }, `· changed ${when(draft.updated_at)}`)));
}

async function show() {
  let drafts;
  try {
    drafts = (await api("/api/v1/streams/creation")).creations;
  } catch (error) {
    section.hidden = false;
    renderProblem(problem, error, "Your drafts could not be listed.");
    return;
  }
  list.replaceChildren(...drafts.map(item));
  section.hidden = drafts.length === 0;
}

show();
