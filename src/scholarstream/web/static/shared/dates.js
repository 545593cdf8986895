// Dates in the product's one format: the reader's own date and time (the browser's
// toLocaleString), as the Library, Search, Streams, Research, chat and home pages show them.

/** ``value`` (an ISO date-time) as the reader's date and time; "" when it is not one. */
export function dateTime(value) {
  const parsed = new Date(value ?? "");
  return Number.isNaN(parsed.getTime()) ? "" : parsed.toLocaleString();
}

/** Writes every ``<time datetime>`` under ``root`` in that format (the server renders the
 *  ISO time, which it cannot put in the reader's format). */
export function showTimes(root) {
  for (const time of root.querySelectorAll("time[datetime]")) {
    const shown = dateTime(time.getAttribute("datetime"));
    if (shown) time.textContent = shown;
  }
}
