// Notification targets (apprise URLs) of the user or of one stream, against the API at
// `base` (/api/v1/me/notifications or /api/v1/streams/{id}/notifications): the list (label
// and masked preview: the API never returns a URL), an add form, "Send test" with its
// outcome, and Delete after a confirmation. Text from the user or the server only ever
// reaches the page as text nodes.
//
// The partial _notification_targets.html renders a container with data-notify-base; this
// module mounts every such container when it loads. mountTargets() mounts one by hand.

import { api } from "/static/app/shared/api.js";
import { el, renderProblem } from "/static/app/shared/dom.js";

const EXAMPLES = ["ntfy://my-topic", "mailto://user:password@example.com", "json://hooks.example.com/path"];
const APPRISE_WIKI = "https://github.com/caronc/apprise/wiki";
const KIND_LABELS = { stream_report: "stream reports", research_report: "research results", test: "tests" };
const MAX_LABEL = 120;

let mounted = 0; // for ids unique in the page, when several lists are mounted

function kindsText(kinds) {
  if (!kinds) return "";
  return `Receives only: ${kinds.map((k) => KIND_LABELS[k] ?? k.replaceAll("_", " ")).join(", ")}`;
}

function outcomeText(delivery) {
  return delivery.ok
    ? "Test notification sent."
    : `Failed: ${delivery.error || "the service gave no reason."}`;
}

function showOutcome(node, delivery) {
  node.className = `notify-outcome ${delivery.ok ? "sent" : "failed"}`;
  node.dataset.ok = String(delivery.ok);
  node.textContent = outcomeText(delivery);
}

class TargetList {
  constructor(container, { base, description }) {
    this.base = base.replace(/\/+$/, "");
    this.targets = [];
    this.outcomes = new Map(); // target id -> its last test's delivery, kept across re-renders
    this.pending = null; // the target the confirmation dialog asks about
    const n = ++mounted;
    const id = (part) => `notify-${n}-${part}`;

    this.status = el("p", { class: "status loading", dataset: { testid: "targets-status" } },
      "Loading notification targets…");
    this.empty = el("p", { class: "status empty", dataset: { testid: "no-targets" } }, "No notification targets yet.");
    this.empty.hidden = true;
    this.loadProblem = el("div", { dataset: { testid: "targets-load-problem" } });
    this.list = el("ul", { class: "notify-list", dataset: { testid: "target-list" }, "aria-label": "Notification targets" });
    this.list.hidden = true;
    this.announcer = el("p", { class: "visually-hidden", role: "status", dataset: { testid: "targets-announce" } });

    this.url = el("input", {
      name: "url", type: "text", inputmode: "url", autocomplete: "off", autocapitalize: "off",
      spellcheck: "false", required: true, "aria-describedby": id("help"), placeholder: EXAMPLES[0],
    });
    this.label = el("input", { name: "label", type: "text", autocomplete: "off", maxlength: MAX_LABEL });
    this.submit = el("button", { type: "submit" }, "Add target");
    this.formProblem = el("div", { id: id("problem"), class: "notify-problem", dataset: { testid: "add-problem" } });
    this.formStatus = el("span", { class: "save-status", role: "status", dataset: { testid: "add-status" } });
    this.form = el("form", { class: "notify-add", dataset: { testid: "add-target" }, "aria-labelledby": id("add-h"), novalidate: true },
      el("h3", { id: id("add-h") }, "Add a target"),
      el("div", { class: "notify-fields" },
        el("label", { class: "notify-url" }, "Notification URL", this.url),
        el("label", { class: "notify-label" }, el("span", {}, "Label ", el("span", { class: "muted" }, "(optional)")), this.label),
        el("div", { class: "notify-submit" }, this.submit)),
      el("p", { id: id("help"), class: "notify-help muted", dataset: { testid: "url-help" } },
        "An apprise URL, for example ",
        EXAMPLES.flatMap((example, i) => [i ? (i === EXAMPLES.length - 1 ? " or " : ", ") : "", el("code", {}, example)]),
        ". It is stored encrypted and never shown again: the list shows it with its secrets masked. ",
        el("a", { href: APPRISE_WIKI, target: "_blank", rel: "noopener noreferrer" }, "Every service apprise supports"),
        "."),
      this.formProblem,
      this.formStatus);
    this.form.addEventListener("submit", (event) => {
      event.preventDefault();
      this.add();
    });
    for (const input of [this.url, this.label]) {
      input.addEventListener("input", () => input.removeAttribute("aria-invalid"));
    }

    this.dialogTarget = el("p", { class: "confirm-title" });
    this.dialog = el("dialog", { dataset: { testid: "confirm-target-delete" }, "aria-labelledby": id("confirm-h") },
      el("form", { method: "dialog" },
        el("h2", { id: id("confirm-h") }, "Delete this notification target?"),
        this.dialogTarget,
        el("p", { class: "muted" }, "It receives no more notifications. To use it again, add its URL again."),
        el("div", { class: "actions" },
          el("button", { value: "cancel", class: "secondary", autofocus: true }, "Cancel"),
          el("button", { value: "delete", class: "danger" }, "Delete"))));
    this.dialog.addEventListener("close", () => this.confirmed(this.dialog.returnValue === "delete"));

    container.replaceChildren(
      description ? el("p", { class: "muted" }, description) : "",
      this.status, this.loadProblem, this.empty, this.list, this.announcer, this.form, this.dialog);
    container.classList.add("notify-targets");
  }

