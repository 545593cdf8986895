// The conversation's objectives in the chat tray (seed 004's master objective list): what the
// user is trying to achieve, each with its status, the assistant's last ask for help (its
// request for leverage when it is stuck) and, on demand, the evidence that moved it.
// The user edits the list here through the thread endpoints; every answer's continuity and
// the thread of a reopened conversation refresh it. Text reaches the page as text nodes only.

import { api } from "/static/app/shared/api.js";
import { el, renderProblem } from "/static/app/shared/dom.js";

const STATUSES = [
  ["open", "open"],
  ["in_progress", "in progress"],
  ["achieved", "achieved"],
  ["blocked", "blocked"],
  ["closed", "closed unresolved"],
];
const TEXT_CHARS = 200; // the server's limit on an objective's text
// Collapsed to one line unless the user opened it: the log keeps the tray's height.
const KEY_OPEN = "scholarstream.chat.objectives-open";
const STATUS_WORDS = Object.fromEntries(STATUSES);

function objectivesPath(conversationId, objectiveId = null) {
  const base = `/api/v1/chat/conversations/${encodeURIComponent(conversationId)}/objectives`;
  return objectiveId === null ? base : `${base}/${encodeURIComponent(objectiveId)}`;
}

function remembered(key) {
  try { return sessionStorage.getItem(key); } catch { return null; }
}

function remember(key, value) {
  try {
    if (value) sessionStorage.setItem(key, value);
    else sessionStorage.removeItem(key);
  } catch {
    // Storage refused: the choice lasts for this page only.
  }
}

/** One objective: its text (or the inline editor), status select, ask, evidence, Edit, Delete. */
class ObjectiveItem {
  constructor(panel, objective) {
    this.panel = panel;
    this.objective = objective;
    this.editor = null;
    const textId = `chat-objective-text-${objective.id}`;
    this.text = el("p", { class: "chat-objective-text", id: textId });
    this.select = el("select", { class: "chat-objective-status", "aria-label": "Status", "aria-describedby": textId },
      STATUSES.map(([value, label]) => el("option", { value }, label)));
    this.editButton = el("button", { type: "button", class: "link", "aria-describedby": textId }, "Edit");
    this.deleteButton = el("button", { type: "button", class: "link danger-link", "aria-describedby": textId }, "Delete");
    this.ask = el("p", { class: "chat-objective-ask", dataset: { testid: "chat-objective-ask" } });
    this.evidenceSummary = el("summary", {});
    this.evidenceList = el("ul", {});
    this.evidence = el("details", { class: "chat-objective-evidence" }, this.evidenceSummary, this.evidenceList);
    this.problem = el("div", { class: "chat-objective-problem", "aria-live": "polite" });
    this.node = el("li", { class: "chat-objective", dataset: { objectiveId: objective.id } },
      this.text,
      el("div", { class: "chat-objective-tools" }, this.select, this.editButton, this.deleteButton),
      this.ask, this.evidence, this.problem);
    this.select.addEventListener("change", () => this.saveStatus());
    this.editButton.addEventListener("click", () => this.startEdit());
    this.deleteButton.addEventListener("click", () => this.remove());
    this.update(objective);
  }

  /** Shows the server's ``objective``; an edit in progress keeps what the user typed. */
  update(objective) {
    this.objective = objective;
    this.node.dataset.status = objective.status;
    this.text.textContent = objective.text;
    if (!this.select.disabled) this.select.value = objective.status;
    const asks = objective.asks ?? [];
    this.ask.hidden = asks.length === 0;
    this.ask.replaceChildren(...(asks.length ? [el("strong", {}, "The assistant asks: "), asks.at(-1)] : []));
    const evidence = objective.evidence ?? [];
    this.evidence.hidden = evidence.length === 0;
    this.evidenceSummary.textContent = `Evidence (${evidence.length})`;
    this.evidenceList.replaceChildren(...evidence.map((line) => el("li", {}, line)));
    if (this.panel.items.has(objective.id)) this.panel.showCount();
  }

  path() {
    return objectivesPath(this.panel.conversationId, this.objective.id);
  }

