// One assistant answer in the tray: its streamed text, tool progress, payload cards,
// what it searched (searched-view.js), suggestions and error, fed by events or rebuilt
// from a stored message.
// Model text and tool data only reach the page as text nodes.

import { renderPayload } from "/static/app/chat/payload-cards.js";
import { renderSearched } from "/static/app/chat/searched-view.js";
import { auditSummary, MARK_LEGEND } from "/static/app/shared/citations.js";
import { codeLabel, el, renderProblem } from "/static/app/shared/dom.js";
import { renderMarkdown } from "/static/app/shared/markdown.js";

export function dateTime(value) {
  const date = new Date(value);
  return Number.isNaN(date.getTime()) ? "" : date.toLocaleString();
}

export function toolLabel(name) {
  return codeLabel(String(name || "tool")).replace(/\bpubmed\b/i, "PubMed");
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function toolInputLine(input) {
  if (!input || typeof input !== "object") return "";
  const main = input.query ?? input.question ?? input.identifier ?? input.condition ?? input.terms ?? null;
  if (main) return `“${String(main)}”`;
  // Ids are for the tool, not for people: a UUID is no label.
  const parts = Object.entries(input).filter(([k, v]) => v !== null && v !== "" && typeof v !== "object"
    && !/(^|_)ids?$/.test(k) && !UUID.test(String(v)));
  return parts.slice(0, 3).map(([k, v]) => `${k.replace(/_/g, " ")}: ${v}`).join(", ");
}

/** A tool's line once it ran: what a person reads of the run (the server's words for
 *  people; never what the model read), or only that it is done or failed when the answer
 *  itself says it. */
export function showToolOutcome(item, ok, message) {
  item.node.dataset.state = ok ? "done" : "failed";
  item.message.textContent = ok ? (message || "Done.") : (message ? `Failed: ${message}` : "Failed.");
  item.message.classList.toggle("error", !ok);
  item.message.classList.toggle("muted", ok);
}

/** The DOM of one assistant message, fed by events or by a stored message. */
export class AnswerView {
  constructor(tray) {
    this.tray = tray;
    this.text = "";
    this.shownKeys = new Set();
    this.tools = new Map();
    this.renderPending = false;
    this.statusLine = el("p", { class: "chat-msg-status muted", dataset: { role: "status" } });
    this.toolList = el("ol", { class: "chat-tools", dataset: { testid: "chat-tools" }, hidden: true });
    this.textBox = el("div", { class: "chat-text", dataset: { role: "text" } });
    this.cards = el("div", { class: "chat-cards" });
    this.extras = el("div", { class: "chat-extras" });
    this.node = el("article", { class: "chat-msg assistant", dataset: { role: "assistant", status: "running" },
      "aria-label": "Assistant" },
      el("p", { class: "chat-role", "aria-hidden": "true" }, "Assistant"),
      this.statusLine, this.toolList, this.textBox, this.cards, this.extras);
  }

  setStatus(text) {
    this.statusLine.textContent = text || "";
    this.statusLine.hidden = !text;
  }

  appendText(delta) {
    this.text += delta;
    if (this.renderPending) return;
    this.renderPending = true;
    requestAnimationFrame(() => {
      this.renderPending = false;
      this.textBox.replaceChildren(renderMarkdown(this.text));
      this.tray.scrollToEnd();
    });
  }

  setText(text) {
    this.text = text || "";
    this.textBox.replaceChildren(renderMarkdown(this.text));
  }

  tool(index, name, shownName = null) {
    let item = this.tools.get(index);
    if (!item) {
      const words = shownName || toolLabel(name);
      const progress = el("progress", { max: "1", "aria-label": `${words} progress` });
      const message = el("span", { class: "chat-tool-message muted" });
      const label = el("span", { class: "chat-tool-name" }, words);
      const input = el("span", { class: "chat-tool-input" });
      const node = el("li", { class: "chat-tool", dataset: { tool: name, state: "running", testid: "chat-tool" } },
        label, " ", input, el("div", { class: "chat-tool-progress" }, progress, " ", message));
      item = { node, progress, message, input, name };
      this.tools.set(index, item);
      this.toolList.hidden = false;
      this.toolList.append(node);
    }
    return item;
  }

  toolStart(event) {
    const item = this.tool(event.index, event.tool, event.label);
    item.input.textContent = toolInputLine(event.input);
    item.message.textContent = "Starting…";
    this.tray.announce(`${toolLabel(event.tool)} started.`);
  }

  toolProgress(event) {
    const item = this.tool(event.index, event.tool);
    item.message.textContent = event.message || codeLabel(event.stage || "");
    if (typeof event.progress === "number") item.progress.value = event.progress;
    else item.progress.removeAttribute("value");
  }

  toolComplete(event) {
    const item = this.tool(event.index, event.tool);
    item.progress.remove();
    showToolOutcome(item, event.ok !== false, event.message ?? (event.ok === false ? event.error : null));
    if (event.payload) this.addPayload(event.payload);
    this.tray.announce(`${toolLabel(event.tool)} ${event.ok === false ? "failed" : "finished"}.`);
  }

  addPayload(payload) {
    const key = JSON.stringify([payload.type, payload.data]);
    if (this.shownKeys.has(key)) return;
    this.shownKeys.add(key);
    this.cards.append(renderPayload(payload));
  }

  /** The finished answer: the server's text (markers removed), payloads, suggestions. */
  complete(response, { latest = true } = {}) {
    this.node.dataset.status = "complete";
    this.setStatus("");
    this.toolList.querySelectorAll("progress").forEach((p) => p.remove());
    this.setText(response.message ?? this.text);
    for (const payload of response.payloads ?? []) this.addPayload(payload);
    if (response.custom_payload) this.addPayload(response.custom_payload);
    const warnings = response.warnings ?? [];
    this.extras.replaceChildren(...[
      response.citations
        ? el("p", { class: "chat-citations", dataset: { testid: "chat-citations" } },
          el("strong", {}, auditSummary(response.citations)), ". ", el("span", { class: "muted" }, MARK_LEGEND))
        : null,
      renderSearched(response.continuity),
      warnings.length
        ? el("details", { class: "chat-warnings" }, el("summary", {}, `${warnings.length} note${warnings.length === 1 ? "" : "s"} on this answer`),
            el("ul", {}, warnings.map((w) => el("li", {}, w))))
        : null,
      latest ? this.tray.suggestions(response) : null,
    ].filter(Boolean));
  }

  /** An answer that ended in an error or was stopped: whatever text came stays. */
  fail(event) {
    const cancelled = event.code === "cancelled";
    this.node.dataset.status = cancelled ? "cancelled" : "error";
    this.setStatus("");
    this.toolList.querySelectorAll("progress").forEach((p) => p.remove());
    if (event.partial && event.partial.length > this.text.length) this.setText(event.partial);
    else this.textBox.replaceChildren(renderMarkdown(this.text));
    if (cancelled) {
      this.extras.replaceChildren(el("p", { class: "chat-note muted", dataset: { role: "stopped" } },
        this.text ? "Stopped: the answer above is as far as it got." : "Stopped before the answer started."));
      return;
    }
    const box = el("div");
    renderProblem(box, { body: { message: event.message, hint: event.hint, code: event.code } });
    this.extras.replaceChildren(box);
  }
}
