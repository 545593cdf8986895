// Text with the review's keywords marked: the API gives character spans (start, end); the
// text only ever reaches the page as text nodes, the marks as <mark> elements around them.

/** ``text`` as nodes, each span of ``spans`` wrapped in a <mark>. */
export function markedText(text, spans = []) {
  const nodes = [];
  let at = 0;
  for (const { start, end } of spans) {
    if (start < at || end <= start) continue;
    if (start > at) nodes.push(document.createTextNode(text.slice(at, start)));
    const mark = document.createElement("mark");
    mark.textContent = text.slice(start, end);
    nodes.push(mark);
    at = end;
  }
  if (at < text.length) nodes.push(document.createTextNode(text.slice(at)));
  return nodes;
}
