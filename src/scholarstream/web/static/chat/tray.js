// The chat tray (seed 002): on every page, it sends what the page shows (page-context.js),
// streams the answer (stream.js), shows tool progress, payload cards (payload-cards.js),
// suggestion chips and actions, and lists past conversations; objectives.js shows the
// conversation's objectives above the log.
// The open conversation (and a turn still running) is remembered in sessionStorage, so the
// tray continues it after a navigation or a reload.
// Model text and tool data only reach the page as text nodes (shared/markdown.js, shared/dom.js el()).

import { AnswerView, dateTime, showToolOutcome, toolInputLine, toolLabel } from "/static/app/chat/answer-view.js";
import { ObjectivesPanel } from "/static/app/chat/objectives.js";
import {
  acceptPayload,
  canAccept,
  collectContext,
  currentPage,
  hasClientAction,
  registerClientAction,
  runClientAction,
} from "/static/app/chat/page-context.js";
import { refreshAcceptButtons, renderPayload } from "/static/app/chat/payload-cards.js";
import { ChatTurn, terminalFromMessage } from "/static/app/chat/stream.js";
import { api, ApiError } from "/static/app/shared/api.js";
import { codeLabel, el, renderProblem } from "/static/app/shared/dom.js";
import { renderMarkdown } from "/static/app/shared/markdown.js";

const KEY_CONVERSATION = "scholarstream.chat.conversation";
const KEY_OPEN = "scholarstream.chat.open";
const KEY_TURN = "scholarstream.chat.turn";
const KEY_PENDING = "scholarstream.chat.pending-accept";

const tray = document.getElementById("chat-tray");
const toggle = document.querySelector('[data-testid="chat-toggle"]');

const store = {
  get(key) {
    try { return sessionStorage.getItem(key); } catch { return null; }
  },
  set(key, value) {
    try {
      if (value === null || value === undefined) sessionStorage.removeItem(key);
      else sessionStorage.setItem(key, value);
    } catch {
      // Storage refused (private mode quota): the tray still works for this page.
    }
  },
};

// --- navigation: the client actions every page offers (chat/pages/navigation.py) --------
// Registered here, before the page's own module runs, so a page may replace any of them.

function go(path, params = {}) {
  const query = new URLSearchParams(
    Object.entries(params).filter(([, v]) => v !== null && v !== undefined && v !== "").map(([k, v]) => [k, String(v)]));
  const search = query.toString();
  window.location.assign(search ? `${path}?${search}` : path);
  return "Opening…";
}

/** Applies a payload on the page ``path``: here if this is that page, else after going there. */
function acceptOn(page, path, type, data) {
  if (currentPage() === page && canAccept(type)) return acceptPayload(type, data);
  store.set(KEY_PENDING, JSON.stringify({ page, type, data }));
  return go(path);
}

registerClientAction("open_search_page", (params) => params.question
  ? acceptOn("search", "/search", "query_suggestion",
      { query: String(params.question), target: "search", explanation: "" })
  : go("/search"));
registerClientAction("open_library", (params) => go("/library", { q: params.query }));
registerClientAction("open_trials", (params) => go("/trials", {
  condition: params.condition, intervention: params.intervention, q: params.q, sponsor: params.sponsor,
  phase: params.phase, status: params.status, date_from: params.date_from, date_to: params.date_to,
}));
registerClientAction("open_settings", () => go("/settings"));

/** A payload accepted on another page, waiting for this one (see acceptOn). */
async function applyPendingAccept(tray) {
  const pending = JSON.parse(store.get(KEY_PENDING) || "null");
  if (!pending || pending.page !== currentPage()) return;
  store.set(KEY_PENDING, null);
  if (!canAccept(pending.type)) return;
  try {
    const confirmation = await acceptPayload(pending.type, pending.data);
    if (typeof confirmation === "string" && confirmation) tray.announce(confirmation);
  } catch (error) {
    renderProblem(tray.formProblem, error, "The suggestion could not be applied here:");
  }
}

// --- the tray ------------------------------------------------------------------------------

