// The DOM helpers every page uses. Text from outside (records, files, remote APIs, models)
// only ever reaches the page as text nodes, never as HTML: ``el`` makes elements, ``safeUrl``
// lets only web links through, ``renderProblem`` shows the API's error body.

/** An element with attributes and children; strings become text nodes. */
export function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value === null || value === undefined || value === false) continue;
    if (name === "dataset") Object.assign(node.dataset, value);
    else if (name === "text") node.textContent = value;
    else node.setAttribute(name, value === true ? "" : String(value));
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

/** Only web links: a record's own URL may say javascript: or data:. */
export function safeUrl(url) {
  try {
    const parsed = new URL(url);
    return parsed.protocol === "https:" || parsed.protocol === "http:" ? parsed.href : null;
  } catch {
    return null;
  }
}

export function externalLink(url, text) {
  const href = safeUrl(url);
  if (!href) return document.createTextNode(text);
  return el("a", { href, target: "_blank", rel: "noopener noreferrer" }, text);
}

/** "PHASE_2" or "not_yet_recruiting" as words: "Phase 2", "Not yet recruiting". */
export function codeLabel(code) {
  if (!code) return "";
  const text = code.replaceAll("_", " ").toLowerCase();
  return text.charAt(0).toUpperCase() + text.slice(1);
}

/** The error body of the API ({code, message, hint, fields, request_id}) as a visible alert.
 * A field's ``message`` names it for a person ("messages, item 19 › text is required");
 * its ``field`` is the path for programs, not shown. */
export function renderProblem(container, error, lead = "") {
  const body = error?.body;
  const message = body?.message ?? error?.message ?? String(error);
  const box = el("div", { class: "problem", role: "alert", dataset: { code: body?.code ?? "" } },
    el("p", { class: "problem-message" }, lead ? `${lead} ${message}` : message),
    body?.hint ? el("p", { class: "problem-hint" }, body.hint) : null,
    body?.fields?.length
      ? el("ul", { class: "problem-fields" }, body.fields.map((f) => el("li", {}, f.message)))
      : null,
    body?.request_id ? el("p", { class: "problem-id muted" }, `Request id: ${body.request_id}`) : null);
  container.replaceChildren(box);
}

/** A status line (loading, empty, done) in ``container``. */
export function renderStatus(container, text, kind = "info") {
  container.replaceChildren(el("p", { class: `status ${kind}` }, text));
}

/** Does the URL hold a non-empty value for any of ``names``? */
export function hasAny(params, names) {
  return names.some((name) => (params.get(name) || "").trim() !== "");
}

/** A button that toggles (aria-pressed). */
export function toggleButton(label, { pressed = false, attrs = {} } = {}) {
  return el("button", { type: "button", class: "toggle", "aria-pressed": String(pressed), ...attrs }, label);
}

export function setPressed(button, pressed) {
  button.setAttribute("aria-pressed", String(pressed));
}
