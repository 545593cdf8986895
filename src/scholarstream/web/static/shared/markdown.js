// Markdown written by models (chat answers, research reports, the stream guide) as safe DOM:
// the one renderer of the web UI. Model text is never trusted HTML: nothing here parses
// HTML, every piece of text becomes a text node, and raw HTML in the text stays the
// characters it is.
//
// Its rules follow the server's (scholarstream.research.core.safe_markdown: markdown-it
// "commonmark" with tables and strikethrough, raw HTML off, then nh3), so an answer looks
// the same in chat, on the research page and on the shared report page:
// - blocks: ATX and setext headings, paragraphs, bulleted and numbered lists (nested by
//   indentation; a list may interrupt a paragraph), block quotes, fenced and indented code,
//   horizontal rules, pipe tables;
// - inline: **strong**, *em* and _em_, ~~strikethrough~~ (<s>), `code`, backslash escapes,
//   [links](url "title"), <autolinks>, character references;
// - links: http, https and mailto get an href; any other address keeps the link text in an
//   <a> without href; javascript:, vbscript:, file: and data: are not links at all (the
//   characters stay as text). Every link has rel="noopener noreferrer nofollow";
// - an image becomes a link to it named by its alt text: the page loads nothing;
// - no bare-URL linking (the server's linkify is off).
// Where the page needs it, the client adds presentation only: headings start at h3 (the
// page has its own h1 and h2), a table is wrapped in a scrolling div.md-table, a line break
// inside a paragraph is kept as <br>, and web links open in a new tab.

import { el } from "/static/app/shared/dom.js";

