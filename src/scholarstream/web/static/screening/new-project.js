// The Screening page's "New project" form: the project's settings (criteria one per line)
// and where its records come from (a link may have filled it in: web/_screening_pages.py,
// prefill); POST /api/v1/screening/projects, then the project page.

import { api } from "/static/app/shared/api.js";
import { renderProblem, renderStatus } from "/static/app/shared/dom.js";
import { lines } from "/static/app/screening/lines.js";

const form = document.querySelector('[data-role="new-project"]');
const problem = form.querySelector('[data-role="create-problem"]');

function showSource() {
  const chosen = form.elements.source.value;
  for (const part of form.querySelectorAll(".source-fields")) {
    part.hidden = part.dataset.source !== chosen;
  }
}

/** A year field as the API takes it: a whole number, empty as null, and anything else as
 *  typed, so that the API refuses it in words (it is never dropped silently). */
function year(name) {
  const value = form.elements[name].value.trim();
  if (!value) return null;
  return /^\d+$/.test(value) ? Number(value) : value;
}

function source() {
  const kind = form.elements.source.value;
  if (kind === "search_run") return { kind, run_id: form.elements.run_id?.value };
  if (kind === "collection") return { kind: "library", collection_id: form.elements.collection_id?.value };
  if (kind === "stream_report") {
    const [streamId, reportId] = (form.elements.report?.value || "/").split("/");
    return { kind, stream_id: streamId, report_id: reportId };
  }
  return {
    kind: "library",
    query: form.elements.library_query.value.trim(),
    year_from: year("year_from"),
    year_to: year("year_to"),
    publication_type: form.elements.publication_type.value.trim() || null,
    tag: form.elements.tag.value.trim() || null,
  };
}

form.addEventListener("change", (event) => {
  if (event.target.name === "source") showSource();
});

form.addEventListener("submit", async (event) => {
  event.preventDefault();
  const button = form.querySelector('button[type="submit"]');
  button.disabled = true;
  renderStatus(problem, "Creating the project…", "loading");
  try {
    const project = await api("/api/v1/screening/projects", {
      method: "POST",
      body: JSON.stringify({
        name: form.elements.name.value,
        question: form.elements.question.value,
        keywords: lines(form.elements.keywords.value),
        inclusion_criteria: lines(form.elements.inclusion_criteria.value),
        exclusion_criteria: lines(form.elements.exclusion_criteria.value),
        source: source(),
      }),
    });
    window.location.assign(`/screening/${encodeURIComponent(project.id)}`);
  } catch (error) {
    renderProblem(problem, error, "The project was not created.");
    button.disabled = false;
  }
});

showSource();
