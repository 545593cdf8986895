// The progress chart: includes found against records screened, as an SVG line drawn from the
// API's series (``progress.series``), with the total of records as the horizontal axis.

const SVG = "http://www.w3.org/2000/svg";
const W = 300;
const H = 150;
const PAD = { left: 34, right: 10, top: 10, bottom: 30 };

function node(tag, attrs = {}, text = null) {
  const element = document.createElementNS(SVG, tag);
  for (const [name, value] of Object.entries(attrs)) element.setAttribute(name, String(value));
  if (text !== null) element.textContent = text;
  return element;
}

/** Draws ``progress`` (the API's Progress) into ``container``. */
export function renderProgressChart(container, progress) {
  const total = Math.max(progress.total, 1);
  const series = progress.series || [];
  const top = Math.max(1, ...series.map((p) => p.included));
  const x = (screened) => PAD.left + (screened / total) * (W - PAD.left - PAD.right);
  const y = (included) => H - PAD.bottom - (included / top) * (H - PAD.top - PAD.bottom);
  const svg = node("svg", {
    viewBox: `0 0 ${W} ${H}`,
    width: "100%",
    role: "img",
    "aria-label": `Includes found against records screened: ${progress.included} included in ${progress.screened} of ${progress.total} records screened.`,
    class: "progress-chart",
  });
  svg.append(
    node("line", { x1: PAD.left, y1: H - PAD.bottom, x2: W - PAD.right, y2: H - PAD.bottom, class: "axis" }),
    node("line", { x1: PAD.left, y1: PAD.top, x2: PAD.left, y2: H - PAD.bottom, class: "axis" }),
    node("text", { x: PAD.left, y: H - 8, class: "tick" }, "0"),
    node("text", { x: W - PAD.right, y: H - 8, class: "tick", "text-anchor": "end" }, String(progress.total)),
    node("text", { x: (W + PAD.left) / 2, y: H - 8, class: "label", "text-anchor": "middle" }, "records screened"),
    node("text", { x: PAD.left - 6, y: PAD.top + 8, class: "tick", "text-anchor": "end" }, String(top)),
    node("text", { x: PAD.left - 6, y: H - PAD.bottom, class: "tick", "text-anchor": "end" }, "0"),
    node("text", {
      x: 12, y: (H - PAD.bottom + PAD.top) / 2, class: "label", "text-anchor": "middle",
      transform: `rotate(-90 12 ${(H - PAD.bottom + PAD.top) / 2})`,
    }, "included"),
  );
  if (series.length > 1) {
    const points = series.map((p) => `${x(p.screened).toFixed(1)},${y(p.included).toFixed(1)}`).join(" ");
    svg.append(node("polyline", { points, class: "found", "data-points": String(series.length) }));
    const last = series[series.length - 1];
    svg.append(node("circle", { cx: x(last.screened), cy: y(last.included), r: 3, class: "found-end" }));
  }
  container.replaceChildren(svg);
}
