// Grounded research on the research page (issue 24).
//   EvidencePanel   the draft's evidence pack: find it for the prompt (the library and
//                   the sources, POST /{id}/evidence), remove records, add records from
//                   the library, or run without evidence (DELETE /{id}/evidence)
//   auditView       an answer with its citations marked, under a line counting them
//                   (supported, weak, unsupported, invalid) and the unverified references
//   referenceList   the records the answers cite, with DOI and PubMed links
// The audit itself is made on the server (grounding/): this only shows it.

import { RESEARCH_API } from "/static/app/research/draft-form.js";
import { api } from "/static/app/shared/api.js";
import { el, renderProblem, renderStatus } from "/static/app/shared/dom.js";
import { auditSummary, countsOf, MARK_LEGEND } from "/static/app/shared/citations.js";
import { renderMarkdown } from "/static/app/shared/markdown.js";

/** "[3] Smith, Lee, et al. Title. Venue. 2021." for a pack item. */
export function referenceText(item) {
  const paper = item.paper;
  const authors = (paper.authors ?? []).slice(0, 3).map((a) => a.family || a.name);
  if ((paper.authors ?? []).length > 3) authors.push("et al.");
  const parts = [authors.join(", "), paper.title, paper.venue, paper.year];
  // Each part without its own full stop: "et al." and a title ending in one.
  return `[${item.key}] ${parts.filter(Boolean).map((part) => String(part).replace(/\.$/, "")).join(". ")}.`;
}

function identifierLinks(paper) {
  const links = [];
  if (paper.ids?.doi) {
    links.push(el("a", { href: `https://doi.org/${paper.ids.doi}`, target: "_blank", rel: "noopener" }, "DOI"));
  }
  if (paper.ids?.pmid) {
    links.push(el("a", {
      href: `https://pubmed.ncbi.nlm.nih.gov/${encodeURIComponent(paper.ids.pmid)}/`, target: "_blank", rel: "noopener",
    }, "PubMed"));
  }
  return links.flatMap((link, index) => (index ? [" · ", link] : [" ", link]));
}

/** The answer with its citations marked, under the audit's summary and the legend;
 *  ``dataset`` goes on the answer (its testid names the summary too). */
export function auditView(audit, dataset) {
  const testid = dataset.testid;
  const counts = countsOf(audit);
  const alarm = counts.invalid || counts.unsupported || counts.contradicted || audit.unverified.length;
  return el("div", { class: "audited" },
    el("p", { class: `audit-summary${alarm ? " audit-alarm" : ""}`, dataset: { testid: `${testid}-audit` } },
      auditSummary(audit)),
    el("p", { class: "muted audit-legend" }, MARK_LEGEND,
      counts.invalid ? " · a citation of a record that is not in the pack is removed and flagged" : null),
    el("div", { class: "markdown", dataset }, renderMarkdown(audit.annotated)));
}

/** The pack's records that ``audits`` cite, in key order, as a reference list, with their
 *  export (RIS, BibTeX, CSV) and a button that saves them to the library. */
export function referenceList(researchId, pack, audits) {
  if (!pack) return null;
  const cited = new Set();
  for (const audit of audits) {
    for (const check of audit?.checks ?? []) if (check.verdict !== "invalid") cited.add(check.key);
  }
  const items = pack.items.filter((item) => cited.has(item.key));
  if (!items.length) return null;
  const base = `${RESEARCH_API}/${encodeURIComponent(researchId)}/references`;
  const status = el("span", { class: "save-status", role: "status", dataset: { testid: "references-saved" } });
  const save = el("button", { type: "button", class: "secondary" }, "Save to your library");
  save.addEventListener("click", async () => {
    save.disabled = true;
    try {
      const report = await api(`${base}/library`, { method: "POST" });
      status.textContent = `Saved: ${report.imported} added, ${report.duplicates} already in your library.`;
    } catch (error) {
      renderProblem(status, error, "The references could not be saved.");
    } finally {
      save.disabled = false;
    }
  });
  const formats = [["ris", "RIS"], ["bibtex", "BibTeX"], ["csv", "CSV"]];
  return el("section", { class: "references", dataset: { testid: "references" } },
    el("h3", {}, "References"),
    el("ul", {}, items.map((item) => el("li", { dataset: { key: item.key } },
      referenceText(item), identifierLinks(item.paper)))),
    el("p", { class: "actions" }, "Export: ",
      formats.flatMap(([format, label], index) => [index ? " · " : "",
        el("a", { href: `${base}?format=${format}`, download: "" }, label)]),
      " ", save, " ", status));
}

