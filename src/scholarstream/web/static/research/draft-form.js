// The research form (research_form.html): the question, the title, the models to ask (a
// checkbox each, from GET /api/v1/research/models) and the synthesis model. The New
// research form of the list page and a draft's edit form are both this form. It never
// clears what the user typed on an error: callers show the API's error next to it.

import { api } from "/static/app/shared/api.js";
import { el, renderProblem } from "/static/app/shared/dom.js";

export const RESEARCH_API = "/api/v1/research";

let choices = null;

/** The models a research may ask and the default synthesis model (fetched once). */
export function modelChoices() {
  choices ??= api(`${RESEARCH_API}/models`).catch((error) => {
    choices = null;
    throw error;
  });
  return choices;
}

const sameList = (a, b) => a.length === b.length && a.every((value, index) => value === b[index]);

export class ResearchForm {
  constructor(form) {
    this.form = form;
    this.prompt = form.elements.namedItem("prompt");
    this.title = form.elements.namedItem("title");
    this.synthesis = form.elements.namedItem("synthesisLlm");
    this.modelList = form.querySelector('[data-role="model-list"]');
    this.problemBox = form.querySelector('[data-role="form-problem"]');
    this.statusLine = form.querySelector('[data-role="form-status"]');
    this.noModel = form.querySelector('[data-role="no-model"]');
    this.startButton = form.querySelector('button[data-action="start"]');
    this.startWhy = form.querySelector('[data-role="start-why"]');
    this.titleHint = form.querySelector('[data-role="title-hint"]');
    this.available = [];
    this.saved = null;
    this.choicesShown = false;
    this.working = false;
    form.addEventListener("change", (event) => {
      if (event.target.name === "selectedLlms") this.updateStart();
    });
  }

  /** Start research is offered only when it can start: with no model set up, or none
   *  ticked, the button is disabled and the line under it says why (and the button's
   *  description says it to a screen reader). */
  updateStart() {
    const why = !this.choicesShown ? null
      : !this.available.length && !this.read().selectedLlms.length
        ? "Start research needs a model: choose one in Settings first (see above)."
        : !this.read().selectedLlms.length ? "Tick at least one model to ask, then start." : null;
    this.startWhy.textContent = why ?? "";
    this.startWhy.hidden = !why;
    this.startButton.disabled = this.working || Boolean(why);
  }

  /** Where a title left empty comes from: ``titleModel`` (from GET /models) writes one,
   *  else it is cut from the question. */
  showTitleHelp(titleModel) {
    this.titleHint.textContent = titleModel
      ? `Left empty, ${titleModel} writes a short title from the question (if it cannot, the title is cut from the question).`
      : "Left empty, the title is cut from the start of the question.";
  }

  /** Where a draft's title came from (its ``titleSource``), and what emptying it does. */
  showTitleSource(source) {
    const words = {
      model: "A model wrote this title from the question. Type your own to replace it; empty it to cut the title from the question.",
      prompt: "This title was cut from the start of the question, and follows the question until you type your own.",
      user: "You wrote this title. Empty it to cut the title from the question instead.",
    };
    this.titleHint.textContent = words[source] ?? words.user;
  }

  /** Fills the form with ``values`` ({title, prompt, selectedLlms, synthesisLlm}); the
   *  boxes offered are the available models and any the values name. */
  show(values, available = this.available) {
    this.showText(values);
    this.showChoices(available, this.saved.selectedLlms, this.saved.synthesisLlm);
  }

  /** Takes ``values`` as the saved state and fills the title and the question. */
  showText(values) {
    this.saved = {
      title: values.title ?? "",
      prompt: values.prompt ?? "",
      selectedLlms: [...(values.selectedLlms ?? [])],
      synthesisLlm: values.synthesisLlm ?? "",
    };
    this.title.value = this.saved.title;
    this.prompt.value = this.saved.prompt;
  }

  /** The model boxes (``selected`` checked) and the synthesis choice. Leaves what was
   *  typed in the title and the question alone: the models may arrive after typing began. */
  showChoices(available, selected, synthesis) {
    this.available = available;
    this.showModels(selected);
    this.showSynthesis(synthesis);
    this.choicesShown = true;
    this.updateStart();
  }

