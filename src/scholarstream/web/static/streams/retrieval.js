// The stream page's retrieval queries: one editor per source (the query in the source's own
// syntax, the results per run, whether the source is searched), each saved on its own with
// PATCH /api/v1/streams/{id} {"retrieval": {"queries": {<source>: changes}}}. An editor with
// unsaved changes keeps them when the stream is shown again after another save.

import { el, renderProblem } from "/static/app/shared/dom.js";

function filterText(filters) {
  return Object.entries(filters ?? {}).map(([name, value]) => `${name} = ${value}`).join("; ");
}

class QueryEditor {
  constructor(name, info, save) {
    this.name = name;
    this.label = info?.label ?? name;
    this.save = save;
    this.saved = null;
    const id = `query-${name}`;
    this.query = el("textarea", { id, name: "query", rows: "3", spellcheck: "false",
      "aria-describedby": info?.syntax ? `${id}-syntax` : null });
    this.limit = el("input", { id: `${id}-limit`, name: "limit", type: "number", min: "1", max: "500",
      inputmode: "numeric", class: "limit" });
    this.enabled = el("input", { type: "checkbox", name: "enabled" });
    this.filters = el("p", { class: "muted query-filters" });
    this.status = el("span", { class: "save-status", role: "status" });
    this.problem = el("div", { dataset: { role: "query-problem" } });
    const button = el("button", { type: "submit" }, `Save the ${this.label} query`);
    this.element = el("form", { class: "query-editor", dataset: { source: name }, "aria-label": `${this.label} query` },
      el("h3", {}, this.label),
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
    this.element.addEventListener("submit", (event) => {
      event.preventDefault();
      this.submit();
    });
    this.element.addEventListener("input", () => {
      this.status.textContent = "";
      this.element.classList.toggle("is-edited", this.dirty());
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
    this.element.classList.toggle("is-edited", this.dirty());
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
  }

  show(retrieval, { force = false } = {}) {
    const names = Object.keys(retrieval?.queries ?? {});
    for (const name of names) {
      let editor = this.editors.get(name);
      if (!editor) {
        editor = new QueryEditor(name, this.sources[name], this.save);
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

  /** The enabled sources, for the chat's context. */
  enabledSources() {
    return [...this.editors.values()].filter((e) => e.saved?.enabled).map((e) => e.name);
  }
}
