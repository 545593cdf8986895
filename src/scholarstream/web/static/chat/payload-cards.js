// The client side of the payload registry (seed 002, "Rich Payloads"): one renderer per
// payload type, registered by name, and a generic JSON view for types nobody registered.
// Payload data comes from tools (remote sources) and from the model: it only ever reaches
// the page as text nodes, and links only as http(s).
//
// A renderer is render(data, card) -> Node | Node[]; ``card`` offers helpers:
//   card.acceptBar(): the Accept/Dismiss buttons of a suggestion. Accept calls the page's
//   handler (page-context.js acceptPayload) and shows its confirmation or error; it is
//   disabled, with the reason next to it, when the page registered no handler for the type.

import { acceptPayload, canAccept, hasClientAction, runClientAction } from "/static/app/chat/page-context.js";
import { codeLabel, el, externalLink, safeUrl } from "/static/app/shared/dom.js";
import { identifierList, phaseLabels } from "/static/app/shared/records.js";

const renderers = new Map();
const TITLES = new Map();

/** Registers how a payload type renders; a page module may add or replace renderers. */
export function registerPayloadRenderer(type, render, { title = null } = {}) {
  renderers.set(type, render);
  if (title) TITLES.set(type, title);
}

export function hasPayloadRenderer(type) {
  return renderers.has(type);
}

function titleOf(type) {
  return TITLES.get(type) ?? codeLabel(type);
}

/** The card of one payload ({type, data}). Never throws: a broken renderer falls back to JSON. */
export function renderPayload(payload) {
  const type = String(payload?.type ?? "unknown");
  const data = payload?.data ?? null;
  const heading = el("h3", { class: "chat-card-title" }, titleOf(type));
  const card = el("section", { class: "chat-card", dataset: { payloadType: type, testid: "payload-card" } },
    heading);
  const helpers = { acceptBar: (t, d) => acceptBar(t ?? type, d ?? data) };
  let body;
  try {
    const render = renderers.get(type) ?? renderJson;
    body = render(data, helpers);
  } catch (error) {
    body = [el("p", { class: "muted" }, `This ${titleOf(type).toLowerCase()} could not be shown as a card (${error.message}); its data:`),
      renderJson(data)];
  }
  card.append(...[body].flat().filter(Boolean));
  return card;
}

// --- Accept / Dismiss -------------------------------------------------------------------

const WHERE = {
  query_suggestion: (data) => data?.target === "library" ? "the Library page" : "the Search page",
  trial_search_suggestion: () => "the Trials page",
  ai_column_suggestion: () => "a page with a results table",
  filter_suggestion: () => "a page with results to filter",
};

function cannotAcceptText(type, data) {
  const where = WHERE[type]?.(data);
  return where
    ? `This page cannot apply it: open ${where} and accept it there.`
    : "This page cannot apply it.";
}

function acceptBar(type, data) {
  const accept = el("button", { type: "button", class: "chat-accept", dataset: { role: "accept" } }, "Accept");
  const dismiss = el("button", { type: "button", class: "secondary", dataset: { role: "dismiss" } }, "Dismiss");
  const note = el("p", { class: "chat-card-note muted", dataset: { role: "accept-note" } });
  const outcome = el("div", { class: "chat-card-outcome", role: "status", dataset: { role: "accept-outcome" } });
  const bar = el("div", { class: "chat-card-actions" }, accept, dismiss);
  const refresh = () => {
    if (bar.dataset.decided) return;
    const able = canAccept(type);
    accept.disabled = !able;
    note.textContent = able ? "" : cannotAcceptText(type, data);
    note.hidden = able;
    if (!able) accept.setAttribute("aria-describedby", noteId(note));
    else accept.removeAttribute("aria-describedby");
  };
  bar.refreshAccept = refresh;
  accept.addEventListener("click", async () => {
    accept.disabled = true;
    dismiss.disabled = true;
    outcome.replaceChildren(el("p", { class: "status loading" }, "Applying…"));
    try {
      const confirmation = await acceptPayload(type, data);
      bar.dataset.decided = "accepted";
      outcome.replaceChildren(el("p", { class: "status done" },
        typeof confirmation === "string" && confirmation ? confirmation : "Applied."));
      bar.closest(".chat-card")?.classList.add("accepted");
    } catch (error) {
      outcome.replaceChildren(el("p", { class: "problem", role: "alert" },
        `It could not be applied: ${error?.message ?? error}`));
      accept.disabled = false;
      dismiss.disabled = false;
    }
  });
  dismiss.addEventListener("click", () => {
    bar.dataset.decided = "dismissed";
    accept.disabled = true;
    dismiss.disabled = true;
    bar.closest(".chat-card")?.classList.add("dismissed");
    outcome.replaceChildren(el("p", { class: "status info" }, "Dismissed."));
  });
  refresh();
  return el("div", { class: "chat-accept-bar" }, bar, note, outcome);
}

