// The one SSE reader of the web UI (chat turns, the stream guide): fetch + ReadableStream,
// because EventSource cannot POST a body. Every event the server sends is one JSON object
// in ``data:`` lines (scholarstream.sse encodes them); ``id:`` lines carry the replay id.

/** Parses SSE text into {id, event} blocks; keeps the unfinished tail for the next chunk. */
export class SseParser {
  constructor() {
    this.buffer = "";
  }

  feed(chunk) {
    this.buffer += chunk.replace(/\r\n?/g, "\n");
    const events = [];
    let end;
    while ((end = this.buffer.indexOf("\n\n")) !== -1) {
      const block = this.buffer.slice(0, end);
      this.buffer = this.buffer.slice(end + 2);
      const event = parseBlock(block);
      if (event) events.push(event);
    }
    return events;
  }
}

function parseBlock(block) {
  let id = null;
  const data = [];
  for (const line of block.split("\n")) {
    if (line === "" || line.startsWith(":")) continue; // comments: keep-alive pings
    const colon = line.indexOf(":");
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? "" : line.slice(colon + 1);
    if (value.startsWith(" ")) value = value.slice(1);
    if (field === "id") id = value;
    else if (field === "data") data.push(value);
  }
  if (data.length === 0) return null;
  try {
    return { id, event: JSON.parse(data.join("\n")) };
  } catch {
    return null; // not ours (a proxy's note): skip it rather than break the stream
  }
}

/**
 * The {id, event} blocks of an event-stream response, in order. Leaving the loop early
 * (on a terminal event) cancels the response's body; a dropped connection throws.
 */
export async function* sseEvents(response) {
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  const parser = new SseParser();
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      yield* parser.feed(value);
    }
  } finally {
    reader.cancel().catch(() => {});
  }
}