  async load() {
    try {
      const listed = await api(this.base);
      this.targets = listed.targets;
    } catch (error) {
      this.status.hidden = true;
      renderProblem(this.loadProblem, error, "The notification targets could not be loaded.");
      return false;
    }
    this.loadProblem.replaceChildren();
    this.render();
    return true;
  }

  render() {
    const empty = this.targets.length === 0;
    this.status.hidden = true;
    this.empty.hidden = !empty;
    this.list.hidden = empty;
    this.list.replaceChildren(...this.targets.map((target) => this.row(target)));
  }

  row(target) {
    const outcome = el("p", { class: "notify-outcome", role: "status", dataset: { testid: "test-outcome" } });
    const last = this.outcomes.get(target.id);
    if (last) showOutcome(outcome, last);
    const problem = el("div", { class: "notify-problem", dataset: { testid: "target-problem" } });
    const test = el("button", { type: "button", class: "secondary", "aria-label": `Send test to ${target.label}`,
      dataset: { testid: "send-test" } }, "Send test");
    const remove = el("button", { type: "button", class: "danger", "aria-label": `Delete ${target.label}`,
      dataset: { testid: "delete-target" } }, "Delete");
    test.addEventListener("click", () => this.test(target, test, outcome, problem));
    remove.addEventListener("click", () => this.confirmDelete(target, remove, problem));
    return el("li", { class: "notify-target", dataset: { testid: "target", targetId: target.id } },
      el("div", { class: "notify-what" },
        el("span", { class: "notify-target-label", dataset: { testid: "target-label" } }, target.label),
        el("code", { class: "notify-preview", dataset: { testid: "target-preview" } }, target.preview),
        target.kinds ? el("span", { class: "muted notify-kinds" }, kindsText(target.kinds)) : ""),
      el("div", { class: "notify-actions" }, test, remove),
      outcome,
      problem);
  }

