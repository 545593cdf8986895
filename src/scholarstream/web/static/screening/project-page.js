// A screening project's page: your progress and the stopping aid, the criteria (the owner
// edits them), reviewers, the conflicts to settle, the full-text stage, the PRISMA 2020
// diagram with the numbers the project cannot record, and the exports.

import { api, errorOf } from "/static/app/shared/api.js";
import { el, renderProblem, renderStatus } from "/static/app/shared/dom.js";
import { renderProgressChart } from "/static/app/screening/chart.js";
import { lines } from "/static/app/screening/lines.js";

const root = document.querySelector('[data-page="screening-project"]');
const projectId = root.dataset.projectId;
const project = JSON.parse(root.querySelector('[data-role="project"]').textContent);
const owner = root.dataset.roleName === "owner";
const base = `/api/v1/screening/projects/${encodeURIComponent(projectId)}`;
const part = (role) => root.querySelector(`[data-role="${role}"]`);

const WORDS = { include: "Include", exclude: "Exclude", maybe: "Maybe", not_retrieved: "Not retrieved" };
const names = Object.fromEntries(project.reviewers.map((r) => [r.id, r.display_name || r.username]));

async function loadProgress() {
  const progress = await api(`${base}/progress`);
  renderProgressChart(part("chart"), progress);
  const left = progress.relevant_left;
  part("stopping").replaceChildren(
    el("dt", {}, "Screened"), el("dd", {}, `${progress.screened} of ${progress.total}`),
    el("dt", {}, "Included"), el("dd", {}, String(progress.included)),
    el("dt", {}, "Excluded"), el("dd", {}, String(progress.excluded)),
    el("dt", {}, "Maybe"), el("dd", {}, String(progress.maybe)),
    el("dt", {}, "Screened since your last include"), el("dd", {}, String(progress.since_last_include)),
    el("dt", {}, "Relevant records left (estimate)"),
    el("dd", {}, left.value === null ? "not yet known" : `about ${left.value}`),
  );
  part("estimate").textContent = left.explanation;
}

let diagramShown = null; // the object URL of the diagram fetched after the last change

/** The diagram afresh after a change: fetched past the browser's cache and shown from that
 *  copy (its address set again on the image could show the one the page already holds). */
async function refreshPrisma() {
  const image = part("prisma-image");
  if (!image) return;
  const problem = part("prisma-problem");
  try {
    const response = await fetch(`${base}/prisma/diagram?format=svg`, { credentials: "same-origin", cache: "no-store" });
    if (!response.ok) throw await errorOf(response);
    const shown = URL.createObjectURL(await response.blob());
    image.src = shown;
    if (diagramShown) URL.revokeObjectURL(diagramShown);
    diagramShown = shown;
    problem.replaceChildren();
  } catch (error) {
    renderProblem(problem, error, "The diagram could not be updated:");
  }
}

function reasonSelect(name, freeText = false) {
  const select = el("select", { name, "aria-label": "Reason" },
    el("option", { value: "" }, freeText ? "Reason…" : "Pick the reason…"),
    ...project.exclusion_criteria.map((c) => el("option", { value: c }, c)));
  return select;
}

// --- conflicts ---------------------------------------------------------------------------

function renderConflicts(list) {
  const box = part("conflicts");
  if (!list.conflicts.length) {
    renderStatus(box, `No conflicts to settle (${list.resolved} settled).`, "done");
    return;
  }
  box.replaceChildren(el("ul", { class: "conflict-list" }, list.conflicts.map((c) => {
    const reason = reasonSelect("reason");
    const row = el("li", { dataset: { recordId: c.record_id } },
      el("p", {}, el("strong", {}, c.title), c.year ? ` (${c.year})` : ""),
      el("ul", { class: "plain" }, c.decisions.map((d) =>
        el("li", {}, `${c.reviewers[d.reviewer_id] || "A reviewer"}: ${WORDS[d.decision] || d.decision}${d.reason ? ` (${d.reason})` : ""}`))),
      el("div", { class: "form inline" },
        el("button", { type: "button", dataset: { settle: "include" } }, "Include"),
        reason,
        el("button", { type: "button", class: "secondary", dataset: { settle: "exclude" } }, "Exclude")),
      el("div", { "data-role": "settle-problem" }));
    return row;
  })));
}

async function loadConflicts() {
  renderStatus(part("conflicts"), "Loading…", "loading");
  try {
    renderConflicts(await api(`${base}/conflicts`));
  } catch (error) {
    renderProblem(part("conflicts"), error);
  }
}

// --- full text ---------------------------------------------------------------------------

function renderFulltext(list) {
  const box = part("fulltext");
  if (!list.items.length) {
    renderStatus(box, "No record is included on title and abstract yet.", "empty");
    return;
  }
  box.replaceChildren(el("table", { class: "fulltext-table" },
    el("thead", {}, el("tr", {}, el("th", {}, "Record"), el("th", {}, "Full-text decision"), el("th", {}, ""))),
    el("tbody", {}, list.items.map((item) => {
      const decision = el("select", { name: "decision", "aria-label": `Full-text decision on ${item.title}` },
        el("option", { value: "" }, "Not decided"),
        ...["include", "exclude", "not_retrieved"].map((d) =>
          el("option", { value: d, selected: item.decision === d }, WORDS[d])));
      const reason = el("input", { name: "reason", value: item.reason || "", list: "ft-reasons", placeholder: "Reason (to exclude)", "aria-label": "Reason" });
      return el("tr", { dataset: { recordId: item.record_id } },
        el("td", {}, item.title, item.year ? ` (${item.year})` : ""),
        el("td", { class: "ft-fields" }, decision, reason),
        el("td", {}, el("button", { type: "button", class: "secondary", dataset: { fulltext: "save" } }, "Save"),
          el("span", { class: "muted small", "data-role": "ft-status" })));
    }))),
  el("datalist", { id: "ft-reasons" }, project.exclusion_criteria.map((c) => el("option", { value: c }))));
}

