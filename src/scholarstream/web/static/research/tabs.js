// Tabs for a research's reports (the synthesis, then one per model), after the WAI-ARIA
// tabs pattern: a tablist of buttons, one tabpanel shown; Left/Right arrows move between
// tabs (and select them), Home/End go to the first and last. The selected tab stays
// selected when the tabs are shown again (the research was read again).

import { el } from "/static/app/shared/dom.js";

let counter = 0;

export class ReportTabs {
  constructor(container, { label }) {
    this.container = container;
    this.label = label;
    this.prefix = `report-tabs-${++counter}`;
    this.panels = [];
    this.selected = null;
  }

  /** ``panels``: [{key, label, note, render()}]. */
  show(panels) {
    this.panels = panels;
    if (!panels.some((panel) => panel.key === this.selected)) this.selected = panels[0]?.key ?? null;
    if (!panels.length) {
      this.container.replaceChildren();
      return;
    }
    const list = el("div", { role: "tablist", "aria-label": this.label, class: "report-tablist" });
    const views = [];
    panels.forEach((panel, index) => {
      const tabId = `${this.prefix}-tab-${index}`;
      const panelId = `${this.prefix}-panel-${index}`;
      const selected = panel.key === this.selected;
      const tab = el("button", {
        type: "button", role: "tab", id: tabId, "aria-controls": panelId,
        "aria-selected": selected ? "true" : "false", tabindex: selected ? "0" : "-1",
        class: "report-tab", dataset: { key: panel.key },
      }, panel.label, panel.note ? el("span", { class: "tab-note" }, ` (${panel.note})`) : null);
      tab.addEventListener("click", () => this.select(panel.key));
      tab.addEventListener("keydown", (event) => this.onKey(event, index));
      list.append(tab);
      const view = el("div", {
        role: "tabpanel", id: panelId, "aria-labelledby": tabId, tabindex: "0",
        class: "report-panel", hidden: !selected, dataset: { key: panel.key },
      });
      if (selected) view.append(panel.render());
      views.push(view);
    });
    this.container.replaceChildren(list, ...views);
  }

  select(key, { focus = false } = {}) {
    this.selected = key;
    const tabs = [...this.container.querySelectorAll('[role="tab"]')];
    const views = [...this.container.querySelectorAll('[role="tabpanel"]')];
    this.panels.forEach((panel, index) => {
      const on = panel.key === key;
      tabs[index].setAttribute("aria-selected", on ? "true" : "false");
      tabs[index].tabIndex = on ? 0 : -1;
      views[index].hidden = !on;
      if (on && !views[index].hasChildNodes()) views[index].append(panel.render());
      if (on && focus) tabs[index].focus();
    });
  }

  onKey(event, index) {
    const last = this.panels.length - 1;
    const target = { ArrowRight: index === last ? 0 : index + 1, ArrowLeft: index === 0 ? last : index - 1, Home: 0, End: last }[event.key];
    if (target === undefined) return;
    event.preventDefault();
    this.select(this.panels[target].key, { focus: true });
  }

  selectedLabel() {
    return this.panels.find((panel) => panel.key === this.selected)?.label ?? null;
  }
}
