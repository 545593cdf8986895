// The stream page's sources and queries: one collapsed section per source (a <details>,
// opened with Enter or Space on its summary), whose summary says whether the source is on,
// off, or cannot run on this server, and starts the query. Inside, the query in the
// source's own syntax, the results per run and whether the source is searched, saved on
// its own with PATCH /api/v1/streams/{id} {"retrieval": {"queries": {<source>: changes}}}.
// An editor with unsaved changes keeps them when the stream is shown again after another
// save, and stays open.

import { el, renderProblem } from "/static/app/shared/dom.js";

const PREVIEW_CHARS = 90;

function filterText(filters) {
  return Object.entries(filters ?? {}).map(([name, value]) => `${name} = ${value}`).join("; ");
}

function preview(query) {
  const text = String(query ?? "").replace(/\s+/g, " ").trim();
  return text.length > PREVIEW_CHARS ? `${text.slice(0, PREVIEW_CHARS - 1)}…` : text;
}

class QueryEditor {
  constructor(name, info, save) {
    this.name = name;
    this.label = info?.label ?? name;
    this.save = save;
    this.saved = null;
    this.availability = null; // {available, reason, how_to_enable} from /api/v1/streams/sources
    const id = `query-${name}`;
    this.query = el("textarea", { id, name: "query", rows: "3", spellcheck: "false",
      "aria-describedby": info?.syntax ? `${id}-syntax` : null });
    this.limit = el("input", { id: `${id}-limit`, name: "limit", type: "number", min: "1", max: "500",
      inputmode: "numeric", class: "limit" });
    this.enabled = el("input", { type: "checkbox", name: "enabled", "aria-describedby": `${id}-availability` });
    this.filters = el("p", { class: "muted query-filters" });
    this.status = el("span", { class: "save-status", role: "status" });
    this.problem = el("div", { dataset: { role: "query-problem" } });
    this.note = el("div", { id: `${id}-availability`, dataset: { role: "availability" } });
    this.state = el("span", { class: "badge source-state", dataset: { testid: "source-state" } });
    this.preview = el("span", { class: "query-preview muted" });
    const button = el("button", { type: "submit" }, `Save the ${this.label} query`);
    this.form = el("form", { class: "query-form", "aria-label": `${this.label} query` },
      this.note,
      el("div", { class: "query-field" },
        el("label", { for: id }, "Query"),
        this.query,
        info?.syntax
          ? el("details", { class: "query-syntax" }, el("summary", {}, `${this.label} query syntax`),
              el("p", { id: `${id}-syntax`, class: "muted field-hint" }, info.syntax))
          : null),
      this.filters,
      el("div", { class: "query-options" },
        el("label", { for: `${id}-limit` }, "Results per run ", this.limit),
        el("label", { class: "check" }, this.enabled, " Search this source")),
      this.problem,
      el("div", { class: "actions" }, button, this.status));
    this.element = el("details", { class: "query-editor", dataset: { source: name } },
      el("summary", { class: "query-summary" },
        el("span", { class: "source-name" }, this.label), " ", this.state, " ", this.preview),
      this.form);
    this.form.addEventListener("submit", (event) => {
      event.preventDefault();
      this.submit();
    });
    this.form.addEventListener("input", () => {
      this.status.textContent = "";
      this.markEdited();
    });
  }

  values() {
    return {
      query: this.query.value.trim(),
      limit: Number.parseInt(this.limit.value, 10),
      enabled: this.enabled.checked,
    };
  }

  /** What differs from the saved query. */
  changes() {
    if (!this.saved) return {};
    const now = this.values();
    const changes = {};
    if (now.query !== this.saved.query) changes.query = now.query;
    if (now.limit !== this.saved.limit) changes.limit = Number.isNaN(now.limit) ? null : now.limit;
    if (now.enabled !== this.saved.enabled) changes.enabled = now.enabled;
    return changes;
  }

  dirty() {
    return Object.keys(this.changes()).length > 0;
  }