  async saveStatus() {
    const status = this.select.value;
    this.select.disabled = true;
    this.problem.replaceChildren();
    try {
      const saved = await api(this.path(), { method: "PATCH", body: JSON.stringify({ status }) });
      this.select.disabled = false;
      this.update(saved);
      this.panel.announce(`Marked ${this.select.selectedOptions[0]?.textContent ?? status}.`);
    } catch (error) {
      // Not saved: the select shows the stored status again, and says why.
      this.select.disabled = false;
      this.select.value = this.objective.status;
      renderProblem(this.problem, error, "The status was not saved:");
    }
    this.select.focus();
  }

  startEdit() {
    if (this.editor) return;
    const input = el("input", { type: "text", value: this.objective.text, maxlength: String(TEXT_CHARS),
      required: true, "aria-label": "Objective text" });
    const cancel = el("button", { type: "button", class: "secondary" }, "Cancel");
    const problem = el("div", { "aria-live": "polite" });
    const form = el("form", { class: "chat-objective-edit" }, input, el("button", { type: "submit" }, "Save"), cancel, problem);
    this.editor = form;
    this.text.replaceWith(form);
    this.editButton.hidden = true;
    input.focus();
    input.select();
    cancel.addEventListener("click", () => this.endEdit());
    form.addEventListener("keydown", (event) => {
      if (event.key !== "Escape") return;
      event.preventDefault();
      event.stopPropagation(); // leaves the edit, not the tray
      this.endEdit();
    });
    form.addEventListener("submit", async (event) => {
      event.preventDefault();
      const text = input.value.trim();
      if (!text) return;
      if (text === this.objective.text) {
        this.endEdit();
        return;
      }
      try {
        const saved = await api(this.path(), { method: "PATCH", body: JSON.stringify({ text }) });
        this.update(saved);
      } catch (error) {
        renderProblem(problem, error, "The objective was not saved:");
        input.focus();
        return;
      }
      this.endEdit();
      this.panel.announce("Objective saved.");
    });
  }

  endEdit() {
    if (!this.editor) return;
    this.editor.replaceWith(this.text);
    this.editor = null;
    this.editButton.hidden = false;
    this.editButton.focus();
  }

  async remove() {
    this.deleteButton.disabled = true;
    this.problem.replaceChildren();
    try {
      await api(this.path(), { method: "DELETE" });
    } catch (error) {
      this.deleteButton.disabled = false;
      renderProblem(this.problem, error, "The objective was not deleted:");
      return;
    }
    this.panel.forget(this);
  }
}

/** The tray's "Objectives" section; hidden while there is no conversation. */
export class ObjectivesPanel {
  constructor({ announce = () => {} } = {}) {
    this.announce = announce;
    this.conversationId = null;
    this.items = new Map();
    this.version = 0; // bumped by every refresh, so an older thread read never wins
    const collapsed = !remembered(KEY_OPEN);
    this.count = el("span", { class: "chat-objectives-count muted" });
    this.toggle = el("button", { type: "button", class: "chat-objectives-toggle", "aria-expanded": collapsed ? "false" : "true",
      "aria-controls": "chat-objectives-body" },
      el("span", { class: "chat-objectives-marker", "aria-hidden": "true" }), "Objectives", this.count);
    // The current objective in a line, while the list is collapsed.
    this.current = el("span", { class: "chat-objectives-current muted", dataset: { testid: "chat-objectives-current" } });
    this.status = el("div", { "aria-live": "polite" });
    this.empty = el("p", { class: "status empty" },
      "No objectives yet: the assistant notes one for each new question, or add your own.");
    this.list = el("ul", { class: "chat-objective-list" });
    this.addInput = el("input", { type: "text", id: "chat-objective-new", name: "objective", maxlength: String(TEXT_CHARS),
      required: true, placeholder: "What should be found?" });
    this.addProblem = el("div", { "aria-live": "polite" });
    this.addForm = el("form", { class: "chat-objective-add" },
      el("label", { for: "chat-objective-new" }, "Add objective"), this.addInput,
      el("button", { type: "submit", class: "secondary" }, "Add"), this.addProblem);
    this.body = el("div", { id: "chat-objectives-body", class: "chat-objectives-body", hidden: collapsed },
      this.status, this.empty, this.list, this.addForm);
    this.node = el("section", { class: "chat-objectives", "aria-label": "Objectives", dataset: { testid: "chat-objectives" },
      hidden: true }, el("h3", {}, this.toggle, this.current), this.body);
    this.toggle.addEventListener("click", () => this.setCollapsed(!this.body.hidden));
    this.addForm.addEventListener("submit", (event) => {
      event.preventDefault();
      this.add();
    });
  }

