// The stream's fields in the forms of the stream pages (templates/_stream_fields.html): one
// control per field, its kind in data-kind (text, list, choice, boolean). List fields are
// edited one item per line, so an item may contain a comma.

export function textToList(text) {
  return String(text ?? "").split(/\r?\n/).map((item) => item.trim()).filter(Boolean);
}

export function listToText(list) {
  return (list ?? []).join("\n");
}

/** Every field control of a form, in order. */
export function fieldControls(form) {
  return [...form.querySelectorAll("[data-kind]")];
}

/** The value a control holds, as the API takes it; ``null`` when it is empty. */
export function readControl(input) {
  switch (input.dataset.kind) {
    case "boolean":
      return input.checked;
    case "list": {
      const items = textToList(input.value);
      return items.length ? items : null;
    }
    default: {
      const text = input.value.trim();
      return text || null;
    }
  }
}

export function writeControl(input, value) {
  if (input.dataset.kind === "boolean") input.checked = Boolean(value);
  else if (input.dataset.kind === "list") input.value = listToText(value);
  else input.value = value ?? "";
}

function normal(value) {
  if (value === undefined || value === "" || (Array.isArray(value) && value.length === 0)) return null;
  return value;
}

/** Do two values of a field say the same (an empty list, empty text and null do)? */
export function sameValue(a, b) {
  return JSON.stringify(normal(a)) === JSON.stringify(normal(b));
}

/** A field's label as its form shows it ("Goals"). */
export function fieldLabel(root, name) {
  const label = root.querySelector(`[data-field="${CSS.escape(name)}"] label`);
  const text = label?.firstChild?.textContent?.trim();
  return text || String(name).replaceAll("_", " ");
}

/** A value as one line of text: lists joined with commas. */
export function shownValue(value) {
  return Array.isArray(value) ? value.join(", ") : String(value ?? "");
}

/** Marks a field as changed (or not) next to its control. */
export function markEdited(input, edited) {
  const field = input.closest("[data-field]");
  const tag = field?.querySelector('[data-role="edited"]');
  field?.classList.toggle("is-edited", edited);
  if (tag) tag.hidden = !edited;
}

/** A choice as the user reads it: its option's text in the form ("Every two weeks"). */
export function choiceLabel(root, name, value) {
  const select = root.querySelector(`select[name="${CSS.escape(name)}"]`);
  const option = select ? [...select.options].find((o) => o.value === value) : null;
  return option?.textContent?.trim() || String(value ?? "");
}
