// AI columns, a feature of every results table: a named column with criteria that a model
// evaluates for each row (a value and a one-line reason), shown in the rows, sortable and
// filterable, cached per row on the server (POST /api/v1/ai-columns/{id}/values).
//
// A table adopts AI columns in three steps:
//   const ai = attachAIColumns({ tableKey: "library", onChange });   // once per page
//   list.before(ai.element);                                          // the toolbar
//   ai.setItems(rows.map((row) => ({ key, node, item })));            // after each render
// where ``node`` is the row's element (its cells are appended to it) and ``item`` is what the
// model judges ({key, title, abstract, summary, fields}; ``recordColumnItem`` builds it
// from a paper or a trial). ``ai.fieldsFor(key)`` and ``ai.state()`` feed the chat context.
// ``addAIColumn(tableKey, spec)`` creates a column and refreshes every table with that key
// (the chat's Accept of an ai_column_suggestion).
//
// Model text (values, reasons) only ever reaches the page as text nodes.

import { api } from "/static/app/shared/api.js";
import { el, renderProblem, renderStatus } from "/static/app/shared/dom.js";
import { authorNames } from "/static/app/shared/records.js";

const URL = "/api/v1/ai-columns";
const BATCH = 20; // rows per request: cells fill in as each batch returns
const LIMITS = { title: 2000, text: 20000, field: 1000, fields: 20, key: 300 };

const tables = new Set(); // every table attached on this page

// --- output types: how a value is shown, ordered and filtered -------------------------------

const OUTPUT_TYPES = new Map();

/** ``spec``: {label, show(value), compare(a, b, column), filter(column, value, onInput),
 * matches(value, filter, column), normalizeFilter(wanted, column)}. */
export function registerOutputType(name, spec) {
  OUTPUT_TYPES.set(name, spec);
}

function outputType(name) {
  return OUTPUT_TYPES.get(name) ?? OUTPUT_TYPES.get("text");
}

function filterSelect(options, value, onInput) {
  const select = el("select", { name: "ai-filter" },
    options.map(([optionValue, label]) => el("option", { value: optionValue }, label)));
  select.value = value;
  select.addEventListener("change", () => onInput(select.value));
  return select;
}

function filterInput(attrs, value, onInput) {
  const input = el("input", { name: "ai-filter", ...attrs });
  input.value = value;
  input.addEventListener("input", () => onInput(input.value.trim()));
  return input;
}

registerOutputType("yes_no", {
  label: "Yes / no",
  show: (value) => (value === true ? "Yes" : value === false ? "No" : "—"),
  compare: (a, b) => Number(a) - Number(b),
  filter: (column, value, onInput) =>
    filterSelect([["", "Any"], ["yes", "Yes"], ["no", "No"]], value, onInput),
  matches: (value, filter) => (filter === "yes" ? value === true : value === false),
  normalizeFilter(wanted) {
    const text = String(wanted).trim().toLowerCase();
    if (wanted === true || ["yes", "true", "y"].includes(text)) return "yes";
    if (wanted === false || ["no", "false", "n"].includes(text)) return "no";
    return text === "any" || text === "" ? "" : null;
  },
});

registerOutputType("category", {
  label: "Category",
  show: (value) => (value === null || value === undefined ? "—" : String(value)),
  compare: (a, b, column) => (column.categories ?? []).indexOf(a) - (column.categories ?? []).indexOf(b),
  filter: (column, value, onInput) =>
    filterSelect([["", "Any"], ...(column.categories ?? []).map((c) => [c, c])], value, onInput),
  matches: (value, filter) => value === filter,
  normalizeFilter(wanted, column) {
    const text = String(wanted).trim().toLowerCase();
    if (text === "" || text === "any") return "";
    return (column.categories ?? []).find((c) => c.toLowerCase() === text) ?? null;
  },
});

registerOutputType("number", {
  label: "Number",
  show: (value) => (typeof value === "number" ? value.toLocaleString("en") : "—"),
  compare: (a, b) => a - b,
  filter: (column, value, onInput) =>
    filterInput({ type: "number", step: "any", placeholder: "at least", class: "ai-filter-number" }, value, onInput),
  matches: (value, filter) => typeof value === "number" && value >= Number(filter),
  normalizeFilter(wanted) {
    const min = typeof wanted === "object" && wanted !== null ? wanted.min : wanted;
    if (min === null || min === undefined || min === "") return "";
    return Number.isFinite(Number(min)) ? String(Number(min)) : null;
  },
});

