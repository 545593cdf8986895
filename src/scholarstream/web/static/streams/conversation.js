// The creation page's conversation with the guide: the log of messages (the guide's answer
// streamed into it token by token) and, under it, what the guide offers for the next answer:
// suggestion chips (single select), option checkboxes with their continue button (multi
// select), a skip button on an optional step, and the review's confirmation.
// The guide's text is never trusted HTML: it reaches the page through text nodes only.

import { el } from "/static/app/shared/dom.js";
import { renderMarkdown } from "/static/app/shared/markdown.js";

/** The message log (role="log", so what is added is read out). */
export class GuideLog {
  constructor(log) {
    this.log = log;
  }

  clear() {
    this.log.replaceChildren();
  }

  scrollToEnd() {
    this.log.scrollTop = this.log.scrollHeight;
  }

  assistant(text) {
    const node = el("article", { class: "guide-msg assistant", "aria-label": "Guide" },
      el("div", { class: "guide-text" }, renderMarkdown(text)));
    this.log.append(node);
    this.scrollToEnd();
    return node;
  }

  /** A message of the user's as the history stores it: what they typed, or their action in words. */
  user(message) {
    const node = el("article", { class: "guide-msg user", "aria-label": "You" });
    fillUser(node, message);
    this.log.append(node);
    this.scrollToEnd();
    return node;
  }

  /** The user's message while its turn runs; ``settle`` swaps in the stored version. */
  pendingUser(message) {
    const node = this.user(message);
    node.classList.add("pending");
    return {
      settle: (stored) => {
        node.classList.remove("pending");
        if (stored) fillUser(node, stored);
      },
      remove: () => node.remove(),
    };
  }

  /** The guide's answer as it streams: plain text while it grows, then the final message. */
  startAnswer() {
    const text = el("div", { class: "guide-text streaming" });
    const note = el("p", { class: "muted guide-note" }, "The guide is writing…");
    const node = el("article", {
      class: "guide-msg assistant", "aria-label": "Guide", "aria-busy": "true",
      dataset: { testid: "streaming-message" },
    }, note, text);
    this.log.append(node);
    this.scrollToEnd();
    return {
      append: (delta) => {
        note.remove();
        text.append(delta);
        this.scrollToEnd();
      },
      /** The text so far is void (the model was asked again). */
      reset: () => {
        text.replaceChildren();
        note.textContent = "The guide is trying again…";
        node.prepend(note);
      },
      finish: (message) => {
        note.remove();
        text.classList.remove("streaming");
        text.replaceChildren(renderMarkdown(message));
        node.removeAttribute("aria-busy");
        delete node.dataset.testid;
        this.scrollToEnd();
      },
      remove: () => node.remove(),
    };
  }
}

function fillUser(node, message) {
  node.replaceChildren(...[
    message.action ? el("p", { class: "guide-action" }, message.action) : null,
    message.content ? el("div", { class: "guide-text" }, renderMarkdown(message.content)) : null,
  ].filter(Boolean));
}

/**
 * What the guide offers under its last message. ``handlers``: choose(field, value),
 * chooseMany(field, values), skip(field), confirm(). ``labelOf(field)`` names a field;
 * ``choiceLabel(field, value)`` shows a choice as the user reads it (the value is sent).
 */
export class OfferPanel {
  constructor(container, { handlers, labelOf, isOptional, choiceLabel = (field, value) => value }) {
    this.container = container;
    this.handlers = handlers;
    this.labelOf = labelOf;
    this.isOptional = isOptional;
    this.choiceLabel = choiceLabel;
  }

  render(offer, step) {
    const parts = [];
    if (step !== "complete" && offer) {
      const field = offer.target_field;
      if (field && offer.suggestions?.length) parts.push(this.chips(field, offer.suggestions));
      if (field && offer.options?.length) parts.push(this.options(field, offer.options, offer.proposed_message));
    }
    if (step && this.isOptional(step)) parts.push(this.skip(step));
    if (step === "review") parts.push(this.review());
    this.container.replaceChildren(...parts);
  }

  setDisabled(disabled) {
    for (const control of this.container.querySelectorAll("button, input")) control.disabled = disabled;
  }

  chips(field, suggestions) {
    const label = this.labelOf(field);
    return el("div", { class: "offer-chips", role: "group", "aria-label": `Suggestions for ${label.toLowerCase()}`,
      dataset: { testid: "suggestions", field } },
      suggestions.map((value) => {
        const chip = el("button", { type: "button", class: "chip", dataset: { value } }, this.choiceLabel(field, value));
        chip.addEventListener("click", () => this.handlers.choose(field, value));
        return chip;
      }));
  }

  options(field, options, proposed) {
    const label = this.labelOf(field);
    const problem = el("p", { class: "offer-problem", role: "alert" });
    const boxes = options.map((value) => el("input", { type: "checkbox", value }));
    const button = el("button", { type: "button" }, proposed || `Continue with the selected ${label.toLowerCase()}`);
    button.addEventListener("click", () => {
      const values = boxes.filter((box) => box.checked).map((box) => box.value);
      if (!values.length) {
        problem.textContent = "Tick at least one option first, or type your own answer below.";
        return;
      }
      problem.textContent = "";
      this.handlers.chooseMany(field, values);
    });
    return el("fieldset", { class: "offer-options", dataset: { testid: "options", field } },
      el("legend", {}, `${label}: tick the ones that apply`),
      el("ul", {}, boxes.map((box, i) => el("li", {}, el("label", { class: "check" }, box, ` ${options[i]}`)))),
      el("div", { class: "offer-actions" }, button),
      problem);
  }

  skip(field) {
    const button = el("button", { type: "button", class: "secondary", dataset: { action: "skip" } },
      `Skip ${this.labelOf(field).toLowerCase()}`);
    button.addEventListener("click", () => this.handlers.skip(field));
    return el("div", { class: "offer-skip" },
      button, el("span", { class: "muted" }, " This step is optional."));
  }

  review() {
    const button = el("button", { type: "button", dataset: { action: "create" } }, "Create the stream");
    button.addEventListener("click", () => this.handlers.confirm());
    return el("div", { class: "offer-review", dataset: { testid: "review" } },
      el("p", {}, "Check the stream in the panel. Create it, change a field there, or tell the guide what to change."),
      button);
  }
}