  markEdited() {
    const edited = this.dirty();
    this.form.classList.toggle("is-edited", edited);
    this.element.classList.toggle("is-edited", edited);
    if (edited) this.element.open = true;
  }

  /** Can this source run here? ``null``: not known (the list could not be read). */
  unavailable() {
    return this.availability && !this.availability.available ? this.availability : null;
  }

  setAvailability(availability) {
    this.availability = availability ?? null;
    this.showState();
  }

  showState() {
    const saved = this.saved;
    if (!saved) return;
    const missing = this.unavailable();
    const [text, kind] = missing
      ? [saved.enabled ? "On, but cannot run here" : "Not available here", "unavailable"]
      : saved.enabled ? ["On", "on"] : ["Off", "off"];
    this.state.textContent = text;
    this.state.dataset.state = kind;
    this.element.dataset.state = kind;
    this.preview.textContent = preview(saved.query);
    // A source that cannot run is not turned on here; one already on can be turned off.
    this.enabled.disabled = Boolean(missing) && !this.enabled.checked;
    this.note.replaceChildren(...(missing
      ? [el("p", { class: "status warning", dataset: { testid: "unavailable" } },
          el("strong", {}, `${this.label} cannot run on this server. `),
          missing.reason ?? "", " ", missing.how_to_enable ?? "",
          saved.enabled ? " While it is on, every report of this stream is partial: turn it off below." : "")]
      : []));
  }

  update(query, { force = false } = {}) {
    const keep = !force && this.dirty();
    this.saved = query;
    if (!keep) {
      this.query.value = query.query;
      this.limit.value = String(query.limit);
      this.enabled.checked = query.enabled;
    }
    const filters = filterText(query.filters);
    this.filters.textContent = filters ? `Filters: ${filters}` : "";
    this.filters.hidden = !filters;
    this.markEdited();
    this.showState();
  }

  async submit() {
    const changes = this.changes();
    this.problem.replaceChildren();
    if (!Object.keys(changes).length) {
      this.status.textContent = "Nothing to save.";
      return;
    }
    this.status.textContent = "Saving…";
    try {
      const stream = await this.save(this.name, changes);
      this.update(stream.retrieval.queries[this.name], { force: true });
      this.status.textContent = "Saved.";
    } catch (error) {
      this.status.textContent = "";
      renderProblem(this.problem, error, `The ${this.label} query was not saved.`);
    }
  }
}

export class QueryEditors {
  /** ``save(source, changes)`` sends the PATCH and resolves with the updated stream. */
  constructor(container, { sources, save }) {
    this.container = container;
    this.sources = sources;
    this.save = save;
    this.editors = new Map();
    this.availability = {};
  }

  show(retrieval, { force = false } = {}) {
    const names = Object.keys(retrieval?.queries ?? {});
    for (const name of names) {
      let editor = this.editors.get(name);
      if (!editor) {
        editor = new QueryEditor(name, this.sources[name], this.save);
        editor.availability = this.availability[name] ?? null;
        this.editors.set(name, editor);
      }
      editor.update(retrieval.queries[name], { force });
    }
    for (const [name, editor] of this.editors) {
      if (!names.includes(name)) {
        editor.element.remove();
        this.editors.delete(name);
      }
    }
    const elements = names.map((name) => this.editors.get(name).element);
    const same = elements.length === this.container.children.length &&
      elements.every((element, i) => this.container.children[i] === element);
    // Moving a focused editor would take the focus away from it.
    if (!same) this.container.replaceChildren(...elements);
  }

  /** ``sources``: the list of GET /api/v1/streams/sources. */
  setAvailability(sources) {
    this.availability = Object.fromEntries(sources.map((s) => [s.name, s]));
    for (const [name, editor] of this.editors) editor.setAvailability(this.availability[name]);
  }

  /** The sources that are on but cannot run on this server. */
  onButUnavailable() {
    return [...this.editors.values()].filter((e) => e.saved?.enabled && e.unavailable());
  }

  /** The enabled sources, for the chat's context. */
  enabledSources() {
    return [...this.editors.values()].filter((e) => e.saved?.enabled).map((e) => e.name);
  }
}