registerOutputType("text", {
  label: "Short text",
  show: (value) => (value === null || value === undefined || value === "" ? "—" : String(value)),
  compare: (a, b) => String(a).localeCompare(String(b)),
  filter: (column, value, onInput) =>
    filterInput({ type: "search", placeholder: "contains", class: "ai-filter-text" }, value, onInput),
  matches: (value, filter) =>
    typeof value === "string" && value.toLowerCase().includes(filter.toLowerCase()),
  normalizeFilter: (wanted) => String(wanted ?? "").trim(),
});

// --- the API -------------------------------------------------------------------------------

export function listAIColumns(tableKey) {
  return api(`${URL}?${new URLSearchParams({ table: tableKey })}`);
}

function specBody(spec) {
  const outputType = spec.output_type || "yes_no";
  const body = {
    name: String(spec.name ?? "").trim(),
    criteria: String(spec.criteria ?? "").trim(),
    output_type: outputType,
  };
  if (outputType === "category") {
    const categories = Array.isArray(spec.categories)
      ? spec.categories
      : String(spec.categories ?? "").split(/[,;\n]/);
    body.categories = categories.map((c) => String(c).trim()).filter(Boolean);
  }
  return body;
}

/** Creates a column on ``tableKey`` (POST), then refreshes every table with that key. */
export async function addAIColumn(tableKey, spec) {
  const column = await api(URL, {
    method: "POST",
    body: JSON.stringify({ table: tableKey, ...specBody(spec) }),
  });
  await refreshTables(tableKey);
  return column;
}

export async function removeAIColumn(tableKey, columnId) {
  await api(`${URL}/${encodeURIComponent(columnId)}`, { method: "DELETE" });
  await refreshTables(tableKey);
}

export function refreshTables(tableKey) {
  return Promise.all([...tables].filter((t) => t.tableKey === tableKey).map((t) => t.refresh()));
}

// --- rows ------------------------------------------------------------------------------------

function clip(text, limit) {
  const value = String(text);
  return value.length <= limit ? value : `${value.slice(0, limit - 1)}…`;
}

/** The model's view of a literature record (a paper or a trial) of a table row. */
export function recordColumnItem(key, record) {
  const fields = {};
  const put = (name, value) => {
    const text = Array.isArray(value) ? value.filter(Boolean).join("; ") : value;
    if (text === null || text === undefined || String(text).trim() === "") return;
    if (Object.keys(fields).length < LIMITS.fields) fields[name] = clip(text, LIMITS.field);
  };
  if (record.kind === "trial") {
    put("status", record.status);
    put("phases", record.phases);
    put("study type", record.study_type);
    put("conditions", record.conditions);
    put("interventions", (record.interventions ?? []).map((i) => (i.type ? `${i.type}: ${i.name}` : i.name)));
    put("sponsor", record.sponsor);
    put("enrollment", record.enrollment);
    put("start date", record.start_date);
    put("primary outcomes", (record.primary_outcomes ?? []).map((o) => o.measure));
    put("keywords", record.keywords);
  } else {
    put("authors", authorNames(record.authors ?? [], 5));
    put("year", record.year);
    put("venue", record.venue);
    put("publication types", record.publication_types);
    put("keywords", record.keywords);
    put("MeSH terms", record.mesh_terms);
    put("language", record.language);
  }
  return {
    key: clip(key, LIMITS.key),
    title: clip(record.title || "(untitled)", LIMITS.title),
    abstract: record.abstract ? clip(record.abstract, LIMITS.text) : null,
    summary: record.summary ? clip(record.summary, LIMITS.text) : null,
    fields,
  };
}

function columnSignature(column) {
  return JSON.stringify([column.criteria, column.output_type, column.categories ?? []]);
}

// --- one table ---------------------------------------------------------------------------------

