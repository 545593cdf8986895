// The creation page's preview panel (seed 000, "Field Edits"): the configuration so far,
// every field editable in place. An edit stays local: no request is sent; the changed fields
// travel with the user's next answer to the guide as ``edits`` (field -> value, null clears).

import { el } from "/static/app/shared/dom.js";
import {
  choiceLabel,
  fieldControls,
  fieldLabel,
  markEdited,
  readControl,
  sameValue,
  writeControl,
} from "/static/app/streams/fields.js";

const STEP_STATES = { done: "done", skipped: "skipped", current: "current" };

export class Preview {
  constructor(form, steps, { onChange = () => {} } = {}) {
    this.form = form;
    this.stepList = steps;
    this.onChange = onChange;
    this.config = {};
    this.controls = fieldControls(form);
    this.note = form.querySelector('[data-testid="edits-note"]');
    this.undoButton = form.querySelector('[data-action="undo-edits"]');
    const changed = (event) => {
      if (event.target.dataset?.kind) this.refresh();
    };
    form.addEventListener("input", changed);
    form.addEventListener("change", changed);
    form.addEventListener("submit", (event) => event.preventDefault());
    this.undoButton.addEventListener("click", () => {
      this.show(this.config);
      this.note.textContent = "Your changes were undone.";
    });
  }

  /** The fields the workflow collects, in order (every control but the chat instructions). */
  dataFields() {
    return this.controls.map((c) => c.name).filter((name) => name !== "chat_instructions");
  }

  labelOf(name) {
    return fieldLabel(this.form, name);
  }

  /** A choice of field ``name`` as the user reads it ("Every two weeks" for biweekly). */
  choiceLabel(name, value) {
    return choiceLabel(this.form, name, value);
  }

  isOptional(name) {
    return this.form.querySelector(`[data-field="${CSS.escape(name)}"]`)?.hasAttribute("data-optional") ?? false;
  }

  /** Shows the server's ``config``; the controls named in ``keep`` keep what the user typed. */
  show(config, keep = new Set()) {
    this.config = config ?? {};
    for (const input of this.controls) {
      if (!keep.has(input.name)) writeControl(input, this.config[input.name]);
    }
    this.refresh();
  }

  /** Puts unsent edits back in their controls (a draft restored after a reload). */
  restore(edits) {
    for (const input of this.controls) {
      if (edits && Object.hasOwn(edits, input.name)) writeControl(input, edits[input.name]);
    }
    this.refresh();
  }

  /** The edits not sent yet: field -> value (null clears the field). */
  edits() {
    const edits = {};
    for (const input of this.controls) {
      const value = readControl(input);
      if (!sameValue(value, this.config[input.name])) edits[input.name] = value;
    }
    return edits;
  }

  /**
   * After a turn that carried ``sent``: show the new configuration, keeping any field the
   * user changed while the turn was running (it goes with the next answer).
   */
  afterTurn(config, sent) {
    const keep = new Set();
    for (const input of this.controls) {
      const base = Object.hasOwn(sent, input.name) ? sent[input.name] : this.config[input.name];
      if (!sameValue(readControl(input), base)) keep.add(input.name);
    }
    this.show(config, keep);
  }

  refresh() {
    const edits = this.edits();
    const count = Object.keys(edits).length;
    for (const input of this.controls) markEdited(input, Object.hasOwn(edits, input.name));
    this.note.textContent = count
      ? `${count} changed field${count === 1 ? "" : "s"}: sent with your next answer.`
      : "";
    this.undoButton.hidden = count === 0;
    this.onChange(edits);
  }

  /** The steps, each marked done, skipped or current. */
  showSteps({ step, completed = [], skipped = [] }) {
    const items = [...this.dataFields(), "review"].map((name) => {
      const state = skipped.includes(name) ? STEP_STATES.skipped
        : completed.includes(name) ? STEP_STATES.done
        : name === step ? STEP_STATES.current : "";
      const label = name === "review" ? "Review" : this.labelOf(name);
      const suffix = { done: " (done)", skipped: " (skipped)", current: " (current step)" }[state] ?? "";
      return el("li", {
        class: state, dataset: { step: name },
        "aria-current": name === step ? "step" : null,
      }, label, el("span", { class: "visually-hidden" }, suffix));
    });
    this.stepList.replaceChildren(...items);
  }
}
