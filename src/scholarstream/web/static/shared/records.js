// Rendering of literature records (papers and trials): identifiers linked to their
// registries, authors, venue, phases, and the full record view of the Library and Trials
// pages. Used by those pages, the Search page, AI columns, chat payload cards and stream
// reports. Record text comes from outside (files, remote APIs): it only ever reaches the
// page as text nodes, never as HTML.

import { codeLabel, el, externalLink, safeUrl } from "/static/app/shared/dom.js";

const ID_LINKS = {
  doi: ["DOI", (v) => `https://doi.org/${encodeURI(v)}`],
  pmid: ["PMID", (v) => `https://pubmed.ncbi.nlm.nih.gov/${encodeURIComponent(v)}/`],
  pmcid: ["PMCID", (v) => `https://pmc.ncbi.nlm.nih.gov/articles/${encodeURIComponent(v)}/`],
  nct_id: ["NCT", (v) => `https://clinicaltrials.gov/study/${encodeURIComponent(v)}`],
  arxiv_id: ["arXiv", (v) => `https://arxiv.org/abs/${encodeURI(v)}`],
  openalex_id: ["OpenAlex", (v) => `https://openalex.org/${encodeURIComponent(v)}`],
  s2_id: ["Semantic Scholar", (v) => `https://www.semanticscholar.org/paper/${encodeURIComponent(v)}`],
};

/** The record's identifiers, each linked to its registry. */
export function identifierList(ids = {}) {
  const items = Object.entries(ID_LINKS)
    .filter(([key]) => ids[key])
    .map(([key, [label, url]]) =>
      el("li", { dataset: { id: key } }, `${label} `, externalLink(url(ids[key]), ids[key])),
    );
  return items.length ? el("ul", { class: "ids" }, items) : null;
}

export function authorNames(authors = [], max = Infinity) {
  const names = authors.map((a) => a.name);
  if (names.length > max) return `${names.slice(0, max).join("; ")}; et al.`;
  return names.join("; ");
}

/** "Animals 15(1): 3" from a paper's venue, volume, issue and pages. */
export function venueLine(paper) {
  let line = paper.venue || "";
  if (paper.volume) line += `${line ? " " : ""}${paper.volume}`;
  if (paper.issue) line += `(${paper.issue})`;
  if (paper.pages) line += `: ${paper.pages}`;
  return line;
}

const PHASES = {
  EARLY_PHASE1: "Early phase 1",
  PHASE1: "Phase 1",
  PHASE2: "Phase 2",
  PHASE3: "Phase 3",
  PHASE4: "Phase 4",
  NA: "Not applicable",
};

export function phaseLabels(phases = []) {
  return phases.map((p) => PHASES[p] ?? codeLabel(p)).join(", ");
}

function formatDate(value) {
  return value || "";
}

/** A <dl> of the label/value pairs that have a value. */
function facts(pairs) {
  const children = [];
  for (const [label, value, field] of pairs) {
    if (value === null || value === undefined || value === "" ||
        (Array.isArray(value) && value.length === 0)) continue;
    children.push(el("dt", {}, label), el("dd", { dataset: { field } }, value));
  }
  return children.length ? el("dl", { class: "facts" }, children) : null;
}

function section(title, field, content) {
  if (!content || (Array.isArray(content) && content.length === 0)) return null;
  return el("section", { dataset: { section: field } }, el("h3", {}, title), content);
}

function tagList(values, field) {
  if (!values || values.length === 0) return null;
  return el("ul", { class: "tags", dataset: { field } }, values.map((v) => el("li", {}, v)));
}

function provenance(record, extra = []) {
  const sources = (record.provenance || []).map((p) =>
    el("li", {}, p.source_id ? `Source: ${p.source}, id ${p.source_id}` : `Source: ${p.source}`),
  );
  const items = [...sources, ...extra.map((text) => el("li", {}, text))];
  return items.length ? el("ul", { class: "plain", dataset: { field: "provenance" } }, items) : null;
}

function links(record) {
  const items = (record.links || [])
    .filter((link) => safeUrl(link.url))
    .map((link) => el("li", {}, externalLink(link.url, link.url), ` (${link.kind.replace("_", " ")})`));
  return items.length ? el("ul", { class: "plain" }, items) : null;
}