class AIColumnTable {
  constructor({ tableKey, onChange = null }) {
    this.tableKey = tableKey;
    this.onChange = onChange;
    this.columns = [];
    this.canEvaluate = false;
    this.problem = null;
    this.entries = []; // [{key, node, item, sig, order}]
    this.cells = new Map(); // column id -> Map(row key -> {state, sig, value, reason, cached})
    this.signatures = new Map(); // column id -> the spec its cells were computed for
    this.sort = null; // {columnId, direction}
    this.filters = new Map(); // column id -> filter value ("" = none)
    this.element = this.#toolbar();
    this.element.hidden = true;
    this.loaded = this.refresh();
  }

  // --- public ---

  /** The rows now shown, in their page order; evaluates the ones without a value. */
  async setItems(entries) {
    this.entries = entries.map((entry, order) => ({
      ...entry,
      key: String(entry.key),
      sig: JSON.stringify(entry.item),
      order,
    }));
    for (const entry of this.entries) entry.node.dataset.aiKey = entry.key;
    this.element.hidden = this.entries.length === 0;
    await this.loaded;
    this.#renderAllCells();
    this.#applyView();
    await this.#evaluate();
  }

  /** Reloads the columns (after one was added or removed) and fills in what is missing. */
  async refresh() {
    let answer;
    try {
      answer = await listAIColumns(this.tableKey);
    } catch (error) {
      renderProblem(this.status, error, "The AI columns could not be loaded.");
      return;
    }
    this.columns = answer.columns;
    this.canEvaluate = answer.can_evaluate;
    this.problem = answer.problem;
    const ids = new Set(this.columns.map((c) => c.id));
    for (const id of [...this.cells.keys()]) if (!ids.has(id)) this.cells.delete(id);
    for (const id of [...this.filters.keys()]) if (!ids.has(id)) this.filters.delete(id);
    if (this.sort && !ids.has(this.sort.columnId)) this.sort = null;
    for (const column of this.columns) {
      const signature = columnSignature(column);
      if (this.signatures.get(column.id) !== signature) this.cells.set(column.id, new Map());
      this.signatures.set(column.id, signature);
    }
    this.#renderColumns();
    this.#renderStatusLine();
    if (this.entries.length) {
      this.#renderAllCells();
      this.#applyView();
      await this.#evaluate();
    }
  }

  /** Column name -> shown value of a row, for the chat's item summaries. */
  fieldsFor(key) {
    const fields = {};
    for (const column of this.columns) {
      const cell = this.cells.get(column.id)?.get(String(key));
      if (cell?.state !== "done") continue;
      const value = cell.value;
      fields[column.name] = column.output_type === "yes_no"
        ? (value === true ? "yes" : value === false ? "no" : null)
        : value;
    }
    return fields;
  }

  /** The rows shown now (not filtered out, here or by the page), in display order. */
  visibleKeys() {
    return this.#ordered()
      .filter((e) => !e.node.hidden && !e.node.classList.contains("ai-filtered-out"))
      .map((e) => e.key);
  }

  /** The columns, their sort and filters (by column name), for the chat context. */
  state() {
    const byId = new Map(this.columns.map((c) => [c.id, c]));
    const sortColumn = this.sort ? byId.get(this.sort.columnId) : null;
    const filters = {};
    for (const [id, value] of this.filters) {
      if (value !== "" && byId.has(id)) filters[byId.get(id).name] = value;
    }
    return {
      columns: this.columns.map((c) => ({
        name: c.name, criteria: c.criteria, output_type: c.output_type, categories: c.categories,
      })),
      sort: sortColumn ? { column: sortColumn.name, direction: this.sort.direction } : null,
      filters,
      visible: this.visibleKeys().length,
    };
  }

  /** Applies the filters whose key names a column; returns the names applied. */
  applyFilters(filters) {
    const applied = [];
    for (const [name, wanted] of Object.entries(filters ?? {})) {
      const column = this.columns.find((c) => c.name.toLowerCase() === name.toLowerCase());
      if (!column) continue;
      const value = outputType(column.output_type).normalizeFilter(wanted, column);
      if (value === null) continue;
      this.filters.set(column.id, value);
      applied.push(column.name);
    }
    if (applied.length) {
      this.#renderColumns();
      this.#applyView();
    }
    return applied;
  }

