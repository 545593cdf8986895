// What an answer searched (seed 004's transparency): under an assistant answer, one line per
// query its tools sent, as sent ("Searched PubMed for “…” — 1,834 results"), and a note when
// the message was read as a follow-up with the conversation's topic.
// Input is the ``continuity`` field of a ChatResponsePayload (live or stored); text nodes only.

import { sourceName } from "/static/app/chat/payload-cards.js";
import { el } from "/static/app/shared/dom.js";

const FOLLOW_UP_INTENTS = new Set(["followup_continuation", "slot_fill"]);

/** Where a query went: its source, else its tool's name without the verb ("search_web" → "web"). */
function placeName(query) {
  if (query.source === "library") return "your library";
  if (query.source) return sourceName(query.source);
  return String(query.tool || "a tool").replace(/^search_/, "").replaceAll("_", " ");
}

function count(n, one, many) {
  return `${n.toLocaleString("en")} ${n === 1 ? one : many}`;
}

/** Tools whose query is not a search: their own sentence. ``results`` keeps the tool's meaning. */
const PHRASES = {
  // read_web_page: the query is the address; results is 1 when page text was read, else 0.
  read_web_page: (query) => ({
    lead: "Read ",
    outcome: query.results === 0 ? "no readable text" : null,
  }),
};

function searchPhrase(query) {
  return {
    lead: `Searched ${placeName(query)} for `,
    outcome: typeof query.results === "number" ? count(query.results, "result", "results") : null,
  };
}

/** " (published 2015–)", " (published –2014)", " (published 2010–2015)" or "". */
function years(query) {
  const from = Number.isInteger(query.year_from) ? query.year_from : "";
  const to = Number.isInteger(query.year_to) ? query.year_to : "";
  if (from === "" && to === "") return "";
  return from === to ? ` (published ${from})` : ` (published ${from}–${to})`;
}

function queryLine(query) {
  const { lead, outcome } = (PHRASES[query.tool] ?? searchPhrase)(query);
  const failed = query.ok === false;
  const published = years(query);
  return el("li", { class: "chat-searched-line", dataset: { state: failed ? "failed" : "done", tool: query.tool ?? "" } },
    lead, el("span", { class: "chat-searched-query" }, `“${query.query ?? ""}”`),
    published ? el("span", { class: "chat-searched-years" }, published) : null,
    failed ? el("span", { class: "chat-searched-failed" }, " — failed")
      : outcome ? el("span", { class: "muted" }, ` — ${outcome}`) : null);
}

/** How continuity corrected the model's queries, one line each (null when it did not). */
function correctionList(continuity) {
  const corrections = Array.isArray(continuity?.corrections) ? continuity.corrections : [];
  if (corrections.length === 0) return null;
  return el("ul", { class: "chat-corrections muted", dataset: { testid: "chat-corrections" }, "aria-label": "Query corrections" },
    corrections.map((text) => el("li", {}, `Query corrected: ${text}`)));
}

/** The same query sent twice to the same place (by two tools) is one line. */
function distinct(queries) {
  const seen = new Set();
  return queries.filter((query) => {
    const key = JSON.stringify([query.source ?? query.tool, query.query, query.results, query.ok]);
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

/** The "Searched" block for ``continuity`` (null when there is nothing to show). */
export function renderSearched(continuity) {
  const queries = Array.isArray(continuity?.queries) ? distinct(continuity.queries) : [];
  const followUp = FOLLOW_UP_INTENTS.has(continuity?.intent);
  if (queries.length === 0 && !followUp) return null;
  const published = continuity?.published ? `, published ${continuity.published}` : "";
  const note = followUp
    ? el("p", { class: "chat-followup", dataset: { testid: "chat-followup", intent: continuity.intent },
        title: continuity.reason || null },
        "Follow-up: read with the conversation's topic",
        continuity.refined_query ? [" as ", el("span", { class: "chat-searched-query" }, `“${continuity.refined_query}”`)] : null,
        published)
    : null;
  const list = queries.length
    ? el("ul", { class: "chat-searched-lines", "aria-label": "Searched" }, queries.map(queryLine))
    : null;
  return el("div", { class: "chat-searched", dataset: { testid: "chat-searched" } }, note, list,
    correctionList(continuity));
}