const FENCE = /^\s{0,3}(`{3,}|~{3,})(.*)$/;
const HEADING = /^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$/;
const SETEXT = /^\s{0,3}(=+|-+)\s*$/;
const RULE = /^\s{0,3}([-*_])(\s*\1){2,}\s*$/;
const QUOTE = /^\s{0,3}>\s?(.*)$/;
const ITEM = /^(\s*)([-*+•]|\d{1,9}[.)])\s+(.*)$/;
const TABLE_SEPARATOR = /^\s*\|?\s*:?-{2,}:?\s*(\|\s*:?-{2,}:?\s*)*\|?\s*$/;
const INLINE = new RegExp([
  /\\([!-/:-@[-`{-~])/.source, // 1: an escaped punctuation character
  /(`+)([\s\S]*?[^`])\2(?!`)/.source, // 2, 3: code
  /<((?:https?|mailto):[^\s<>]*)>/.source, // 4: autolink
  /<([^\s<>@]+@[^\s<>@]+\.[^\s<>@]+)>/.source, // 5: e-mail autolink
  /!\[([^\]\n]*)\]\(([^)\s]*)(?:\s+"([^"\n]*)")?\)/.source, // 6, 7, 8: image
  /\[([^\]\n]+)\]\(([^)\s]*)(?:\s+"([^"\n]*)")?\)/.source, // 9, 10, 11: link
  /\*\*\*(?=\S)([\s\S]+?)(?<=\S)\*\*\*/.source, // 12: strong emphasis
  /\*\*(?=\S)([\s\S]+?)(?<=\S)\*\*|(?<![\p{L}\p{N}_])__(?=\S)([\s\S]+?)(?<=\S)__(?![\p{L}\p{N}_])/.source, // 13, 14
  /~~(?=\S)([\s\S]+?)(?<=\S)~~/.source, // 15: strikethrough
  /\*(?=[^\s*])([\s\S]+?)(?<=[^\s*])\*|(?<![\p{L}\p{N}_])_(?=[^\s_])([\s\S]+?)(?<=[^\s_])_(?![\p{L}\p{N}_])/.source, // 16, 17
  /&(#\d{1,7}|#[xX][\da-fA-F]{1,6}|amp|lt|gt|quot|apos|nbsp|copy|reg|mdash|ndash|hellip);/.source, // 18
].join("|"), "gu");
const NAMED = {
  amp: "&", lt: "<", gt: ">", quot: '"', apos: "'", nbsp: "\u00a0", copy: "©", reg: "®",
  mdash: "—", ndash: "–", hellip: "…",
};
const REL = "noopener noreferrer nofollow";
const WEB_SCHEMES = new Set(["http:", "https:", "mailto:"]);
const BAD_SCHEME = /^(javascript|vbscript|file|data):/i;
const IMAGE_DATA = /^data:image\/(gif|png|jpeg|webp);/i;

function character(reference) {
  if (!reference.startsWith("#")) return NAMED[reference];
  const code = reference[1] === "x" || reference[1] === "X"
    ? Number.parseInt(reference.slice(2), 16)
    : Number.parseInt(reference.slice(1), 10);
  return code > 0 && code <= 0x10ffff && !(code >= 0xd800 && code <= 0xdfff) ? String.fromCodePoint(code) : "\ufffd";
}

/** Inline markup of one run of text, as nodes. */
function inline(text) {
  const nodes = [];
  let last = 0;
  for (const match of text.matchAll(INLINE)) {
    if (match.index > last) nodes.push(text.slice(last, match.index));
    const g = match;
    const whole = g[0];
    if (g[1] !== undefined) nodes.push(g[1]);
    else if (g[2] !== undefined) nodes.push(el("code", {}, g[3].trim() || g[3]));
    else if (g[4] !== undefined) nodes.push(link(g[4], [g[4]], whole));
    else if (g[5] !== undefined) nodes.push(link(`mailto:${g[5]}`, [g[5]], whole));
    else if (g[7] !== undefined) nodes.push(link(g[7], [g[6] || "image"], whole, g[8], { image: true }));
    else if (g[10] !== undefined) nodes.push(link(g[10], inline(g[9]), whole, g[11]));
    else if (g[12] !== undefined) nodes.push(el("em", {}, el("strong", {}, inline(g[12]))));
    else if (g[13] !== undefined || g[14] !== undefined) nodes.push(el("strong", {}, inline(g[13] ?? g[14])));
    else if (g[15] !== undefined) nodes.push(el("s", {}, inline(g[15])));
    else if (g[16] !== undefined || g[17] !== undefined) nodes.push(el("em", {}, inline(g[16] ?? g[17])));
    else if (g[18] !== undefined) nodes.push(character(g[18]));
    last = match.index + whole.length;
  }
  if (last < text.length) nodes.push(text.slice(last));
  return nodes;
}

/** A link as the server's sanitiser leaves it (see the header). */
function link(url, children, source, title = undefined, { image = false } = {}) {
  if (BAD_SCHEME.test(url) && !(image && IMAGE_DATA.test(url))) return document.createTextNode(source);
  let scheme = null;
  try {
    scheme = /^[a-z][a-z\d+.-]*:/i.test(url) ? new URL(url).protocol : null;
  } catch {
    scheme = null;
  }
  const web = scheme !== null && WEB_SCHEMES.has(scheme);
  const attrs = { title: title || null, rel: REL };
  if (web) Object.assign(attrs, { href: url, target: scheme === "mailto:" ? null : "_blank" });
  return el("a", attrs, children);
}

function cells(row) {
  let text = row.trim();
  if (text.startsWith("|")) text = text.slice(1);
  if (text.endsWith("|") && !text.endsWith("\\|")) text = text.slice(0, -1);
  return text.split(/(?<!\\)\|/).map((cell) => cell.trim().replaceAll("\\|", "|"));
}

function table(header, rows) {
  const head = cells(header);
  return el("div", { class: "md-table" },
    el("table", {},
      el("thead", {}, el("tr", {}, head.map((cell) => el("th", { scope: "col" }, inline(cell))))),
      rows.length
        ? el("tbody", {}, rows.map((row) => {
          const values = cells(row);
          return el("tr", {}, head.map((_, index) => el("td", {}, inline(values[index] ?? ""))));
        }))
        : null));
}

/**
 * Lists from consecutive item lines; a deeper indentation opens a nested list. The items of
 * a ``loose`` list (blank lines between them) hold paragraphs.
 */
function list(lines, loose = false) {
  const root = { indent: -1, node: null, children: [] };
  const stack = [root];
  let lastItem = null;
  for (const line of lines) {
    const item = ITEM.exec(line);
    if (!item) {
      // A wrapped line of the previous item.
      if (lastItem) lastItem.append(el("br"), ...inline(line.trim()));
      continue;
    }
    const indent = item[1].replace(/\t/g, "    ").length;
    const tag = /\d/.test(item[2]) ? "ol" : "ul";
    while (stack.length > 1 && indent < stack[stack.length - 1].indent) stack.pop();
    let top = stack[stack.length - 1];
    if (indent > top.indent && (top === root || lastItem)) {
      const node = el(tag);
      if (tag === "ol" && Number.parseInt(item[2], 10) !== 1) node.setAttribute("start", Number.parseInt(item[2], 10));
      if (top === root) root.children.push(node);
      else lastItem.append(node);
      top = { indent, node };
      stack.push(top);
    } else if (top.node.tagName.toLowerCase() !== tag) {
      const node = el(tag);
      const parent = top.node.parentNode;
      if (parent && parent.nodeType === Node.ELEMENT_NODE) parent.append(node);
      else root.children.push(node);
      top.node = node;
    }
    lastItem = el("li", {}, loose && stack.length === 2 ? el("p", {}, inline(item[3])) : inline(item[3]));
    top.node.append(lastItem);
  }
  return root.children;
}

/** What makes items one list: the same bullet, or numbers with the same delimiter. */
function marker(item) {
  return /\d/.test(item[2]) ? item[2].slice(-1) : item[2];
}

/** Can this item line start a list after a paragraph line? (CommonMark: a bullet, or "1.") */
function interrupts(item) {
  return !/\d/.test(item[2]) || Number.parseInt(item[2], 10) === 1;
}

function heading(level, text) {
  // The page has its own h1 and h2: the model's headings start at h3.
  return el(`h${Math.min(level + 2, 6)}`, { class: "md-heading" }, inline(text));
}

function blocks(lines) {
  const out = [];
  let index = 0;
  let paragraph = [];
  const flush = () => {
    if (!paragraph.length) return;
    const children = [];
    paragraph.forEach((line, n) => {
      if (n > 0) children.push(el("br"));
      children.push(...inline(line.trim()));
    });
    out.push(el("p", {}, children));
    paragraph = [];
  };
  while (index < lines.length) {
    const line = lines[index];
    const fence = FENCE.exec(line);
    if (fence) {
      flush();
      const marker = fence[1];
      const body = [];
      index += 1;
      while (index < lines.length && !lines[index].trim().startsWith(marker)) body.push(lines[index++]);
      index += 1; // the closing fence
      out.push(el("pre", {}, el("code", {}, body.join("\n"))));
      continue;
    }
    if (!line.trim()) {
      flush();
      index += 1;
      continue;
    }
    const atx = HEADING.exec(line);
    if (atx) {
      flush();
      out.push(heading(atx[1].length, atx[2]));
      index += 1;
      continue;
    }
    const setext = SETEXT.exec(line);
    if (setext && paragraph.length) {
      out.push(heading(setext[1].startsWith("=") ? 1 : 2, paragraph.map((l) => l.trim()).join(" ")));
      paragraph = [];
      index += 1;
      continue;
    }
    if (RULE.test(line)) {
      flush();
      out.push(el("hr"));
      index += 1;
      continue;
    }
    if (QUOTE.test(line)) {
      flush();
      const quoted = [];
      while (index < lines.length && QUOTE.test(lines[index])) quoted.push(QUOTE.exec(lines[index++])[1]);
      out.push(el("blockquote", {}, blocks(quoted)));
      continue;
    }
    if (line.includes("|") && index + 1 < lines.length && TABLE_SEPARATOR.test(lines[index + 1])
        && lines[index + 1].includes("-")) {
      flush();
      const header = line;
      const rows = [];
      index += 2;
      while (index < lines.length && lines[index].trim() && lines[index].includes("|")) rows.push(lines[index++]);
      out.push(table(header, rows));
      continue;
    }
    const item = ITEM.exec(line);
    if (item && (!paragraph.length || interrupts(item))) {
      flush();
      const items = [];
      let loose = false;
      for (;;) {
        while (index < lines.length && lines[index].trim()
               && (ITEM.test(lines[index]) || /^\s{2,}\S/.test(lines[index]))) {
          items.push(lines[index++]);
        }
        // A blank line, then an item of the same list: one loose list (its items are paragraphs).
        let next = index;
        while (next < lines.length && !lines[next].trim()) next += 1;
        const following = next > index && next < lines.length ? ITEM.exec(lines[next]) : null;
        if (!following || following[1].length > 0 || marker(following) !== marker(item)) break;
        loose = true;
        index = next;
      }
      out.push(...list(items, loose));
      continue;
    }
    if (/^( {4}|\t)/.test(line) && !paragraph.length) {
      const code = [];
      while (index < lines.length && (/^( {4}|\t)/.test(lines[index]) || !lines[index].trim())) {
        code.push(lines[index++].replace(/^( {4}|\t)/, ""));
      }
      while (code.length && !code[code.length - 1].trim()) code.pop();
      out.push(el("pre", {}, el("code", {}, code.join("\n"))));
      continue;
    }
    paragraph.push(line);
    index += 1;
  }
  flush();
  return out;
}

/** A DocumentFragment for the Markdown ``text``. */
export function renderMarkdown(text) {
  const fragment = document.createDocumentFragment();
  const normalized = String(text ?? "").replace(/\r\n?/g, "\n");
  if (!normalized.trim()) return fragment;
  fragment.append(...blocks(normalized.split("\n")));
  return fragment;
}