class ChatTray {
  constructor(root) {
    this.root = root;
    this.log = root.querySelector('[data-testid="chat-log"]');
    this.empty = root.querySelector('[data-role="empty"]');
    this.form = root.querySelector('[data-role="form"]');
    this.input = root.querySelector("#chat-input");
    this.sendButton = root.querySelector('[data-action="send"]');
    this.stopButton = root.querySelector('[data-action="stop"]');
    this.formProblem = root.querySelector('[data-role="form-problem"]');
    this.help = root.querySelector('[data-role="help"]');
    this.title = root.querySelector('[data-role="conversation-title"]');
    this.announcer = root.querySelector('[data-role="announce"]');
    this.listButton = root.querySelector('[data-action="conversations"]');
    this.listPanel = root.querySelector('[data-testid="chat-conversations"]');
    this.list = root.querySelector('[data-role="conversation-list"]');
    this.listStatus = root.querySelector('[data-role="conversations-status"]');
    this.conversationId = store.get(KEY_CONVERSATION);
    this.turn = null;
    this.config = null;
    this.objectives = new ObjectivesPanel({ announce: (text) => this.announce(text) });
    this.help.before(this.objectives.node);
    this.bind();
  }

  bind() {
    toggle?.addEventListener("click", () => (this.isOpen() ? this.close() : this.open()));
    this.root.querySelector('[data-action="close"]').addEventListener("click", () => this.close());
    this.root.querySelector('[data-action="new-conversation"]').addEventListener("click", () => this.newConversation());
    this.listButton.addEventListener("click", () => this.toggleList());
    this.stopButton.addEventListener("click", () => this.stop());
    this.form.addEventListener("submit", (event) => {
      event.preventDefault();
      this.send(this.input.value);
    });
    this.input.addEventListener("keydown", (event) => {
      if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
        event.preventDefault();
        this.send(this.input.value);
      }
    });
    this.root.addEventListener("keydown", (event) => {
      if (event.key !== "Escape") return;
      // Escape first leaves an inline rename, then closes the list, then the tray.
      if (event.target.closest?.('[data-role="rename"]')) return;
      event.preventDefault();
      if (!this.listPanel.hidden) {
        this.toggleList(false);
        this.listButton.focus();
      } else {
        this.close();
      }
    });
    document.addEventListener("keydown", (event) => {
      if (event.altKey && event.shiftKey && event.code === "KeyA") {
        event.preventDefault();
        if (this.isOpen()) this.close();
        else this.open();
      }
    });
  }

  // --- open / close ----------------------------------------------------------------------

  isOpen() {
    return !this.root.hidden;
  }

  open({ focus = true } = {}) {
    this.root.hidden = false;
    toggle?.setAttribute("aria-expanded", "true");
    store.set(KEY_OPEN, "1");
    refreshAcceptButtons(this.root);
    this.loadConfig();
    this.scrollToEnd();
    if (focus) this.input.focus();
  }

  close() {
    const hadFocus = this.root.contains(document.activeElement);
    this.root.hidden = true;
    toggle?.setAttribute("aria-expanded", "false");
    store.set(KEY_OPEN, null);
    if (hadFocus) toggle?.focus();
  }

  announce(text) {
    this.announcer.textContent = text;
  }

  scrollToEnd() {
    this.log.scrollTop = this.log.scrollHeight;
    requestAnimationFrame(() => { this.log.scrollTop = this.log.scrollHeight; });
  }

  // --- the help line: tools, commands, offline mode ----------------------------------------

  async loadConfig() {
    const context = collectContext();
    const key = `${context.current_page}|${context.active_tab ?? ""}`;
    if (this.config?.key === key) return;
    this.config = { key, pending: true };
    const params = new URLSearchParams({ page: context.current_page });
    if (context.active_tab) params.set("tab", context.active_tab);
    let config;
    try {
      config = await api(`/api/v1/chat/config?${params}`);
    } catch (error) {
      this.config = null;
      renderProblem(this.help, error, "The assistant is not available here.");
      return;
    }
    this.config = { key, ...config };
    this.renderHelp(config);
  }

  renderHelp(config) {
    const commands = config.commands ?? [];
    const chips = commands.length
      ? el("div", { class: "chat-chips", role: "group", "aria-label": "Commands" },
          commands.map((command) => {
            const chip = el("button", { type: "button", class: "chip", title: command.description,
              dataset: { command: command.command } }, command.usage ?? `/${command.command}`);
            chip.addEventListener("click", () => this.draft(`/${command.command} `));
            return chip;
          }))
      : null;
    if (config.offline) {
      // One line: what works without a model, the commands on demand, where to set one up.
      this.help.replaceChildren(el("div", { class: "chat-offline", dataset: { testid: "chat-offline" } },
        el("p", {}, el("strong", {}, "No model: "), "your questions are searched in your library and the sources, not answered. ",
          el("a", { href: "/settings" }, "Set up a model")),
        commands.length ? el("details", { class: "chat-commands" }, el("summary", {}, "Commands"), chips) : null));
      return;
    }
    const tools = (config.tools ?? []).map((t) => t.name);
    this.help.replaceChildren(...[
      tools.length ? el("p", { class: "muted chat-tools-line" }, `Can use: ${tools.map(toolLabel).join(", ")}.`) : null,
      commands.length ? el("details", { class: "chat-commands" }, el("summary", {}, "Commands"), chips) : null,
    ].filter(Boolean));
  }

  // --- messages ------------------------------------------------------------------------------

  userMessage(text) {
    const node = el("article", { class: "chat-msg user", dataset: { role: "user" }, "aria-label": "You" },
      el("p", { class: "chat-role", "aria-hidden": "true" }, "You"),
      el("div", { class: "chat-text" }, renderMarkdown(text)));
    this.empty.hidden = true;
    this.log.append(node);
    return node;
  }

  newAnswer() {
    const answer = new AnswerView(this);
    this.empty.hidden = true;
    this.log.append(answer.node);
    return answer;
  }

  /** Chips (suggested values) and buttons (suggested actions) under the latest answer. */
  suggestions(response) {
    const values = response.suggested_values ?? [];
    const actions = response.suggested_actions ?? [];
    if (values.length === 0 && actions.length === 0) return null;
    const box = el("div", { class: "chat-suggestions", dataset: { testid: "chat-suggestions" } });
    if (values.length) {
      box.append(el("div", { class: "chat-chips", role: "group", "aria-label": "Suggested replies" },
        values.map((value) => {
          const chip = el("button", { type: "button", class: "chip", title: value.value }, value.label);
          // A value ending in a space waits for the rest ("/search "): it goes to the input.
          chip.addEventListener("click", () => (/\s$/.test(value.value) ? this.draft(value.value) : this.send(value.value)));
          return chip;
        })));
    }
    if (actions.length) {
      const outcome = el("div", { class: "chat-action-outcome", role: "status" });
      box.append(el("div", { class: "chat-actions", role: "group", "aria-label": "Suggested actions" },
        actions.map((action) => this.actionButton(action, outcome))), outcome);
    }
    return box;
  }

  actionButton(action, outcome) {
    const client = action.handler === "client";
    const usable = !client || hasClientAction(action.action);
    const button = el("button", { type: "button", class: "secondary chat-action", disabled: !usable,
      title: usable ? null : "This page cannot do that.", dataset: { action: action.action, handler: action.handler } },
      action.label);
    button.addEventListener("click", async () => {
      button.disabled = true;
      outcome.replaceChildren(el("p", { class: "status loading" }, `${action.label}…`));
      try {
        if (client) {
          const result = await runClientAction(action.action, action.params);
          outcome.replaceChildren(el("p", { class: "status done" }, typeof result === "string" && result ? result : "Done."));
        } else {
          const result = await api(`/api/v1/chat/actions/${encodeURIComponent(action.action)}`, {
            method: "POST",
            body: JSON.stringify({ params: action.params ?? {}, context: collectContext() }),
          });
          if (result.ok === false) {
            renderProblem(outcome, { body: { message: result.message } }, `${action.label}:`);
          } else {
            outcome.replaceChildren(el("div", { class: "chat-action-result" },
              renderMarkdown(result.message), result.payload ? renderPayload(result.payload) : null));
          }
        }
      } catch (error) {
        renderProblem(outcome, error, `${action.label}:`);
      } finally {
        button.disabled = false;
      }
    });
    return button;
  }

  /** Puts ``text`` in the input for the user to finish. */
  draft(text) {
    this.input.value = text;
    this.input.focus();
    this.input.setSelectionRange(text.length, text.length);
  }

  clearSuggestions() {
    this.log.querySelectorAll(".chat-suggestions").forEach((node) => node.remove());
  }

  setBusy(busy) {
    this.sendButton.disabled = busy;
    this.stopButton.hidden = !busy;
    this.stopButton.disabled = false;
    this.stopButton.textContent = "Stop";
    this.log.setAttribute("aria-busy", busy ? "true" : "false");
  }

  // --- a turn ----------------------------------------------------------------------------------

  async send(raw) {
    const message = String(raw ?? "").trim();
    if (!message || this.turn) return;
    if (!this.isOpen()) this.open();
    this.formProblem.replaceChildren();
    this.clearSuggestions();
    this.input.value = "";
    const userNode = this.userMessage(message);
    const answer = this.newAnswer();
    answer.setStatus("Sending…");
    this.scrollToEnd();
    const request = { message, context: collectContext() };
    if (this.conversationId) request.conversation_id = this.conversationId;
    this.run(answer, { request }, () => {
      // Refused before it started: the message was not taken; give it back to edit.
      userNode.remove();
      answer.node.remove();
      if (!this.log.querySelector(".chat-msg")) this.empty.hidden = false;
      if (!this.input.value) this.input.value = message;
    });
  }

  /** Runs a turn (new or resumed) into ``answer``. */
  async run(answer, { request = null, resume = null }, onRefused = () => {}) {
    this.setBusy(true);
    const turn = new ChatTurn({
      request,
      resume,
      onEvent: (event) => this.onEvent(turn, answer, event),
      onReconnect: (attempt) => answer.setStatus(`Connection lost; reconnecting (attempt ${attempt})…`),
    });
    this.turn = turn;
    try {
      await turn.done;
    } catch (error) {
      onRefused();
      if (error instanceof ApiError) renderProblem(this.formProblem, error);
      else renderProblem(this.formProblem, error, "The message could not be sent:");
    } finally {
      if (this.turn === turn) {
        this.turn = null;
        store.set(KEY_TURN, null);
        this.setBusy(false);
      }
    }
  }

  onEvent(turn, answer, event) {
    switch (event.type) {
      case "status":
        if (event.conversation_id) this.setConversation(event.conversation_id);
        if (turn.turnId) {
          store.set(KEY_TURN, JSON.stringify({ turn_id: turn.turnId, conversation_id: turn.conversationId }));
        }
        answer.setStatus(event.message);
        break;
      case "text_delta":
        answer.setStatus("");
        answer.appendText(event.text);
        break;
      case "tool_start":
        answer.toolStart(event);
        answer.setStatus("");
        break;
      case "tool_progress":
        answer.toolProgress(event);
        break;
      case "tool_complete":
        answer.toolComplete(event);
        break;
      case "complete":
        if (event.payload?.conversation_id) this.setConversation(event.payload.conversation_id);
        answer.complete(event.payload);
        this.objectives.showAnswer(event.payload);
        this.announce("The assistant answered.");
        this.refreshListIfOpen();
        break;
      case "error":
        if (event.conversation_id) this.setConversation(event.conversation_id);
        answer.fail(event);
        this.announce(event.code === "cancelled" ? "Stopped." : `The answer failed: ${event.message}`);
        this.refreshListIfOpen();
        break;
      default:
        break; // an event type this client does not know yet: ignore it
    }
    this.scrollToEnd();
  }

  async stop() {
    if (!this.turn) return;
    this.stopButton.disabled = true;
    this.stopButton.textContent = "Stopping…";
    await this.turn.stop();
  }

  // --- conversations ----------------------------------------------------------------------------

  setConversation(id, title = null) {
    this.objectives.follow(id);
    if (id !== this.conversationId) {
      this.conversationId = id;
      store.set(KEY_CONVERSATION, id);
    }
    if (title !== null) this.title.textContent = title;
  }

  newConversation() {
    if (this.turn) {
      this.turn.detach();
      this.turn = null;
      store.set(KEY_TURN, null);
      this.setBusy(false);
    }
    this.conversationId = null;
    store.set(KEY_CONVERSATION, null);
    store.set(KEY_TURN, null);
    this.objectives.follow(null);
    this.title.textContent = "";
    this.log.replaceChildren(this.empty);
    this.empty.hidden = false;
    this.formProblem.replaceChildren();
    this.toggleList(false);
    this.input.focus();
  }

  /** Shows a stored conversation; resumes its last turn if it is still running. */
  async openConversation(id, { quiet = false } = {}) {
    let conversation;
    try {
      conversation = await api(`/api/v1/chat/conversations/${encodeURIComponent(id)}`);
    } catch (error) {
      if (quiet) {
        // The remembered conversation is gone (deleted elsewhere): start afresh.
        this.conversationId = null;
        store.set(KEY_CONVERSATION, null);
        this.objectives.follow(null);
        return;
      }
      renderProblem(this.listStatus, error, "The conversation could not be opened.");
      return;
    }
    if (this.turn) {
      this.turn.detach();
      this.turn = null;
      this.setBusy(false);
    }
    this.objectives.load(conversation.id); // fresh from its thread, even when already shown
    this.setConversation(conversation.id, conversation.title);
    const running = this.renderConversation(conversation);
    const remembered = JSON.parse(store.get(KEY_TURN) || "null");
    if (!running) {
      store.set(KEY_TURN, null);
      return;
    }
    const { message, view } = running;
    const turnId = message.turn_id ?? (remembered?.conversation_id === conversation.id ? remembered.turn_id : null);
    if (!turnId) {
      view.setStatus("Still being answered: reopen the conversation in a moment.");
      return;
    }
    // The replay starts from the turn's first event: rebuild the answer from it.
    const answer = new AnswerView(this);
    view.node.replaceWith(answer.node);
    answer.setStatus("Still answering…");
    this.run(answer, { resume: { turn_id: turnId, conversation_id: conversation.id } });
  }

  /** Renders the stored messages; the answer still running, if any, as {message, view}. */
  renderConversation(conversation) {
    let running = null;
    const nodes = [];
    const messages = conversation.messages ?? [];
    const lastAssistant = messages.map((m) => m.role).lastIndexOf("assistant");
    messages.forEach((message, index) => {
      if (message.role === "user") {
        nodes.push(el("article", { class: "chat-msg user", dataset: { role: "user" }, "aria-label": "You" },
          el("p", { class: "chat-role", "aria-hidden": "true" }, "You"),
          el("div", { class: "chat-text" }, renderMarkdown(message.content))));
        return;
      }
      const answer = new AnswerView(this);
      for (const entry of message.response?.tool_history ?? []) {
        // entry.output is what the model read: never shown.
        const item = answer.tool(answer.tools.size, entry.tool_name);
        item.input.textContent = toolInputLine(entry.input);
        item.progress.remove();
        showToolOutcome(item, entry.ok !== false, entry.shown ?? null);
      }
      if (message.status === "running") {
        answer.setText(message.content);
        answer.setStatus("Still answering…");
        running = { message, view: answer };
      } else if (message.status === "complete" && message.response) {
        answer.complete(message.response, { latest: index === lastAssistant });
      } else {
        for (const payload of message.response?.payloads ?? []) answer.addPayload(payload);
        answer.fail(terminalFromMessage(message));
      }
      nodes.push(answer.node);
    });
    this.log.replaceChildren(this.empty, ...nodes);
    this.empty.hidden = nodes.length > 0;
    this.scrollToEnd();
    return running;
  }

  toggleList(show = this.listPanel.hidden) {
    this.listPanel.hidden = !show;
    this.listButton.setAttribute("aria-expanded", show ? "true" : "false");
    if (show) {
      // No stale entries to click while the list loads.
      this.list.replaceChildren();
      this.listStatus.replaceChildren(el("p", { class: "status loading" }, "Loading…"));
      this.loadList();
    }
  }

  refreshListIfOpen() {
    // Not under the user's hands: an inline rename or delete confirmation stays.
    if (!this.listPanel.hidden && !this.list.querySelector('[data-role="rename"], .chat-confirm')) this.loadList();
  }

  async loadList() {
    const generation = (this.listGeneration = (this.listGeneration ?? 0) + 1);
    let conversations;
    try {
      conversations = await api("/api/v1/chat/conversations");
    } catch (error) {
      if (generation === this.listGeneration) {
        renderProblem(this.listStatus, error, "Your conversations could not be listed.");
      }
      return;
    }
    if (generation !== this.listGeneration) return; // a newer load will render
    this.listStatus.replaceChildren();
    if (conversations.length === 0) {
      this.listStatus.replaceChildren(el("p", { class: "status empty" }, "No conversations yet."));
    }
    this.list.replaceChildren(...conversations.map((c) => this.listItem(c)));
  }

  listItem(conversation) {
    const current = conversation.id === this.conversationId;
    const openButton = el("button", { type: "button", class: "link chat-conversation-open",
      "aria-current": current ? "true" : null }, conversation.title || "(untitled)");
    openButton.addEventListener("click", async () => {
      await this.openConversation(conversation.id);
      this.toggleList(false);
      this.input.focus();
    });
    const meta = el("span", { class: "muted chat-conversation-meta" },
      `${conversation.message_count} message${conversation.message_count === 1 ? "" : "s"} · ${codeLabel(conversation.page)} · ${dateTime(conversation.updated_at)}`);
    const rename = el("button", { type: "button", class: "link", "aria-label": `Rename “${conversation.title}”` }, "Rename");
    const remove = el("button", { type: "button", class: "link danger-link", "aria-label": `Delete “${conversation.title}”` }, "Delete");
    const item = el("li", { class: "chat-conversation", dataset: { conversationId: conversation.id } },
      el("div", {}, openButton, current ? el("span", { class: "chat-conversation-current" }, "(open)") : null), meta, el("div", { class: "chat-conversation-tools" }, rename, remove));
    rename.addEventListener("click", () => this.renameForm(item, conversation));
    remove.addEventListener("click", () => this.confirmDelete(item, conversation));
    return item;
  }

  renameForm(item, conversation) {
    const input = el("input", { type: "text", name: "title", value: conversation.title, maxlength: "200",
      required: true, "aria-label": "New title" });
    const problem = el("div", { "aria-live": "polite" });
    const cancel = el("button", { type: "button", class: "secondary" }, "Cancel");
    const form = el("form", { class: "chat-rename", dataset: { role: "rename" } },
      input, el("button", { type: "submit" }, "Save"), cancel, problem);
    const restore = () => {
      form.replaceWith(...saved);
      item.querySelector(".chat-conversation-open")?.focus();
    };
    const saved = [...item.childNodes];
    item.replaceChildren(form);
    input.focus();
    input.select();
    cancel.addEventListener("click", restore);
    form.addEventListener("keydown", (event) => {
      if (event.key === "Escape") {
        event.preventDefault();
        event.stopPropagation();
        restore();
      }
    });
    form.addEventListener("submit", async (event) => {
      event.preventDefault();
      const title = input.value.trim();
      if (!title) return;
      try {
        await api(`/api/v1/chat/conversations/${encodeURIComponent(conversation.id)}`, {
          method: "PATCH",
          body: JSON.stringify({ title }),
        });
      } catch (error) {
        renderProblem(problem, error);
        return;
      }
      if (conversation.id === this.conversationId) this.title.textContent = title;
      await this.loadList();
      this.list.querySelector(`[data-conversation-id="${CSS.escape(conversation.id)}"] .chat-conversation-open`)?.focus();
    });
  }

  confirmDelete(item, conversation) {
    const yes = el("button", { type: "button", class: "danger" }, "Delete");
    const no = el("button", { type: "button", class: "secondary" }, "Keep");
    const problem = el("div", { "aria-live": "polite" });
    const saved = [...item.childNodes];
    const box = el("div", { class: "chat-confirm", role: "group", "aria-label": "Confirm deletion" },
      el("p", {}, `Delete “${conversation.title}” and its messages?`), yes, no, problem);
    item.replaceChildren(box);
    no.focus();
    no.addEventListener("click", () => {
      box.replaceWith(...saved);
      item.querySelector(".chat-conversation-open")?.focus();
    });
    yes.addEventListener("click", async () => {
      try {
        await api(`/api/v1/chat/conversations/${encodeURIComponent(conversation.id)}`, { method: "DELETE" });
      } catch (error) {
        renderProblem(problem, error);
        return;
      }
      if (conversation.id === this.conversationId) this.newConversation();
      this.toggleList(true);
      this.listButton.focus();
    });
  }

  // --- start -----------------------------------------------------------------------------------

  async start() {
    if (store.get(KEY_OPEN)) this.open({ focus: false });
    await applyPendingAccept(this);
    if (this.conversationId) await this.openConversation(this.conversationId, { quiet: true });
  }
}

// Pages register their context and Accept handlers in their own modules, which run after
// this one: start once the document's modules have all run.
function whenModulesRan() {
  return new Promise((resolve) => {
    if (document.readyState === "complete") resolve();
    else {
      document.addEventListener("DOMContentLoaded", () => resolve(), { once: true });
      window.addEventListener("load", () => resolve(), { once: true });
    }
  });
}

if (tray) {
  const chat = new ChatTray(tray);
  whenModulesRan().then(() => chat.start());
}