let noteCounter = 0;
function noteId(node) {
  if (!node.id) node.id = `chat-accept-note-${(noteCounter += 1)}`;
  return node.id;
}

/** Re-checks every undecided Accept button under ``root`` (pages may register late). */
export function refreshAcceptButtons(root) {
  root.querySelectorAll(".chat-card-actions").forEach((bar) => bar.refreshAccept?.());
}

// --- shared pieces --------------------------------------------------------------------

const SOURCE_LABELS = {
  pubmed: "PubMed", openalex: "OpenAlex", semantic_scholar: "Semantic Scholar", arxiv: "arXiv",
  crossref: "Crossref", clinicaltrials: "ClinicalTrials.gov", google_scholar: "Google Scholar",
  library: "Library",
};

export function sourceName(source) {
  return SOURCE_LABELS[source] ?? String(source ?? "");
}

function list(value) {
  return Array.isArray(value) ? value : [];
}

function text(value) {
  if (value === null || value === undefined) return "";
  if (Array.isArray(value)) return value.map(text).filter(Boolean).join(", ");
  if (typeof value === "object") return value.name ?? value.label ?? JSON.stringify(value);
  return String(value);
}

function authorsOf(authors, max = 3) {
  const names = list(authors).map((a) => (typeof a === "string" ? a : a?.name)).filter(Boolean);
  if (names.length > max) return `${names.slice(0, max).join(", ")}, et al.`;
  return names.join(", ");
}

function plural(n, one, many = `${one}s`) {
  return `${n} ${n === 1 ? one : many}`;
}

/** Where a title links: a library record opens in the Library, else the article's own page. */
function articleHref(article) {
  if (article.library_id) return `/library?record=${encodeURIComponent(article.library_id)}`;
  const ids = article.ids ?? {};
  const pmid = article.pmid ?? ids.pmid;
  const doi = article.doi ?? ids.doi;
  const candidates = [
    article.url,
    pmid ? `https://pubmed.ncbi.nlm.nih.gov/${encodeURIComponent(pmid)}/` : null,
    doi ? `https://doi.org/${encodeURI(doi)}` : null,
    ...list(article.links).map((link) => link?.url),
  ];
  return candidates.find((url) => url && safeUrl(url)) ?? null;
}

function titleLink(article, title) {
  const href = articleHref(article);
  if (!href) return title;
  if (href.startsWith("/")) return el("a", { href }, title);
  return externalLink(href, title);
}

function articleMeta(article) {
  const ids = article.ids ?? {};
  const parts = [authorsOf(article.authors), article.journal ?? article.venue, article.year]
    .map(text).filter(Boolean);
  const pmid = article.pmid ?? ids.pmid;
  const doi = article.doi ?? ids.doi;
  if (pmid) parts.push(`PMID ${pmid}`);
  else if (doi) parts.push(`DOI ${doi}`);
  return parts.join(" · ");
}

function articleItem(article) {
  const title = text(article.title) || "(untitled)";
  const meta = articleMeta(article);
  const sources = list(article.sources);
  return el("li", { class: "chat-article" },
    el("p", { class: "chat-article-title" }, titleLink(article, title)),
    meta ? el("p", { class: "meta muted" }, meta) : null,
    article.abstract_snippet ? el("p", { class: "chat-snippet" }, text(article.abstract_snippet)) : null,
    sources.length ? el("p", { class: "meta" },
      sources.map((source) => el("span", { class: "badge source" }, sourceName(source)))) : null);
}

function failedSourceList(outcomes) {
  const failed = list(outcomes).filter((outcome) => outcome && outcome.ok === false);
  if (failed.length === 0) return null;
  return el("div", { class: "problem", role: "note", dataset: { role: "failed-sources" } },
    el("p", { class: "problem-message" }, failed.length === 1
      ? "1 source failed, so these results have none of its articles:"
      : `${failed.length} sources failed, so these results have none of their articles:`),
    el("ul", {}, failed.map((outcome) => el("li", { dataset: { source: text(outcome.source) } },
      el("strong", {}, sourceName(outcome.source)),
      `: ${text(outcome.error) || "failed"}`,
      outcome.hint ? el("span", { class: "problem-hint" }, ` ${outcome.hint}`) : null))));
}