async function loadFulltext() {
  try {
    renderFulltext(await api(`${base}/fulltext`));
  } catch (error) {
    renderProblem(part("fulltext"), error);
  }
}

// --- PRISMA entries ----------------------------------------------------------------------

const NUMBERS = ["duplicates_removed", "automation_excluded", "other_removed", "reports_not_retrieved", "studies_included", "reports_included"];

function pairs(text, key, value) {
  return lines(text).map((line) => {
    const at = line.lastIndexOf(":");
    const count = Number(line.slice(at + 1).trim());
    if (at < 1 || !Number.isInteger(count) || count < 0) throw new Error(`"${line}" is not "name: number".`);
    return { [key]: line.slice(0, at).trim(), [value]: count };
  });
}

async function loadEntries() {
  const form = part("entries");
  const entries = await api(`${base}/prisma/entries`);
  for (const name of NUMBERS) form.elements[name].value = entries[name] ?? "";
  form.elements.other_sources.value = entries.other_sources.map((s) => `${s.source}: ${s.records}`).join("\n");
  form.elements.fulltext_excluded.value = entries.fulltext_excluded.map((r) => `${r.reason}: ${r.records}`).join("\n");
}

async function saveEntries(form) {
  const problem = part("entries-problem");
  try {
    const body = {
      other_sources: pairs(form.elements.other_sources.value, "source", "records"),
      fulltext_excluded: pairs(form.elements.fulltext_excluded.value, "reason", "records"),
    };
    for (const name of NUMBERS) {
      const text = form.elements[name].value.trim();
      if (text && !/^\d+$/.test(text)) throw new Error(`Give a whole number (or nothing) for ${form.elements[name].closest("label").firstChild.textContent.trim()}.`);
      body[name] = text ? Number(text) : null;
    }
    await api(`${base}/prisma/entries`, { method: "PUT", body: JSON.stringify(body) });
    renderStatus(problem, "Saved.", "done");
    refreshPrisma();
  } catch (error) {
    renderProblem(problem, error, "The numbers were not saved.");
  }
}

// --- events ------------------------------------------------------------------------------

root.addEventListener("click", async (event) => {
  const target = event.target;
  if (target.closest('[data-action="load-conflicts"]')) {
    loadConflicts();
    return;
  }
  const settle = target.closest("button[data-settle]");
  if (settle) {
    const row = settle.closest("li[data-record-id]");
    const decision = settle.dataset.settle;
    const reason = row.querySelector('select[name="reason"]').value || null;
    try {
      renderConflicts(await api(`${base}/conflicts/${encodeURIComponent(row.dataset.recordId)}`, {
        method: "PUT", body: JSON.stringify({ decision, reason: decision === "exclude" ? reason : null }),
      }));
      refreshPrisma();
      loadFulltext();
    } catch (error) {
      renderProblem(row.querySelector('[data-role="settle-problem"]'), error);
    }
    return;
  }
  const save = target.closest('button[data-fulltext="save"]');
  if (save) {
    const row = save.closest("tr[data-record-id]");
    const decision = row.querySelector('select[name="decision"]').value;
    const status = row.querySelector('[data-role="ft-status"]');
    if (!decision) {
      status.textContent = " Pick a decision first.";
      return;
    }
    try {
      await api(`${base}/fulltext/${encodeURIComponent(row.dataset.recordId)}`, {
        method: "PUT",
        body: JSON.stringify({ decision, reason: decision === "exclude" ? row.querySelector('input[name="reason"]').value : null }),
      });
      status.textContent = " Saved.";
      refreshPrisma();
    } catch (error) {
      status.textContent = ` ${error.message}`;
    }
    return;
  }
  const remove = target.closest("button[data-remove-reviewer]");
  if (remove) {
    try {
      await api(`${base}/reviewers/${encodeURIComponent(remove.dataset.removeReviewer)}`, { method: "DELETE" });
      window.location.reload();
    } catch (error) {
      renderProblem(part("reviewer-problem"), error);
    }
    return;
  }
  if (target.closest('[data-action="delete-project"]')) {
    if (!window.confirm(`Delete "${project.name}" and every decision in it?`)) return;
    try {
      await api(base, { method: "DELETE" });
      window.location.assign("/screening");
    } catch (error) {
      renderProblem(part("delete-problem"), error);
    }
  }
});

root.addEventListener("submit", async (event) => {
  const form = event.target;
  event.preventDefault();
  if (form.dataset.role === "entries") {
    await saveEntries(form);
  } else if (form.dataset.role === "add-reviewer") {
    try {
      await api(`${base}/reviewers`, { method: "POST", body: JSON.stringify({ username: form.elements.username.value.trim() }) });
      window.location.reload();
    } catch (error) {
      renderProblem(part("reviewer-problem"), error, "The reviewer was not added.");
    }
  } else if (form.dataset.role === "edit-project") {
    try {
      await api(base, {
        method: "PATCH",
        body: JSON.stringify({
          name: form.elements.name.value,
          question: form.elements.question.value,
          keywords: lines(form.elements.keywords.value),
          inclusion_criteria: lines(form.elements.inclusion_criteria.value),
          exclusion_criteria: lines(form.elements.exclusion_criteria.value),
        }),
      });
      window.location.reload();
    } catch (error) {
      renderProblem(part("edit-problem"), error, "Nothing was changed.");
    }
  }
});

loadProgress().catch((error) => renderProblem(part("stopping"), error));
if (owner) {
  loadFulltext();
  loadEntries().catch((error) => renderProblem(part("entries-problem"), error));
}