  setSort(columnName, direction) {
    const column = this.columns.find((c) => c.name === columnName);
    this.sort = column && direction ? { columnId: column.id, direction } : null;
    this.#renderColumns();
    this.#applyView();
  }

  // --- the toolbar ---

  #toolbar() {
    const titleId = `ai-columns-${this.tableKey}-title`;
    this.columnList = el("ul", { class: "ai-column-list", dataset: { role: "ai-column-list" } });
    this.status = el("div", { class: "ai-status", dataset: { testid: "ai-status" }, "aria-live": "polite" });
    this.filterCount = el("p", { class: "ai-filter-count muted", dataset: { testid: "ai-filter-count" },
      "aria-live": "polite" });
    return el("div", { class: "ai-columns", role: "group", "aria-labelledby": titleId,
      dataset: { testid: "ai-columns", table: this.tableKey } },
      el("p", { class: "ai-columns-title", id: titleId }, "AI columns"),
      this.columnList,
      this.filterCount,
      this.status,
      this.#addForm());
  }

  #addForm() {
    const form = el("form", { class: "ai-add-form", dataset: { form: "ai-column" } });
    const name = el("input", { name: "name", required: true, maxlength: 120, autocomplete: "off",
      placeholder: "e.g. RCT" });
    const criteria = el("textarea", { name: "criteria", required: true, maxlength: 2000, rows: 2,
      placeholder: "e.g. Is this a randomized controlled trial in humans?" });
    const type = el("select", { name: "output_type" },
      [...OUTPUT_TYPES].map(([value, spec]) => el("option", { value }, spec.label)));
    const categories = el("input", { name: "categories", autocomplete: "off",
      placeholder: "comma-separated, e.g. RCT, cohort, other" });
    const categoriesLabel = el("label", { class: "ai-categories" }, "Categories", categories);
    const problem = el("div", { dataset: { role: "ai-add-problem" }, "aria-live": "polite" });
    const submit = el("button", { type: "submit" }, "Add column");
    const syncType = () => {
      categoriesLabel.hidden = type.value !== "category";
      categories.required = type.value === "category";
    };
    type.addEventListener("change", syncType);
    syncType();
    form.append(
      el("label", {}, "Column name", name),
      el("label", { class: "ai-criteria" }, "Criteria", criteria),
      el("label", {}, "Output type", type),
      categoriesLabel,
      el("div", { class: "ai-add-actions" }, submit),
      problem);
    form.addEventListener("submit", async (event) => {
      event.preventDefault();
      submit.disabled = true;
      problem.replaceChildren();
      try {
        await addAIColumn(this.tableKey, {
          name: name.value, criteria: criteria.value, output_type: type.value, categories: categories.value,
        });
        form.reset();
        syncType();
        details.open = false;
      } catch (error) {
        renderProblem(problem, error, "The column was not added.");
      } finally {
        submit.disabled = false;
      }
    });
    const details = el("details", { class: "ai-add", dataset: { testid: "ai-column-add" } },
      el("summary", {}, "Add AI column"), form);
    return details;
  }

  #renderColumns() {
    this.columnList.replaceChildren(...this.columns.map((column) => this.#columnControls(column)));
  }

  #columnControls(column) {
    const type = outputType(column.output_type);
    const sortButton = (direction, arrow, word) => {
      const pressed = this.sort?.columnId === column.id && this.sort.direction === direction;
      const button = el("button", { type: "button", class: "toggle ai-sort", "aria-pressed": String(pressed),
        dataset: { sort: direction } },
        el("span", { "aria-hidden": "true" }, arrow),
        el("span", { class: "visually-hidden" }, `Sort by ${column.name}, ${word}`));
      button.addEventListener("click", () => {
        this.sort = pressed ? null : { columnId: column.id, direction };
        this.#renderColumns();
        this.#applyView();
      });
      return button;
    };
    const filter = type.filter(column, this.filters.get(column.id) ?? "", (value) => {
      this.filters.set(column.id, value);
      this.#applyView();
    });
    const remove = el("button", { type: "button", class: "link ai-remove" },
      "Remove", el("span", { class: "visually-hidden" }, ` ${column.name}`));
    remove.addEventListener("click", async () => {
      remove.disabled = true;
      try {
        await removeAIColumn(this.tableKey, column.id);
      } catch (error) {
        remove.disabled = false;
        renderProblem(this.status, error, `The column ${column.name} was not removed.`);
      }
    });
    return el("li", { class: "ai-column", dataset: { testid: "ai-column", column: column.name } },
      el("span", { class: "ai-column-name", title: column.criteria }, column.name),
      el("span", { class: "muted ai-column-type" }, type.label),
      el("span", { class: "ai-sorts", role: "group" }, sortButton("asc", "↑", "ascending"),
        sortButton("desc", "↓", "descending")),
      el("label", { class: "ai-filter" }, el("span", { class: "visually-hidden" }, `${column.name} `), "filter ",
        filter),
      remove);
  }

  #renderStatusLine() {
    if (!this.canEvaluate && this.columns.length) {
      renderStatus(this.status, this.problem ?? "AI column values cannot be computed now.", "warning");
    } else {
      this.status.replaceChildren();
    }
  }

  // --- the cells ---

  #renderAllCells() {
    for (const entry of this.entries) this.#renderCells(entry);
  }

  #renderCells(entry) {
    let box = entry.node.querySelector(":scope > .ai-cells");
    if (!this.columns.length) {
      box?.remove();
      return;
    }
    if (!box) {
      box = el("div", { class: "ai-cells", dataset: { testid: "ai-cells" } });
      entry.node.append(box);
    }
    box.replaceChildren(...this.columns.map((column) => this.#cell(column, entry)));
  }

  #cell(column, entry) {
    const cell = this.cells.get(column.id)?.get(entry.key);
    const current = cell && cell.sig === entry.sig ? cell : null;
    const state = current?.state ?? (this.canEvaluate ? "pending" : "unavailable");
    const name = el("span", { class: "ai-cell-name" }, `${column.name}: `);
    const attrs = { class: "ai-cell", tabindex: "0", dataset: { testid: "ai-cell", column: column.name, state } };
    if (state === "pending") {
      return el("span", { ...attrs, "aria-busy": "true" }, name,
        el("span", { class: "ai-spinner", "aria-hidden": "true" }),
        el("span", { class: "visually-hidden" }, "evaluating…"));
    }
    if (state === "unavailable") {
      const why = this.problem ?? "No value yet.";
      return el("span", { ...attrs, title: why }, name, el("span", { dataset: { role: "value" } }, "—"),
        el("span", { class: "ai-cell-reason", dataset: { role: "reason" } }, why));
    }
    if (state === "failed") {
      // No offline way answers a column's criteria: the cell says so, and Retry asks the
      // model again for the cells that failed (they were not stored).
      const retry = el("button", { type: "button", class: "link", dataset: { action: "retry-cell" } }, "Retry");
      retry.addEventListener("click", () => this.#evaluateColumn(column));
      return el("span", { ...attrs, title: current.reason }, name,
        el("span", { class: "ai-cell-value", dataset: { role: "value" } }, "Not available"), retry,
        // After the button: the reason unfolds below on focus without moving it.
        el("span", { class: "ai-cell-reason", dataset: { role: "reason" } }, current.reason));
    }
    const shown = outputType(column.output_type).show(current.value);
    return el("span", { ...attrs, title: current.reason, dataset: { ...attrs.dataset, cached: String(Boolean(current.cached)) } },
      name,
      el("span", { class: "ai-cell-value", dataset: { role: "value" } }, shown),
      el("span", { class: "ai-cell-reason", dataset: { role: "reason" } }, current.reason));
  }

  // --- evaluation ---

  async #evaluate() {
    if (!this.canEvaluate) return;
    await Promise.all(this.columns.map((column) => this.#evaluateColumn(column)));
  }

  async #evaluateColumn(column) {
    let cells = this.cells.get(column.id);
    if (!cells) {
      cells = new Map();
      this.cells.set(column.id, cells);
    }
    const todo = this.entries.filter((entry) => {
      const cell = cells.get(entry.key);
      return !cell || cell.sig !== entry.sig || cell.state === "failed";
    });
    if (!todo.length) return;
    for (const entry of todo) cells.set(entry.key, { state: "pending", sig: entry.sig });
    let noticed = false;
    this.#refreshCells(column, todo);
    for (let start = 0; start < todo.length; start += BATCH) {
      const batch = todo.slice(start, start + BATCH);
      if (this.cells.get(column.id) !== cells) return; // removed or edited meanwhile
      let answer;
      try {
        answer = await api(`${URL}/${encodeURIComponent(column.id)}/values`, {
          method: "POST",
          body: JSON.stringify({ items: batch.map((entry) => entry.item) }),
        });
      } catch (error) {
        const reason = error.message;
        for (const entry of todo.slice(start)) {
          cells.set(entry.key, { state: "failed", sig: entry.sig, value: null, reason });
        }
        renderProblem(this.status, error, `The ${column.name} column could not be evaluated.`);
        this.#refreshCells(column, todo.slice(start));
        this.#applyView();
        return;
      }
      if (answer.fallbacks?.length && !noticed) {
        // One notice per evaluation of the column, however many cells or batches failed.
        noticed = true;
        renderStatus(this.status, `${column.name}: ${answer.fallbacks[0].message}`, "warning");
      }
      const sigs = new Map(batch.map((entry) => [entry.key, entry.sig]));
      for (const value of answer.values) {
        cells.set(value.item_key, {
          state: value.failed ? "failed" : "done",
          sig: sigs.get(value.item_key),
          value: value.value,
          reason: value.reason,
          cached: value.cached,
        });
      }
      this.#refreshCells(column, batch);
      this.#applyView();
    }
  }

  /** Redraws ``entries``' cells of ``column`` if they are still on the page. */
  #refreshCells(column, entries) {
    const current = new Map(this.entries.map((entry) => [entry.key, entry]));
    const index = this.columns.findIndex((c) => c.id === column.id);
    for (const stale of entries) {
      const entry = current.get(stale.key);
      const box = entry?.node.querySelector(":scope > .ai-cells");
      if (!box || index < 0 || !box.children[index]) continue;
      box.children[index].replaceWith(this.#cell(column, entry));
    }
  }

  // --- sort and filter ---

  #value(column, entry) {
    const cell = this.cells.get(column.id)?.get(entry.key);
    return cell && cell.sig === entry.sig ? cell : null;
  }

  #ordered() {
    const entries = [...this.entries];
    const column = this.sort && this.columns.find((c) => c.id === this.sort.columnId);
    if (!column) return entries;
    const type = outputType(column.output_type);
    const sign = this.sort.direction === "desc" ? -1 : 1;
    const known = (entry) => {
      const cell = this.#value(column, entry);
      return cell?.state === "done" && cell.value !== null && cell.value !== undefined ? cell.value : null;
    };
    return entries.sort((a, b) => {
      const va = known(a);
      const vb = known(b);
      if (va === null || vb === null) return (va === null) - (vb === null) || a.order - b.order;
      return sign * type.compare(va, vb, column) || a.order - b.order;
    });
  }

  #passes(entry) {
    for (const column of this.columns) {
      const filter = this.filters.get(column.id) ?? "";
      if (filter === "") continue;
      const cell = this.#value(column, entry);
      if (!cell || cell.state === "pending") continue; // not known yet: keep it in sight
      if (cell.state !== "done" || !outputType(column.output_type).matches(cell.value, filter, column)) {
        return false;
      }
    }
    return true;
  }

  #applyView() {
    const ordered = this.#ordered();
    const parent = ordered[0]?.node.parentNode;
    if (parent) {
      const inPlace = ordered.every((entry, i) => parent.children[i] === entry.node);
      if (!inPlace) for (const entry of ordered) parent.append(entry.node);
    }
    let shown = 0;
    for (const entry of ordered) {
      const pass = this.#passes(entry);
      entry.node.classList.toggle("ai-filtered-out", !pass);
      if (pass) shown += 1;
    }
    const filtering = [...this.filters.values()].some((value) => value !== "");
    this.filterCount.textContent = filtering
      ? `AI column filters: ${shown} of ${this.entries.length} rows match.`
      : "";
    this.onChange?.(this);
  }
}

/** Attaches AI columns to a table of ``tableKey``; place ``.element`` (the toolbar) near the
 * rows and call ``setItems`` after each render. */
export function attachAIColumns(options) {
  const table = new AIColumnTable(options);
  tables.add(table);
  return table;
}