function countLine(shown, total, query, noun) {
  let line = plural(shown, noun);
  if (typeof total === "number" && total > shown) line += ` of ${total.toLocaleString("en")}`;
  if (query) line += ` for “${text(query)}”`;
  return el("p", { class: "chat-card-count muted" }, line);
}

function articleList(articles, empty) {
  return articles.length
    ? el("ol", { class: "chat-articles" }, articles.map(articleItem))
    : el("p", { class: "status empty" }, empty);
}

// --- renderers ------------------------------------------------------------------------

function pubmedResults(data) {
  const articles = list(data?.articles);
  return [countLine(articles.length, data?.total, data?.query, "article"), articleList(articles, "PubMed found nothing.")];
}

/** The failed sources in the server's sentences (grouped by what happened, with what to
 *  do); a payload without them lists each source's own message. */
function failureSentences(sentences, outcomes) {
  if (!list(sentences).length) return failedSourceList(outcomes);
  return el("div", { class: "problem", role: "note", dataset: { role: "failed-sources" } },
    list(sentences).map((sentence) => el("p", { class: "chat-failure" }, text(sentence))));
}

function literatureResults(data) {
  const articles = list(data?.articles);
  const outcomes = list(data?.sources);
  const searched = outcomes.filter((o) => o.ok).map((o) => sourceName(o.source));
  const repeated = Number(data?.already_listed) || 0;
  return [
    articles.length || !repeated ? countLine(articles.length, null, data?.query, repeated ? "more article" : "article") : null,
    searched.length ? el("p", { class: "meta muted" }, `From ${searched.join(", ")}` +
      (data?.total_found > articles.length + repeated ? ` (${data.total_found} records before merging duplicates)` : "")) : null,
    repeated ? el("p", { class: "meta muted", dataset: { role: "already-listed" } },
      `${plural(repeated, "article")} found here ${repeated === 1 ? "is" : "are"} already listed above.`) : null,
    failureSentences(data?.failures, outcomes),
    articleList(articles, repeated ? "Nothing new: everything found is listed above." : "Nothing found."),
  ];
}

function trialQueryLine(query) {
  if (!query || typeof query !== "object") return text(query);
  const parts = [];
  for (const [key, label] of [["condition", "condition"], ["intervention", "intervention"], ["terms", "terms"], ["sponsor", "sponsor"]]) {
    if (query[key]) parts.push(`${label}: ${query[key]}`);
  }
  if (list(query.phases).length) parts.push(phaseLabels(query.phases));
  if (list(query.statuses).length) parts.push(query.statuses.map(codeLabel).join(", "));
  return parts.join("; ");
}

function trialItem(trial) {
  const nct = trial.nct_id ?? null;
  const title = text(trial.title) || "(untitled)";
  const meta = [text(trial.conditions), text(trial.interventions), text(trial.sponsor)].filter(Boolean).join(" · ");
  return el("li", { class: "chat-article" },
    el("p", { class: "chat-article-title" },
      nct ? el("a", { class: "nct", href: `/trials?study=${encodeURIComponent(nct)}` }, nct) : null,
      " ", title),
    el("p", { class: "meta" },
      trial.status ? el("span", { class: `badge status-${String(trial.status).toLowerCase()}` }, codeLabel(String(trial.status))) : null,
      list(trial.phases).length ? el("span", { class: "phase" }, phaseLabels(trial.phases)) : null,
      trial.start_date ? el("span", { class: "muted" }, ` · started ${trial.start_date}`) : null),
    meta ? el("p", { class: "meta muted" }, meta) : null);
}

function trialResults(data) {
  const trials = list(data?.trials);
  return [
    countLine(trials.length, data?.total, trialQueryLine(data?.query), "trial"),
    trials.length
      ? el("ol", { class: "chat-articles" }, trials.map(trialItem))
      : el("p", { class: "status empty" }, "No trials found."),
  ];
}

function facts(pairs) {
  const children = [];
  for (const [label, value, field] of pairs) {
    if (value === null || value === undefined || value === "" || (Array.isArray(value) && value.length === 0)) continue;
    children.push(el("dt", {}, label), el("dd", { dataset: { field } }, value instanceof Node ? value : text(value)));
  }
  return children.length ? el("dl", { class: "chat-facts" }, children) : null;
}