function paperDetail(paper, extra) {
  const retraction = paper.retraction
    ? el("p", { class: "warning", role: "note", dataset: { field: "retraction" } },
        `Retracted: ${paper.retraction.notice}`)
    : null;
  return [
    retraction,
    facts([
      ["Authors", authorNames(paper.authors), "authors"],
      ["Venue", venueLine(paper), "venue"],
      ["Year", paper.year, "year"],
      ["Published", formatDate(paper.published), "published"],
      ["Publisher", paper.publisher, "publisher"],
      ["Publication types", paper.publication_types.join(", "), "publication_types"],
      ["Language", paper.language, "language"],
      ["Citations", paper.citation_count, "citation_count"],
      ["Identifiers", identifierList(paper.ids), "ids"],
    ]),
    section("Abstract", "abstract", paper.abstract ? el("p", { class: "abstract" }, paper.abstract) : null),
    section("Keywords", "keywords", tagList(paper.keywords, "keywords")),
    section("MeSH terms", "mesh_terms", tagList(paper.mesh_terms, "mesh_terms")),
    section("Links", "links", links(paper)),
    section("Provenance", "provenance", provenance(paper, extra)),
  ];
}

function outcomeList(outcomes = []) {
  if (outcomes.length === 0) return null;
  return el("ol", { dataset: { field: "primary_outcomes" } }, outcomes.map((o) =>
    el("li", {},
      el("strong", {}, o.measure),
      o.time_frame ? el("span", { class: "muted" }, ` — time frame: ${o.time_frame}`) : null,
      o.description ? el("p", {}, o.description) : null)));
}

function interventionList(interventions = []) {
  if (interventions.length === 0) return null;
  return el("ul", { class: "plain", dataset: { field: "interventions" } }, interventions.map((i) =>
    el("li", {}, i.type ? `${codeLabel(i.type)}: ${i.name}` : i.name)));
}

function trialDetail(trial, extra) {
  const nct = trial.ids?.nct_id;
  return [
    trial.official_title && trial.official_title !== trial.title
      ? el("p", { class: "official-title", dataset: { field: "official_title" } }, trial.official_title)
      : null,
    facts([
      ["Status", codeLabel(trial.status), "status"],
      ["Phases", phaseLabels(trial.phases), "phases"],
      ["Study type", codeLabel(trial.study_type), "study_type"],
      ["Conditions", trial.conditions.join("; "), "conditions"],
      ["Sponsor", trial.sponsor, "sponsor"],
      ["Collaborators", trial.collaborators.join("; "), "collaborators"],
      ["Enrollment", trial.enrollment, "enrollment"],
      ["Start", formatDate(trial.start_date), "start_date"],
      ["Primary completion", formatDate(trial.primary_completion_date), "primary_completion_date"],
      ["Completion", formatDate(trial.completion_date), "completion_date"],
      ["First posted", formatDate(trial.first_posted), "first_posted"],
      ["Last updated", formatDate(trial.last_updated), "last_updated"],
      ["Results posted", trial.has_results ? "yes" : "no", "has_results"],
      ["Identifiers", identifierList(trial.ids), "ids"],
    ]),
    nct
      ? el("p", {}, externalLink(`https://clinicaltrials.gov/study/${encodeURIComponent(nct)}`,
          `${nct} on ClinicalTrials.gov`))
      : null,
    section("Interventions", "interventions", interventionList(trial.interventions)),
    section("Primary outcomes", "primary_outcomes", outcomeList(trial.primary_outcomes)),
    section("Summary", "summary", trial.summary ? el("p", { class: "abstract" }, trial.summary) : null),
    section("Keywords", "keywords", tagList(trial.keywords, "keywords")),
    section("MeSH terms", "mesh_terms", tagList(trial.mesh_terms, "mesh_terms")),
    section("Provenance", "provenance", provenance(trial, extra)),
  ];
}

/**
 * Fills ``container`` with the record's full view. ``extra`` lists more provenance lines
 * (e.g. the file it was imported from). The title gets id ``detail-title`` so the
 * surrounding region can be labelled by it.
 */
export function renderRecordDetail(container, record, extra = []) {
  const title = el("h2", { id: "detail-title", tabindex: "-1", dataset: { field: "title" } }, record.title);
  const body = record.kind === "trial" ? trialDetail(record, extra) : paperDetail(record, extra);
  container.replaceChildren(title, ...body.filter(Boolean));
  return title;
}
