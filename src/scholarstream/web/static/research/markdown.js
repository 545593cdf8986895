// Model output (a model's report, the synthesis) as safe DOM. Model text is never trusted
// HTML: nothing here parses HTML, every piece of text becomes a text node, and a link is
// made only for an http(s) address (safeUrl). Understood: ATX headings, paragraphs,
// bulleted and numbered lists (nested by indentation), block quotes, fenced and indented
// code, horizontal rules, pipe tables, and inline **bold**, *italic*, `code` and
// [links](https://...). Anything else stays as the characters it is.

import { el, safeUrl } from "/static/app/records.js";

const FENCE = /^\s{0,3}(`{3,}|~{3,})(.*)$/;
const HEADING = /^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$/;
const RULE = /^\s{0,3}([-*_])(\s*\1){2,}\s*$/;
const QUOTE = /^\s{0,3}>\s?(.*)$/;
const ITEM = /^(\s*)([-*+•]|\d{1,9}[.)])\s+(.*)$/;
const TABLE_SEPARATOR = /^\s*\|?\s*:?-{2,}:?\s*(\|\s*:?-{2,}:?\s*)*\|?\s*$/;
const INLINE = /(`+)([\s\S]*?[^`])\1(?!`)|\*\*(?=\S)([\s\S]+?)(?<=\S)\*\*|__(?=\S)([\s\S]+?)(?<=\S)__|\*(?=[^\s*])([\s\S]+?)(?<=[^\s*])\*|\[([^\]\n]+)\]\(([^)\s]+)\)|(https?:\/\/[^\s<>()]+[^\s<>().,;:!?'"])/g;

/** Inline markup of one run of text, as nodes. */
export function inline(text) {
  const nodes = [];
  let last = 0;
  for (const match of text.matchAll(INLINE)) {
    if (match.index > last) nodes.push(text.slice(last, match.index));
    const [whole, ticks, code, bold, boldUnderscore, italic, linkText, linkUrl, bareUrl] = match;
    if (ticks) nodes.push(el("code", {}, code.trim() || code));
    else if (bold || boldUnderscore) nodes.push(el("strong", {}, inline(bold || boldUnderscore)));
    else if (italic) nodes.push(el("em", {}, inline(italic)));
    else if (linkText) nodes.push(link(linkUrl, inline(linkText), whole));
    else if (bareUrl) nodes.push(link(bareUrl, [bareUrl], bareUrl));
    last = match.index + whole.length;
  }
  if (last < text.length) nodes.push(text.slice(last));
  return nodes;
}

function link(url, children, fallback) {
  const href = safeUrl(url);
  if (!href) return document.createTextNode(fallback);
  return el("a", { href, target: "_blank", rel: "noopener noreferrer nofollow" }, children);
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
      el("tbody", {}, rows.map((row) => {
        const values = cells(row);
        return el("tr", {}, head.map((_, index) => el("td", {}, inline(values[index] ?? ""))));
      }))));
}

/** Lists from consecutive item lines; a deeper indentation opens a nested list. */
function list(lines) {
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
      if (tag === "ol" && Number.parseInt(item[2], 10) > 1) node.setAttribute("start", Number.parseInt(item[2], 10));
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
    lastItem = el("li", {}, inline(item[3]));
    top.node.append(lastItem);
  }
  return root.children;
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
      const language = fence[2].trim().split(/\s+/)[0];
      out.push(el("pre", {}, el("code", language ? { "data-language": language } : {}, body.join("\n"))));
      continue;
    }
    if (!line.trim()) {
      flush();
      index += 1;
      continue;
    }
    const heading = HEADING.exec(line);
    if (heading) {
      flush();
      // The page has its own h1 and h2: the model's headings start at h3.
      const level = Math.min(heading[1].length + 2, 6);
      out.push(el(`h${level}`, { class: "md-heading" }, inline(heading[2])));
      index += 1;
      continue;
    }
    if (RULE.test(line) && !paragraph.length) {
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
    if (ITEM.exec(line) && !paragraph.length) {
      const items = [];
      while (index < lines.length && lines[index].trim()
             && (ITEM.test(lines[index]) || /^\s{2,}\S/.test(lines[index]))) {
        items.push(lines[index++]);
      }
      out.push(...list(items));
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