function recordView(record, { libraryId = null } = {}) {
  if (record?.kind === "trial") {
    return [
      el("p", { class: "chat-article-title" },
        el("a", { class: "nct", href: `/trials?study=${encodeURIComponent(record.nct_id)}` }, record.nct_id), " ", text(record.title)),
      facts([
        ["Status", codeLabel(record.status ?? ""), "status"],
        ["Phases", phaseLabels(list(record.phases)), "phases"],
        ["Conditions", record.conditions, "conditions"],
        ["Interventions", record.interventions, "interventions"],
        ["Sponsor", record.sponsor, "sponsor"],
        ["Enrollment", record.enrollment, "enrollment"],
        ["Start", record.start_date, "start_date"],
        ["Primary outcomes", list(record.primary_outcomes).map((o) => o.measure), "primary_outcomes"],
      ]),
      record.summary ? el("p", { class: "abstract chat-abstract" }, text(record.summary)) : null,
    ];
  }
  const article = { ...(record ?? {}), library_id: libraryId ?? record?.library_id ?? null };
  return [
    el("p", { class: "chat-article-title" }, titleLink(article, text(article.title) || "(untitled)")),
    article.retraction ? el("p", { class: "warning", role: "note" }, `Retracted: ${text(article.retraction)}`) : null,
    facts([
      ["Authors", authorsOf(article.authors, 8), "authors"],
      ["Journal", article.journal, "journal"],
      ["Year", article.year, "year"],
      ["Types", article.publication_types, "publication_types"],
      ["Identifiers", article.ids ? identifierList(article.ids) : null, "ids"],
    ]),
    article.abstract ? el("p", { class: "abstract chat-abstract" }, text(article.abstract)) : null,
  ];
}

function articleDetails(data) {
  return [
    recordView(data?.article ?? {}, { libraryId: data?.library_id }),
    data?.source ? el("p", { class: "meta muted" }, `From ${sourceName(data.source)}`) : null,
  ].flat();
}

function retrievedItems(data) {
  const items = list(data?.items);
  const missing = list(data?.not_found);
  return [
    el("p", { class: "chat-card-count muted" }, `${plural(items.length, "item")} retrieved`),
    items.length ? el("ol", { class: "chat-articles" }, items.map((item) => {
      const notes = Object.entries(item.annotations ?? {});
      const open = hasClientAction("open_item")
        ? el("button", { type: "button", class: "link", dataset: { role: "open-item" } }, "Open")
        : null;
      open?.addEventListener("click", () => {
        runClientAction("open_item", { id: item.id, kind: item.kind }).catch((error) => {
          open.replaceWith(el("span", { class: "error" }, error.message));
        });
      });
      return el("li", { class: "chat-article", dataset: { itemId: text(item.id) } },
        recordView(item.record ?? {}).slice(0, 1),
        notes.length ? el("p", { class: "meta muted" }, notes.map(([k, v]) => `${codeLabel(k)}: ${text(v)}`).join(" · ")) : null,
        open);
    })) : null,
    missing.length ? el("p", { class: "muted" }, `Not found: ${missing.map((m) => `${m.id} (${m.reason})`).join("; ")}`) : null,
  ];
}

function analysisTable(rows, valueLabel) {
  return el("table", { class: "chat-table" },
    el("thead", {}, el("tr", {},
      el("th", { scope: "col" }, valueLabel),
      el("th", { scope: "col", class: "num" }, "Count"),
      el("th", { scope: "col", class: "num" }, "Percent"))),
    el("tbody", {}, rows.map((row) => {
      const percent = Number(row.percent);
      const shown = Number.isFinite(percent) ? `${percent.toFixed(1)}%` : "";
      const bar = el("span", { class: "chat-bar", "aria-hidden": "true" });
      bar.style.width = `${Math.max(0, Math.min(100, Number.isFinite(percent) ? percent : 0))}%`;
      return el("tr", {},
        el("td", {}, text(row.value) || "(none)"),
        el("td", { class: "num" }, text(row.count)),
        el("td", { class: "num chat-percent" }, shown, bar));
    })));
}

