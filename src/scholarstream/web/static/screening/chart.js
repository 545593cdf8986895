// The progress chart: includes found against records screened, as an SVG line drawn from the
// API's series (``progress.series``). The horizontal axis spans the records screened so far
// (at least LEAST_SPAN, never more than the project has), so 50 screened of 3,000 fill the
// chart instead of its left edge; the legend under it says how many records the project has
// and how many are left.

const SVG = "http://www.w3.org/2000/svg";
const W = 300;
const H = 164;
const PAD = { left: 34, right: 10, top: 10, bottom: 44 };
const LEAST_SPAN = 10;

const count = (n) => n.toLocaleString("en-US");

function node(tag, attrs = {}, text = null) {
  const element = document.createElementNS(SVG, tag);
  for (const [name, value] of Object.entries(attrs)) element.setAttribute(name, String(value));
  if (text !== null) element.textContent = text;
  return element;
}

/** How many records the horizontal axis spans: those screened, at least LEAST_SPAN (fewer
 * when the project has fewer records). */
export function chartSpan(progress) {
  return Math.max(1, Math.min(progress.total, Math.max(progress.screened, LEAST_SPAN)));
}

/** The legend: how many records were screened of how many, and how many are left. */
export function chartLegend(progress) {
  const left = progress.unscreened === 0 ? "none left" : `${count(progress.unscreened)} left`;
  return `${count(progress.screened)} of ${count(progress.total)} records screened · ${left}`;
}

/** Draws ``progress`` (the API's Progress) into ``container``. */
export function renderProgressChart(container, progress) {
  const span = chartSpan(progress);
  const series = progress.series || [];
  const top = Math.max(1, ...series.map((p) => p.included));
  const x = (screened) => PAD.left + (screened / span) * (W - PAD.left - PAD.right);
  const y = (included) => H - PAD.bottom - (included / top) * (H - PAD.top - PAD.bottom);
  const legend = chartLegend(progress);
  const svg = node("svg", {
    viewBox: `0 0 ${W} ${H}`,
    width: "100%",
    role: "img",
    "aria-label": `Includes found against records screened: ${count(progress.included)} included so far. ${legend}.`,
    class: "progress-chart",
    "data-span": span,
  });
  const axisY = H - PAD.bottom;
  svg.append(
    node("line", { x1: PAD.left, y1: axisY, x2: W - PAD.right, y2: axisY, class: "axis" }),
    node("line", { x1: PAD.left, y1: PAD.top, x2: PAD.left, y2: axisY, class: "axis" }),
    node("text", { x: PAD.left, y: axisY + 14, class: "tick" }, "0"),
    node("text", { x: W - PAD.right, y: axisY + 14, class: "tick", "text-anchor": "end", "data-role": "span" }, count(span)),
    node("text", { x: (W + PAD.left) / 2, y: axisY + 14, class: "label", "text-anchor": "middle" }, "records screened"),
    node("text", { x: (W + PAD.left) / 2, y: H - 8, class: "legend", "text-anchor": "middle", "data-role": "legend" }, legend),
    node("text", { x: PAD.left - 6, y: PAD.top + 8, class: "tick", "text-anchor": "end" }, String(top)),
    node("text", { x: PAD.left - 6, y: axisY, class: "tick", "text-anchor": "end" }, "0"),
    node("text", {
      x: 12, y: (axisY + PAD.top) / 2, class: "label", "text-anchor": "middle",
      transform: `rotate(-90 12 ${(axisY + PAD.top) / 2})`,
    }, "included"),
  );
  if (series.length > 1) {
    const points = series.map((p) => `${x(p.screened).toFixed(1)},${y(p.included).toFixed(1)}`).join(" ");
    svg.append(node("polyline", { points, class: "found", "data-points": String(series.length) }));
    const last = series[series.length - 1];
    svg.append(node("circle", { cx: x(last.screened).toFixed(1), cy: y(last.included).toFixed(1), r: 3, class: "found-end" }));
  }
  container.replaceChildren(svg);
}