  async add() {
    this.formProblem.replaceChildren();
    this.formStatus.textContent = "";
    for (const input of [this.url, this.label]) input.removeAttribute("aria-invalid");
    const url = this.url.value.trim();
    if (!url) {
      this.refuse({ message: "Enter a notification URL.", body: { message: "Enter a notification URL.", hint: `For example ${EXAMPLES.join(", ")}.` } }, this.url);
      return;
    }
    const label = this.label.value.trim();
    this.submit.disabled = true;
    this.formStatus.textContent = "Checking the URL…";
    try {
      const added = await api(this.base, { method: "POST", body: JSON.stringify({ url, label: label || null }) });
      this.form.reset(); // the URL holds secrets: not left in the form once stored
      this.formStatus.textContent = "";
      await this.load();
      this.announce(`Added ${added.label}: ${added.preview}.`);
    } catch (error) {
      this.formStatus.textContent = "";
      const fields = error?.body?.fields || [];
      this.refuse(error, fields.some((f) => f.field === "label") ? this.label : this.url);
    } finally {
      this.submit.disabled = false;
    }
  }

  /** The refusal next to the form; the typed text stays for the user to correct. */
  refuse(error, input) {
    renderProblem(this.formProblem, error, "The target was not added.");
    input.setAttribute("aria-invalid", "true");
    const described = new Set((input.getAttribute("aria-describedby") || "").split(" ").filter(Boolean));
    described.add(this.formProblem.id);
    input.setAttribute("aria-describedby", [...described].join(" "));
    input.focus();
  }

  async test(target, button, outcome, problem) {
    button.disabled = true;
    problem.replaceChildren();
    outcome.className = "notify-outcome";
    delete outcome.dataset.ok;
    outcome.textContent = "Sending a test notification…";
    try {
      const delivery = await api(`${this.base}/${encodeURIComponent(target.id)}/test`, { method: "POST" });
      this.outcomes.set(target.id, delivery);
      showOutcome(outcome, delivery);
    } catch (error) {
      outcome.textContent = "";
      renderProblem(problem, error, "The test notification was not sent.");
    } finally {
      button.disabled = false;
    }
  }

  confirmDelete(target, button, problem) {
    this.pending = { target, button, problem };
    this.dialogTarget.replaceChildren(`${target.label} `, el("code", {}, target.preview));
    this.dialog.returnValue = "";
    this.dialog.showModal();
  }

  async confirmed(yes) {
    const pending = this.pending;
    this.pending = null;
    if (!pending) return;
    const { target, button, problem } = pending;
    if (!yes) {
      button.focus();
      return;
    }
    problem.replaceChildren();
    const index = this.targets.findIndex((t) => t.id === target.id);
    // The row stays until the list is loaded again: nothing in it may be pressed meanwhile.
    const row = button.closest("li");
    const controls = [...row.querySelectorAll("button")];
    row.setAttribute("aria-busy", "true");
    controls.forEach((control) => { control.disabled = true; });
    try {
      await api(`${this.base}/${encodeURIComponent(target.id)}`, { method: "DELETE" });
    } catch (error) {
      row.removeAttribute("aria-busy");
      controls.forEach((control) => { control.disabled = false; });
      renderProblem(problem, error, "The target was not deleted.");
      button.focus();
      return;
    }
    if (await this.load()) {
      this.announce(`Deleted ${target.label}.`);
      // Focus where the deleted row was: the next target's Delete, else the URL field.
      const rows = this.list.querySelectorAll('[data-testid="delete-target"]');
      (rows[Math.min(index, rows.length - 1)] || this.url).focus();
    }
  }

  announce(text) {
    this.announcer.textContent = text;
  }
}

/**
 * Mounts the targets of ``base`` into ``container`` (its content is replaced) and loads
 * them. ``description``: a line shown above the list (the partial renders its own).
 * Returns the list's controller; mounting a container twice returns the first one.
 */
export function mountTargets(container, { base, description = "" } = {}) {
  if (!base) throw new Error("mountTargets needs the API base of the targets.");
  if (container.notifyTargets) return container.notifyTargets;
  const targets = new TargetList(container, { base, description });
  container.notifyTargets = targets;
  targets.load();
  return targets;
}

document.querySelectorAll("[data-notify-base]").forEach((container) =>
  mountTargets(container, { base: container.dataset.notifyBase, description: container.dataset.notifyDescription }));
