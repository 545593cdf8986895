// One turn of the stream guide over SSE (POST /api/v1/streams/creation/{id}/turns): the
// events text_delta and retry while the guide writes, then turn_result or error. fetch +
// ReadableStream because EventSource cannot POST a body.

import { errorOf } from "/static/app/shared/api.js";
import { sseEvents } from "/static/app/shared/sse.js";

const TERMINAL = new Set(["turn_result", "error"]);

/**
 * Sends one turn. ``onEvent`` gets the text_delta and retry events in order; the promise
 * resolves with the terminal event (turn_result or error), or with a synthetic
 * ``connection_lost`` error when the stream ends without one. Input the guide refuses (an
 * unknown field, a value outside an enum, a required field skipped, a closed draft) is an
 * error event too: {code: invalid_input | conflict, message, hint, field}. It rejects with
 * an ApiError (``body``: the API's {code, message, hint}) when the request itself is
 * refused (4xx: a body the API cannot read, an unknown draft), and with a TypeError when
 * the server cannot be reached.
 */
export async function sendTurn(creationId, body, { onEvent = () => {}, signal } = {}) {
  const response = await fetch(`/api/v1/streams/creation/${encodeURIComponent(creationId)}/turns`, {
    method: "POST",
    credentials: "same-origin",
    headers: { "Content-Type": "application/json", Accept: "text/event-stream" },
    body: JSON.stringify(body),
    signal,
  });
  if (!response.ok) throw await errorOf(response);
  try {
    for await (const { event } of sseEvents(response)) {
      if (TERMINAL.has(event.type)) return event;
      onEvent(event);
    }
  } catch {
    // A dropped connection: said below.
  }
  return {
    type: "error",
    code: "connection_lost",
    message: "The connection to the server was lost before the guide finished.",
    hint: "Check that the server is running, then send your answer again.",
  };
}