  setCollapsed(collapsed) {
    this.body.hidden = collapsed;
    this.current.hidden = !collapsed;
    this.toggle.setAttribute("aria-expanded", collapsed ? "false" : "true");
    remember(KEY_OPEN, collapsed ? null : "1");
  }

  /** Follows the tray's conversation. None hides the panel; a new one (a turn's first event)
   * shows it with its first answer: the server stores the conversation while that turn runs,
   * so its thread cannot be read yet. */
  follow(conversationId) {
    if (conversationId !== this.conversationId) this.reset(conversationId);
  }

  reset(conversationId) {
    this.version += 1;
    this.conversationId = conversationId;
    this.node.hidden = true;
    this.status.replaceChildren();
    this.addProblem.replaceChildren();
    this.addInput.value = "";
    this.render([]);
  }

  /** Reads the objectives of ``conversationId`` from its thread (a stored conversation opened). */
  async load(conversationId) {
    if (conversationId !== this.conversationId) this.reset(conversationId);
    this.node.hidden = false;
    const version = (this.version += 1);
    let thread;
    try {
      thread = await api(`/api/v1/chat/conversations/${encodeURIComponent(conversationId)}/thread`);
    } catch (error) {
      if (version !== this.version) return;
      renderProblem(this.status, error, "The objectives could not be read:");
      this.empty.hidden = true;
      return;
    }
    if (version !== this.version) return; // the conversation changed, or an answer came since
    this.status.replaceChildren();
    this.render(thread.objectives ?? []);
  }

  /** An answer completed: its payload's continuity holds the objectives after the turn. */
  showAnswer(payload) {
    if (!this.conversationId || (payload?.conversation_id && payload.conversation_id !== this.conversationId)) return;
    this.node.hidden = false; // the conversation is stored by now
    const objectives = payload?.continuity?.objectives;
    if (!Array.isArray(objectives)) return; // an older answer or a command: nothing new
    this.version += 1;
    this.status.replaceChildren();
    this.render(objectives);
  }

  render(objectives) {
    const next = new Map();
    for (const objective of objectives) {
      const item = this.items.get(objective.id);
      if (item) item.update(objective);
      next.set(objective.id, item ?? new ObjectiveItem(this, objective));
    }
    for (const [id, item] of this.items) if (!next.has(id)) item.node.remove();
    this.items = next;
    // Only the nodes out of place move: a node being edited keeps the focus.
    [...next.values()].forEach((item, index) => {
      if (this.list.children[index] !== item.node) this.list.insertBefore(item.node, this.list.children[index] ?? null);
    });
    this.showCount();
  }

  showCount() {
    this.empty.hidden = this.items.size > 0;
    this.count.textContent = this.items.size ? ` (${this.items.size})` : "";
    const objectives = [...this.items.values()].map((item) => item.objective);
    const current = objectives.findLast((o) => !["achieved", "closed"].includes(o.status)) ?? objectives.at(-1);
    this.current.textContent = current ? `${current.text} · ${STATUS_WORDS[current.status] ?? current.status}` : "";
    this.current.title = this.current.textContent;
    this.current.hidden = !this.body.hidden;
  }

  async add() {
    const text = this.addInput.value.trim();
    if (!text || !this.conversationId) return;
    this.addProblem.replaceChildren();
    let objective;
    try {
      objective = await api(objectivesPath(this.conversationId), { method: "POST", body: JSON.stringify({ text }) });
    } catch (error) {
      renderProblem(this.addProblem, error, "The objective was not added:");
      return; // what the user typed stays in the input
    }
    this.addInput.value = "";
    this.render([...[...this.items.values()].map((item) => item.objective), objective]);
    this.announce("Objective added.");
  }

  /** ``item`` was deleted: it leaves the list, and the focus goes to its neighbour. */
  forget(item) {
    const neighbours = [...this.items.values()];
    const index = neighbours.indexOf(item);
    const rest = neighbours.filter((other) => other !== item);
    this.render(rest.map((other) => other.objective));
    const neighbour = rest[index] ?? rest[index - 1];
    if (neighbour) neighbour.select.focus();
    else this.addInput.focus();
    this.announce("Objective deleted.");
  }
}