/** The whole pack, read-only: what every model was given. */
export function packList(pack) {
  return el("ol", { class: "evidence-list", dataset: { testid: "evidence-list" } },
    pack.items.map((item) => el("li", { dataset: { key: item.key } },
      referenceText(item), identifierLinks(item.paper),
      el("span", { class: "muted evidence-origin" }, ` (${originLabel(item.origin)})`))));
}

const originLabel = (origin) => (origin === "library" ? "your library" : origin);

export class EvidencePanel {
  /** ``section``: the template's evidence section; ``onChange(research)`` shows a new read. */
  constructor(section, researchId, onChange) {
    this.section = section;
    this.url = `${RESEARCH_API}/${encodeURIComponent(researchId)}/evidence`;
    this.onChange = onChange;
    this.part = (role) => section.querySelector(`[data-role="${role}"]`);
    this.part("find").addEventListener("click", () => this.find());
    this.part("drop").addEventListener("click", () => this.change(() => api(this.url, { method: "DELETE" })));
    this.part("library-form").addEventListener("submit", (event) => {
      event.preventDefault();
      this.searchLibrary();
    });
  }

  show(research) {
    const pack = research.evidence;
    const items = pack?.items ?? [];
    this.part("state").textContent = items.length
      ? `${items.length} record${items.length === 1 ? "" : "s"}: every model gets these, each under its key, `
        + "and is asked to cite the keys for every claim."
      : "No evidence: every model gets the bare prompt. Find evidence to ground the answers.";
    this.part("drop").hidden = !pack;
    this.part("list").replaceChildren(...items.map((item) => el("li", { dataset: { key: item.key } },
      el("span", {}, referenceText(item)), identifierLinks(item.paper),
      el("span", { class: "muted evidence-origin" }, ` (${originLabel(item.origin)})`), " ",
      el("button", {
        type: "button", class: "secondary small", "aria-label": `Remove record ${item.key} from the evidence`,
        dataset: { action: "remove-evidence" },
      }, "Remove"))));
    for (const button of this.part("list").querySelectorAll('[data-action="remove-evidence"]')) {
      const key = Number(button.closest("li").dataset.key);
      button.addEventListener("click", () => this.change(() => api(`${this.url}/remove`, {
        method: "POST", body: JSON.stringify({ keys: [key] }),
      })));
    }
  }

  async find() {
    const button = this.part("find");
    button.disabled = true;
    this.part("problem").replaceChildren();
    renderStatus(this.part("status"), "Searching your library and the sources…");
    try {
      const found = await api(this.url, { method: "POST", body: JSON.stringify({}) });
      this.part("status").replaceChildren();
      this.showSearch(found.search);
      this.onChange(found.research);
    } catch (error) {
      this.part("status").replaceChildren();
      renderProblem(this.part("problem"), error, "The evidence could not be found.");
    } finally {
      button.disabled = false;
    }
  }

  showSearch(search) {
    const failed = search.sources.filter((source) => !source.ok);
    const lines = [`Found ${search.distinct} distinct works (${search.found} records) for the prompt.`];
    lines.push(...(search.notices ?? []));
    for (const source of failed) lines.push(`${source.label}: ${source.error ?? "failed"}${source.hint ? ` ${source.hint}` : ""}`);
    this.part("search-summary").replaceChildren(...lines.map((line) => el("p", { class: "muted" }, line)));
  }

  async change(request) {
    this.part("problem").replaceChildren();
    try {
      this.onChange(await request());
    } catch (error) {
      renderProblem(this.part("problem"), error, "The evidence could not be changed.");
    }
  }

  async searchLibrary() {
    const text = this.part("library-query").value.trim();
    const results = this.part("library-results");
    if (!text) return;
    try {
      const page = await api(`/api/v1/library/records?q=${encodeURIComponent(text)}&limit=10`);
      results.replaceChildren(...(page.items.length
        ? page.items.map((item) => el("li", {},
          el("span", {}, `${item.record.title}${item.record.year ? ` (${item.record.year})` : ""} `),
          el("button", {
            type: "button", class: "secondary small", dataset: { action: "add-evidence", recordId: item.id },
          }, "Add")))
        : [el("li", { class: "muted" }, "Nothing in your library matches.")]));
      for (const button of results.querySelectorAll('[data-action="add-evidence"]')) {
        button.addEventListener("click", () => this.change(() => api(`${this.url}/records`, {
          method: "POST", body: JSON.stringify({ recordIds: [button.dataset.recordId] }),
        })));
      }
    } catch (error) {
      renderProblem(this.part("problem"), error, "Your library could not be searched.");
    }
  }
}
