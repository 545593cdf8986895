// A report's publication timeline as an accessible inline SVG bar chart (role="img", a
// title and a description, one <title> per bar) with the same numbers as a table: no chart
// library. The buckets come from the report's ``timeline`` (by_year, by_month, undated).

import { el } from "/static/app/shared/dom.js";

const SVG = "http://www.w3.org/2000/svg";
const WIDTH = 640;
const HEIGHT = 220;
const PAD = { top: 16, right: 12, bottom: 42, left: 36 };

function svg(tag, attrs = {}, ...children) {
  const node = document.createElementNS(SVG, tag);
  for (const [name, value] of Object.entries(attrs)) node.setAttribute(name, String(value));
  for (const child of children) node.append(child);
  return node;
}

/** Years when the items span several of them, else months (a finer view of one year). */
export function chooseBuckets(timeline) {
  const years = timeline?.by_year ?? [];
  const months = timeline?.by_month ?? [];
  if (years.length <= 1 && months.length > 1) return { unit: "month", buckets: months };
  return { unit: "year", buckets: years };
}

function chart(buckets, unit, idBase) {
  const max = Math.max(1, ...buckets.map((b) => b.count));
  const plotW = WIDTH - PAD.left - PAD.right;
  const plotH = HEIGHT - PAD.top - PAD.bottom;
  const slot = plotW / buckets.length;
  const barW = Math.max(2, Math.min(48, slot * 0.7));
  const total = buckets.reduce((sum, b) => sum + b.count, 0);
  const first = buckets[0].period;
  const last = buckets[buckets.length - 1].period;
  const peak = buckets.reduce((best, b) => (b.count > best.count ? b : best), buckets[0]);
  const root = svg("svg", {
    class: "timeline-chart",
    viewBox: `0 0 ${WIDTH} ${HEIGHT}`,
    role: "img",
    "aria-labelledby": `${idBase}-title ${idBase}-desc`,
    "data-testid": "timeline-chart",
  });
  const title = svg("title", { id: `${idBase}-title` });
  title.textContent = `New items by publication ${unit}`;
  const desc = svg("desc", { id: `${idBase}-desc` });
  desc.textContent = `${total} dated items from ${first} to ${last}; most in ${peak.period} (${peak.count}). The table below gives every ${unit}.`;
  root.append(title, desc);
  const base = PAD.top + plotH;
  root.append(svg("line", { class: "axis", x1: PAD.left, y1: base, x2: WIDTH - PAD.right, y2: base }));
  const maxLabel = svg("text", { class: "tick", x: PAD.left - 6, y: PAD.top + 4, "text-anchor": "end" });
  maxLabel.textContent = String(max);
  const zero = svg("text", { class: "tick", x: PAD.left - 6, y: base + 4, "text-anchor": "end" });
  zero.textContent = "0";
  root.append(maxLabel, zero);
  const every = Math.ceil(buckets.length / 12); // at most ~12 period labels
  buckets.forEach((bucket, index) => {
    const h = (bucket.count / max) * plotH;
    const x = PAD.left + slot * index + (slot - barW) / 2;
    const bar = svg("rect", {
      class: "bar",
      x: x.toFixed(1),
      y: (base - h).toFixed(1),
      width: barW.toFixed(1),
      height: h.toFixed(1),
      "data-period": bucket.period,
      "data-count": bucket.count,
    });
    const tip = svg("title");
    tip.textContent = `${bucket.period}: ${bucket.count}`;
    bar.append(tip);
    root.append(bar);
    if (index % every === 0) {
      const label = svg("text", { class: "tick", x: (x + barW / 2).toFixed(1), y: base + 16, "text-anchor": "middle" });
      label.textContent = bucket.period;
      root.append(label);
    }
  });
  return root;
}

function table(buckets, unit, undated) {
  const heading = unit === "year" ? "Year" : "Month";
  return el("table", { class: "timeline-table", "data-testid": "timeline-table" },
    el("caption", {}, `New items by publication ${unit}`),
    el("thead", {}, el("tr", {}, el("th", { scope: "col" }, heading), el("th", { scope: "col" }, "Items"))),
    el("tbody", {},
      buckets.map((b) => el("tr", {}, el("th", { scope: "row" }, b.period), el("td", {}, String(b.count)))),
      undated ? el("tr", {}, el("th", { scope: "row" }, "No date"), el("td", {}, String(undated))) : null));
}

/** Fills ``container`` with the chart and its table, or says there is nothing to draw. */
export function renderTimeline(container, timeline, idBase = "timeline") {
  const { unit, buckets } = chooseBuckets(timeline);
  const undated = timeline?.undated ?? 0;
  if (!buckets.length) {
    const text = undated ? `No item has a publication date (${undated} undated).` : "No items to chart.";
    container.replaceChildren(el("p", { class: "status empty" }, text));
    return;
  }
  container.replaceChildren(
    el("figure", { class: "timeline-figure" }, chart(buckets, unit, idBase),
      undated ? el("figcaption", { class: "muted" }, `${undated} undated item(s) are not in the chart.`) : null),
    table(buckets, unit, undated),
  );
}
