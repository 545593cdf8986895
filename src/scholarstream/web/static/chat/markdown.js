// The assistant's text as safe DOM: paragraphs, line breaks, "- " / "1. " lists and
// **bold**, built from text nodes only. Model text is never trusted HTML, so nothing here
// parses HTML; anything else that looks like markdown stays as the characters it is.

import { el } from "/static/app/records.js";

const BULLET = /^\s*[-*•]\s+(.*)$/;
const NUMBERED = /^\s*\d+[.)]\s+(.*)$/;

/** Text with **bold** runs as <strong>; everything else as text nodes. */
function inline(text) {
  const parts = [];
  const pattern = /\*\*(?=\S)(.+?)(?<=\S)\*\*/g;
  let last = 0;
  for (const match of text.matchAll(pattern)) {
    if (match.index > last) parts.push(text.slice(last, match.index));
    parts.push(el("strong", {}, match[1]));
    last = match.index + match[0].length;
  }
  if (last < text.length) parts.push(text.slice(last));
  return parts;
}

function lines(textLines) {
  const out = [];
  textLines.forEach((line, index) => {
    if (index > 0) out.push(el("br"));
    out.push(...inline(line));
  });
  return out;
}

/** One block (text between blank lines) as paragraphs and lists, in order. */
function block(text) {
  const nodes = [];
  let paragraph = [];
  let list = null;
  const flushParagraph = () => {
    if (paragraph.length) nodes.push(el("p", {}, lines(paragraph)));
    paragraph = [];
  };
  for (const line of text.split("\n")) {
    const bullet = BULLET.exec(line);
    const numbered = bullet ? null : NUMBERED.exec(line);
    const item = bullet || numbered;
    if (item) {
      flushParagraph();
      const tag = bullet ? "ul" : "ol";
      if (!list || list.tagName.toLowerCase() !== tag) {
        list = el(tag);
        nodes.push(list);
      }
      list.append(el("li", {}, inline(item[1])));
    } else if (list && /^\s{2,}\S/.test(line)) {
      list.lastChild.append(el("br"), ...inline(line.trim())); // a wrapped list item
    } else {
      list = null;
      paragraph.push(line);
    }
  }
  flushParagraph();
  return nodes;
}

/** A DocumentFragment for ``text``. */
export function renderText(text) {
  const fragment = document.createDocumentFragment();
  const normalized = String(text ?? "").replace(/\r\n?/g, "\n").trim();
  if (!normalized) return fragment;
  for (const part of normalized.split(/\n\s*\n/)) fragment.append(...block(part));
  return fragment;
}