  showModels(selected) {
    const models = [...new Set([...this.available, ...selected])];
    this.noModel.hidden = this.available.length > 0;
    if (!models.length) {
      this.modelList.replaceChildren(el("p", { class: "status empty", dataset: { testid: "no-models" } },
        "No model to choose from yet."));
      return;
    }
    const id = this.form.dataset.prefix || "research";
    this.modelList.replaceChildren(el("ul", { class: "model-choices" }, models.map((model, index) => {
      const box = el("input", {
        type: "checkbox", name: "selectedLlms", value: model, id: `${id}-model-${index}`,
        checked: selected.includes(model),
      });
      const missing = !this.available.includes(model);
      return el("li", {}, el("label", { class: "check", for: box.id }, box, el("span", { class: "model-name" }, model),
        missing ? el("span", { class: "muted" }, " (no API key)") : null));
    })));
  }

  showSynthesis(current) {
    const models = [...new Set([...this.available, ...(current ? [current] : [])])];
    this.synthesis.disabled = !models.length;
    if (!models.length) {
      this.synthesis.replaceChildren(el("option", { value: "" }, "No model available"));
      return;
    }
    this.synthesis.replaceChildren(...models.map((model) =>
      el("option", { value: model, selected: model === current }, model)));
    if (current) this.synthesis.value = current;
  }

  read() {
    const saved = this.saved ?? { selectedLlms: [], synthesisLlm: "" };
    return {
      title: this.title.value.trim(),
      prompt: this.prompt.value,
      // Until the choices are shown, the models are the saved ones.
      selectedLlms: this.choicesShown
        ? [...this.form.querySelectorAll('input[name="selectedLlms"]:checked')].map((box) => box.value)
        : [...saved.selectedLlms],
      synthesisLlm: this.choicesShown ? this.synthesis.value : saved.synthesisLlm,
    };
  }

  /** The body of POST /draft: a left-out title is cut from the prompt; left-out models
   *  (the choices have not loaded yet) are the server's defaults. */
  draftBody() {
    const values = this.read();
    return {
      prompt: values.prompt,
      ...(values.title ? { title: values.title } : {}),
      ...(this.choicesShown ? { selectedLlms: values.selectedLlms } : {}),
      ...(values.synthesisLlm ? { synthesisLlm: values.synthesisLlm } : {}),
    };
  }

  /** The fields that differ from what was last shown (a PATCH body); an emptied title
   *  is sent empty, which cuts it from the prompt again. */
  changes() {
    const values = this.read();
    const saved = this.saved ?? { title: "", prompt: "", selectedLlms: [], synthesisLlm: "" };
    const changed = {};
    if (values.title !== saved.title.trim()) changed.title = values.title;
    if (values.prompt !== saved.prompt) changed.prompt = values.prompt;
    if (!sameList([...values.selectedLlms].sort(), [...saved.selectedLlms].sort())) {
      changed.selectedLlms = values.selectedLlms;
    }
    if (values.synthesisLlm && values.synthesisLlm !== saved.synthesisLlm) changed.synthesisLlm = values.synthesisLlm;
    return changed;
  }

  /** Every field as a PATCH body (an empty title is cut from the prompt again). */
  allFields() {
    const { synthesisLlm, selectedLlms, ...values } = this.read();
    return {
      ...values,
      ...(this.choicesShown ? { selectedLlms } : {}),
      ...(synthesisLlm ? { synthesisLlm } : {}),
    };
  }

  problem(error, lead) {
    this.status("");
    renderProblem(this.problemBox, error, lead);
    const fields = new Set((error?.body?.fields ?? []).map((f) => String(f.field).split(".").pop()));
    this.prompt.setAttribute("aria-invalid", fields.has("prompt") ? "true" : "false");
  }

  clearProblem() {
    this.problemBox.replaceChildren();
    this.prompt.removeAttribute("aria-invalid");
  }

  status(text) {
    this.statusLine.textContent = text;
  }

  busy(on) {
    this.working = on;
    for (const button of this.form.querySelectorAll("button")) button.disabled = on;
    this.form.setAttribute("aria-busy", on ? "true" : "false");
    if (!on) this.updateStart();
  }

  /** What the chat sees of the form: the values as typed. */
  context() {
    const values = this.read();
    return {
      prompt: values.prompt,
      title: values.title,
      models: values.selectedLlms,
      synthesis_model: values.synthesisLlm,
    };
  }
}

/** Runs ``submit(action)`` for the form's buttons: Enter or the submit button starts. */
export function bindButtons(researchForm, submit) {
  const { form } = researchForm;
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const action = event.submitter?.dataset.action || "start";
    // Enter in a field submits too: it starts only when Start research may.
    if (action === "start" && researchForm.startButton.disabled) {
      researchForm.startWhy.hidden = false;
      return;
    }
    submit(action);
  });
  form.querySelectorAll('button[type="button"][data-action]').forEach((button) => {
    button.addEventListener("click", () => {
      if (form.reportValidity()) submit(button.dataset.action);
    });
  });
}
