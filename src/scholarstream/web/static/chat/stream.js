// The chat's SSE client (seed 002, "Streaming Protocol") over fetch + ReadableStream:
// EventSource cannot POST a body. A turn runs on the server apart from the connection, so
// a dropped connection is not a lost answer: the client reconnects to the turn's replay
// endpoint with Last-Event-ID (a few times, backing off), and after that reads the finished
// answer back from the conversation.

import { errorOf } from "/static/app/shared/api.js";
import { sseEvents } from "/static/app/shared/sse.js";

const TERMINAL = new Set(["complete", "error"]);
const RETRY_DELAYS_MS = [400, 1000, 2500];
const READ_BACK_POLLS = 20;
const READ_BACK_MS = 1000;

const sleep = (ms, signal) => new Promise((resolve) => {
  const timer = setTimeout(resolve, ms);
  signal?.addEventListener("abort", () => { clearTimeout(timer); resolve(); }, { once: true });
});

/**
 * One turn of the conversation. ``onEvent(event)`` gets every event once, in order (a
 * replay after a reconnection skips what was already delivered). ``done`` resolves with
 * the terminal event ({type: "complete"|"error", ...}); it rejects only when the request
 * is refused before any stream starts (an ApiError with the API's message and hint).
 *
 * Start it with ``{message, context, conversation_id}``, or resume a running turn (after
 * a page navigation) with ``{resume: {turn_id, conversation_id}}``.
 */
export class ChatTurn {
  constructor({ request = null, resume = null, onEvent, onReconnect = () => {} }) {
    this.onEvent = onEvent;
    this.onReconnect = onReconnect;
    this.turnId = resume?.turn_id ?? null;
    this.conversationId = resume?.conversation_id ?? request?.conversation_id ?? null;
    // Sequence numbers start at 1: "<turn>:0" replays the whole turn.
    this.lastEventId = this.turnId ? `${this.turnId}:0` : null;
    this.stopRequested = false;
    this.stopped = false;
    this.cancelSent = false;
    this.finished = false;
    this.controller = new AbortController();
    this.done = this._run(request);
  }

  /** Ask the server to stop the turn; the stream then ends with its terminal event. */
  async stop() {
    this.stopRequested = true;
    if (this.turnId && !this.cancelSent) {
      this.cancelSent = true;
      await this._cancelOnServer();
    }
  }

  /** Stop listening without cancelling (the tray is going away; the turn continues). */
  detach() {
    this.controller.abort();
  }

  async _cancelOnServer() {
    try {
      await fetch(`/api/v1/chat/turns/${encodeURIComponent(this.turnId)}/cancel`, {
        method: "POST",
        credentials: "same-origin",
        signal: this.controller.signal,
      });
    } catch {
      // The terminal event (or the read-back) tells what became of the turn.
    }
    // If the server never sends the terminal event, stop waiting after a while.
    setTimeout(() => {
      if (!this.finished) {
        this.stopped = true;
        this.controller.abort();
      }
    }, 5000);
  }

  async _run(request) {
    const signal = this.controller.signal;
    let terminal = null;
    if (request) {
      const response = await fetch("/api/v1/chat/messages", {
        method: "POST",
        credentials: "same-origin",
        headers: { "Content-Type": "application/json", Accept: "text/event-stream" },
        body: JSON.stringify(request),
        signal,
      });
      if (!response.ok) throw await errorOf(response);
      terminal = await this._read(response);
    }
    let attempt = 0;
    while (!terminal && !signal.aborted && this.turnId && attempt < RETRY_DELAYS_MS.length) {
      await sleep(RETRY_DELAYS_MS[attempt], signal);
      if (signal.aborted) break;
      attempt += 1;
      this.onReconnect(attempt);
      let response;
      try {
        response = await fetch(`/api/v1/chat/turns/${encodeURIComponent(this.turnId)}/events`, {
          credentials: "same-origin",
          headers: { "Last-Event-ID": this.lastEventId, Accept: "text/event-stream" },
          signal,
        });
      } catch {
        continue;
      }
      if (!response.ok) {
        await response.body?.cancel().catch(() => {});
        if (response.status === 404) break; // the server forgot the turn: read it back
        continue;
      }
      const before = this.lastEventId;
      terminal = await this._read(response);
      if (this.lastEventId !== before) attempt = 0; // it made progress: a fresh budget
    }
    if (!terminal && this.stopped) {
      terminal = { type: "error", code: "cancelled", message: "Stopped.", hint: null };
    }
    if (!terminal && !(signal.aborted && !this.stopRequested)) terminal = await this._readBack();
    this.finished = true;
    if (terminal) this.onEvent(terminal);
    return terminal;
  }

  /** Delivers the response's events; the terminal event, or null if the stream broke. */
  async _read(response) {
    try {
      for await (const { id, event } of sseEvents(response)) {
        if (id) {
          this.lastEventId = id;
          const turn = id.slice(0, id.lastIndexOf(":"));
          if (turn && !this.turnId) this.turnId = turn;
        }
        if (event.type === "status") {
          if (event.turn_id && !this.turnId) this.turnId = event.turn_id;
          if (event.conversation_id) this.conversationId = event.conversation_id;
          // A Stop pressed before the turn had an id.
          if (this.stopRequested && this.turnId && !this.cancelSent) {
            this.cancelSent = true;
            this._cancelOnServer();
          }
        }
        if (event.type === "error" && event.conversation_id) {
          this.conversationId = event.conversation_id;
        }
        if (TERMINAL.has(event.type)) return event;
        this.onEvent(event);
      }
      return null;
    } catch {
      return null; // a dropped connection (or our own abort)
    }
  }

  /** The last resort: the answer as the conversation stored it. */
  async _readBack() {
    if (!this.conversationId) {
      return {
        type: "error",
        code: "connection_lost",
        message: "The connection to the server was lost before the answer started.",
        hint: "Check that the server is running, then send the message again.",
      };
    }
    const url = `/api/v1/chat/conversations/${encodeURIComponent(this.conversationId)}`;
    for (let poll = 0; poll < READ_BACK_POLLS; poll += 1) {
      try {
        const response = await fetch(url, { credentials: "same-origin" });
        if (response.ok) {
          const conversation = await response.json();
          const answer = findAnswer(conversation, this.turnId);
          if (answer && answer.status !== "running") return terminalFromMessage(answer);
        }
      } catch {
        // The server may be restarting: try again.
      }
      await sleep(READ_BACK_MS);
    }
    return {
      type: "error",
      code: "connection_lost",
      message: "The connection to the server was lost and the answer could not be read back.",
      hint: "Reopen the conversation from the list in a moment.",
    };
  }
}

function findAnswer(conversation, turnId) {
  const answers = (conversation.messages || []).filter((m) => m.role === "assistant");
  return answers.find((m) => turnId && m.turn_id === turnId) ?? answers.at(-1) ?? null;
}

/** A stored assistant message as the terminal event its turn ended with. */
export function terminalFromMessage(message) {
  if (message.status === "complete" && message.response) {
    return { type: "complete", payload: message.response, read_back: true };
  }
  return {
    type: "error",
    code: message.status === "cancelled" ? "cancelled" : message.error?.code ?? "error",
    message: message.error?.message ?? (message.status === "cancelled" ? "Stopped." : "The answer failed."),
    hint: message.error?.hint ?? null,
    partial: message.content || "",
    read_back: true,
  };
}