function analysisResult(data) {
  const field = data?.field ? codeLabel(data.field) : "Value";
  const scope = [
    `${plural(data?.total ?? 0, "item")} analysed`,
    data?.filter ? `where ${codeLabel(data.filter.field)} is ${text(data.filter.value)}` : null,
    data?.missing ? `${data.missing} without a value` : null,
  ].filter(Boolean).join("; ");
  const parts = [el("p", { class: "chat-card-lead" }, scope)];
  if (data?.operation === "count" && data.matched !== null && data.matched !== undefined) {
    parts.push(el("p", { class: "chat-big" }, `${data.matched} of ${data.total} match`));
  }
  if (list(data?.rows).length) parts.push(analysisTable(data.rows, field));
  for (const group of list(data?.groups)) {
    parts.push(el("h4", { class: "chat-group" },
      `${codeLabel(data.group_by ?? "group")}: ${group.group ?? "(none)"} (${plural(group.total, "item")})`));
    parts.push(analysisTable(list(group.rows), field));
  }
  if (data?.stats) {
    const s = data.stats;
    parts.push(facts([["Count", s.count, "count"], ["Min", s.min, "min"], ["Max", s.max, "max"],
      ["Mean", Number(s.mean).toFixed(2), "mean"], ["Median", s.median, "median"]]));
  }
  if (parts.length === 1) parts.push(el("p", { class: "status empty" }, "No values to count."));
  return parts;
}

// --- suggestions (Accept / Dismiss) ------------------------------------------------------

const TARGETS = { search: "Search page question", library: "Library search", pubmed: "PubMed (Search page)" };

function querySuggestion(data, card) {
  return [
    el("pre", { class: "chat-proposal", dataset: { field: "query" } }, text(data?.query)),
    facts([["For", TARGETS[data?.target] ?? text(data?.target), "target"]]),
    explanation(data),
    card.acceptBar(),
  ];
}

function aiColumnSuggestion(data, card) {
  return [
    el("p", { class: "chat-proposal-name", dataset: { field: "name" } }, text(data?.name)),
    facts([
      ["Criteria", data?.criteria, "criteria"],
      ["Answer", codeLabel(data?.output_type ?? ""), "output_type"],
      ["Categories", data?.categories, "categories"],
    ]),
    explanation(data),
    card.acceptBar(),
  ];
}

const FILTER_LABELS = {
  year_from: "From year", year_to: "To year", publication_type: "Publication type", theme: "Theme",
  study_type: "Study type", source: "Source", label: "Label", phase: "Phase", status: "Status",
};

function filterSuggestion(data, card) {
  const filters = Object.entries(data?.filters ?? {});
  return [
    facts(filters.map(([key, value]) => [
      FILTER_LABELS[key] ?? codeLabel(key),
      value === null ? "(clear)" : key === "phase" ? phaseLabels([value]) : key === "status" ? codeLabel(value) : value,
      key,
    ])),
    explanation(data),
    card.acceptBar(),
  ];
}

function trialSearchSuggestion(data, card) {
  return [
    facts([
      ["Condition", data?.condition, "condition"],
      ["Intervention", data?.intervention, "intervention"],
      ["Other terms", data?.terms, "terms"],
      ["Sponsor", data?.sponsor, "sponsor"],
      ["Phases", phaseLabels(list(data?.phases)), "phases"],
      ["Statuses", list(data?.statuses).map(codeLabel).join(", "), "statuses"],
      ["Started from", data?.start_from, "start_from"],
      ["Started until", data?.start_to, "start_to"],
    ]),
    explanation(data),
    card.acceptBar(),
  ];
}

function explanation(data) {
  return data?.explanation
    ? el("p", { class: "chat-explanation", dataset: { field: "explanation" } }, text(data.explanation))
    : null;
}

/** Unknown types: their data as indented JSON (text, never HTML). */
export function renderJson(data) {
  let json;
  try {
    json = JSON.stringify(data, null, 2);
  } catch {
    json = String(data);
  }
  return el("pre", { class: "chat-json" }, json ?? "null");
}

registerPayloadRenderer("pubmed_search_results", pubmedResults, { title: "PubMed results" });
registerPayloadRenderer("literature_search_results", literatureResults, { title: "Literature results" });
registerPayloadRenderer("trial_search_results", trialResults, { title: "Clinical trials" });
registerPayloadRenderer("article_details", articleDetails, { title: "Article" });
registerPayloadRenderer("retrieved_items", retrievedItems, { title: "Items from this page" });
registerPayloadRenderer("analysis_result", analysisResult, { title: "Analysis" });
registerPayloadRenderer("query_suggestion", querySuggestion, { title: "Suggested query" });
registerPayloadRenderer("ai_column_suggestion", aiColumnSuggestion, { title: "Suggested AI column" });
registerPayloadRenderer("filter_suggestion", filterSuggestion, { title: "Suggested filter" });
registerPayloadRenderer("trial_search_suggestion", trialSearchSuggestion, { title: "Suggested trial search" });
