// Settings -> Models: the model of each role (your choice, the server default, the settings),
// your OpenAI-compatible endpoints (add, load their models, test, remove), and, for admins,
// the server defaults. Everything goes through /api/v1/models; text from servers and models
// only reaches the page as text nodes (el).

import { api } from "/static/app/shared/api.js";
import { el, renderProblem } from "/static/app/shared/dom.js";

const root = document.querySelector('[data-testid="models"]');

// Model names offered for the providers you have a key for (any other name can be typed).
const SUGGESTED = {
  openai: ["gpt-4.1-mini", "gpt-4.1", "gpt-4o-mini"],
  anthropic: ["claude-sonnet-4-5", "claude-haiku-4-5"],
  google: ["gemini-2.5-flash", "gemini-2.5-pro"],
  openrouter: ["openai/gpt-4.1-mini", "meta-llama/llama-3.1-8b-instruct"],
  ollama: ["llama3.1", "qwen2.5", "qwen2.5-coder:0.5b"],
};
const SOURCE = { user: "your choice", "server default": "server default", settings: "settings", test: "test" };

const loaded = new Map(); // endpoint name -> the model ids its /v1/models listed

function part(name) {
  return root.querySelector(`[data-role="${name}"]`);
}

function suggestions(state) {
  const names = new Set();
  for (const provider of state.providers) {
    if (!provider.has_credentials) continue;
    for (const model of SUGGESTED[provider.name] || []) names.add(`${provider.name}:${model}`);
  }
  for (const endpoint of state.endpoints) {
    if (endpoint.checked_model) names.add(endpoint.checked_model);
    for (const id of loaded.get(endpoint.name) || []) names.add(`${endpoint.name}:${id}`);
  }
  return [...names].sort();
}

function message(name, text) {
  const out = part(name);
  if (out) out.textContent = text;
}

async function refresh() {
  const state = await api("/api/v1/models");
  part("suggestions").replaceChildren(...suggestions(state).map((value) => el("option", { value })));
  renderRoles(state);
  renderEndpoints(state);
  renderServerDefaults(state);
  return state;
}

function modelInput(label, value) {
  return el("input", {
    type: "text", list: "model-suggestions", value: value || "", "aria-label": label,
    placeholder: "provider:model", autocomplete: "off", spellcheck: "false", maxlength: 200,
  });
}

function renderRoles(state) {
  const rows = state.roles.map((role) => {
    const input = modelInput(`Model for ${role.role}`, role.source === "user" ? role.model : "");
    if (role.source !== "user" && role.model) input.placeholder = role.model;
    const save = el("button", { type: "button" }, "Save");
    const reset = el("button", { type: "button", class: "link", hidden: role.source !== "user" }, "Use the server's");
    const test = el("button", { type: "button", disabled: !role.model }, "Test");
    save.setAttribute("aria-label", `Save the model for ${role.role}`);
    reset.setAttribute("aria-label", `Use the server's model for ${role.role}`);
    test.setAttribute("aria-label", `Test the model of ${role.role}`);
    save.addEventListener("click", () => choose(role.role, input.value));
    input.addEventListener("keydown", (event) => {
      if (event.key === "Enter") choose(role.role, input.value);
    });
    reset.addEventListener("click", () => forget(role.role));
    test.addEventListener("click", () => runCheck({ role: role.role }, `the ${role.role} role`, test));
    return el("tr", { dataset: { roleName: role.role, state: role.state } },
      el("th", { scope: "row" }, role.role),
      el("td", {}, role.purpose),
      el("td", {}, input),
      el("td", {}, SOURCE[role.source] || "—"),
      el("td", { dataset: { testid: "role-status" } }, role.status || role.problem || ""),
      el("td", { class: "actions" }, save, reset, test));
  });
  part("role-rows").replaceChildren(...rows);
}

async function choose(role, value) {
  const model = value.trim();
  if (!model) return forget(role);
  try {
    await api(`/api/v1/models/roles/${encodeURIComponent(role)}`, {
      method: "PUT", body: JSON.stringify({ model }),
    });
    await refresh();
    message("roles-message", `The ${role} role now uses ${model}.`);
  } catch (error) {
    renderProblem(part("check-result"), error, `Could not choose ${model}:`);
    message("roles-message", "");
  }
}

async function forget(role) {
  try {
    await api(`/api/v1/models/roles/${encodeURIComponent(role)}`, { method: "DELETE" });
    await refresh();
    message("roles-message", `The ${role} role uses the server's model again.`);
  } catch (error) {
    renderProblem(part("check-result"), error);
  }
}

function renderEndpoints(state) {
  const list = part("endpoints");
  if (!state.endpoints.length) {
    list.replaceChildren(el("li", { class: "muted" }, "No endpoints of your own yet."));
    return;
  }
  list.replaceChildren(...state.endpoints.map((endpoint) => endpointItem(endpoint)));
}

function endpointItem(endpoint) {
  const models = loaded.get(endpoint.name);
  const found = endpoint.checked_at
    ? `${endpoint.check_ok ? "Checked OK" : "Check failed"} (${endpoint.checked_model}); `
    : "Not checked yet; ";
  const detail = `${found}structured output: ${endpoint.effective_structured_output}, tool calls: ${endpoint.effective_supports_tools ? "yes" : "no"}.`;
  const load = el("button", { type: "button" }, "Load models");
  load.setAttribute("aria-label", `Load the models of ${endpoint.name}`);
  const remove = el("button", { type: "button", class: "link" }, "Remove");
  remove.setAttribute("aria-label", `Remove the endpoint ${endpoint.name}`);
  const status = el("output", { "aria-live": "polite" });
  const item = el("li", { class: "endpoint", dataset: { endpoint: endpoint.name } },
    el("p", {}, el("strong", {}, endpoint.name), " ", el("code", {}, endpoint.base_url),
      endpoint.has_key ? " (with a key)" : ""),
    el("p", { class: "muted" }, detail),
    el("div", { class: "actions" }, load, remove),
    status);
  if (models) item.append(modelPicker(endpoint, models));
  load.addEventListener("click", async () => {
    status.textContent = "Loading models…";
    await loadModels(endpoint.name, status);
  });
  remove.addEventListener("click", async () => {
    try {
      await api(`/api/v1/models/endpoints/${encodeURIComponent(endpoint.name)}`, { method: "DELETE" });
      loaded.delete(endpoint.name);
      await refresh();
    } catch (error) {
      renderProblem(status, error);
    }
  });
  return item;
}

function modelPicker(endpoint, models) {
  const id = `endpoint-model-${endpoint.name}`;
  const select = el("select", { id, name: "model" },
    models.map((model) => el("option", { value: model, selected: `${endpoint.name}:${model}` === endpoint.checked_model }, model)));
  const use = el("button", { type: "button" }, "Use for default");
  const test = el("button", { type: "button" }, "Test");
  test.setAttribute("aria-label", `Test the chosen model of ${endpoint.name}`);
  use.addEventListener("click", () => choose("default", `${endpoint.name}:${select.value}`));
  test.addEventListener("click", () =>
    runCheck({ endpoint: endpoint.name, model: select.value }, `${endpoint.name}:${select.value}`, test));
  return el("div", { class: "endpoint-models" },
    el("label", { for: id }, `Model of ${endpoint.name}`), select, use, test);
}

async function loadModels(name, status) {
  try {
    const body = await api(`/api/v1/models/endpoints/${encodeURIComponent(name)}/models`);
    loaded.set(name, body.models);
    await refresh();
    const count = body.models.length;
    message("roles-message", `${name} serves ${count} model${count === 1 ? "" : "s"}.`);
  } catch (error) {
    renderProblem(status, error, `Could not load the models of ${name}:`);
  }
}

async function runCheck(subject, label, button) {
  const box = part("check-result");
  button.disabled = true;
  box.replaceChildren(el("p", { class: "status info" }, `Testing ${label}… (a local model on a CPU may take a minute)`));
  try {
    const report = await api("/api/v1/models/check", { method: "POST", body: JSON.stringify(subject) });
    box.replaceChildren(checkReport(report));
    await refresh();
  } catch (error) {
    renderProblem(box, error, `Could not test ${label}:`);
  } finally {
    button.disabled = false;
  }
}

const STEP_LABEL = {
  reachable: "Reachable",
  completion: "Answers",
  tools: "Calls tools",
  json_schema: "JSON schema output",
};

function checkReport(report) {
  const verdict = report.usable ? "can be used" : "cannot be used";
  return el("section", { class: "check-report", "aria-label": `Test of ${report.model}` },
    el("p", {}, el("strong", {}, report.model), ` ${verdict}.`),
    el("ul", { class: "check-steps" }, report.steps.map((step) =>
      el("li", { dataset: { step: step.name, ok: String(step.ok) } },
        el("span", { "aria-hidden": "true", class: step.ok ? "ok" : "failed" }, step.ok ? "✓" : "✗"),
        el("span", { class: "visually-hidden" }, step.ok ? "passed: " : "failed: "),
        `${STEP_LABEL[step.name] || step.name}: ${step.detail}`))),
    report.usable
      ? el("p", { dataset: { testid: "detected" } },
        `Structured output: ${report.structured_output}. Tool calls: ${report.supports_tools ? "yes" : "no"}.`)
      : null);
}

function renderServerDefaults(state) {
  const box = part("server-defaults");
  box.hidden = !state.is_admin;
  if (!state.is_admin) return;
  const rows = state.roles.map((role) => {
    const input = modelInput(`Server default for ${role.role}`, state.server_defaults[role.role]);
    const save = el("button", { type: "button" }, "Save");
    const clear = el("button", { type: "button", class: "link", hidden: !state.server_defaults[role.role] }, "Clear");
    save.setAttribute("aria-label", `Save the server default for ${role.role}`);
    clear.setAttribute("aria-label", `Clear the server default for ${role.role}`);
    save.addEventListener("click", () => setDefault(role.role, input.value.trim()));
    clear.addEventListener("click", () => setDefault(role.role, ""));
    return el("tr", {}, el("th", { scope: "row" }, role.role), el("td", {}, input), el("td", { class: "actions" }, save, clear));
  });
  part("default-rows").replaceChildren(...rows);
}

async function setDefault(role, model) {
  const path = `/api/v1/models/server-defaults/${encodeURIComponent(role)}`;
  try {
    if (model) await api(path, { method: "PUT", body: JSON.stringify({ model }) });
    else await api(path, { method: "DELETE" });
    await refresh();
    message("defaults-message", model ? `Every user without a choice now gets ${model} for ${role}.` : `The server default for ${role} is cleared.`);
  } catch (error) {
    renderProblem(part("defaults-message"), error);
  }
}

function bindEndpointForm(form) {
  const out = form.querySelector('[data-role="message"]');
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const data = new FormData(form);
    const name = String(data.get("name")).trim();
    const body = { base_url: String(data.get("base_url")).trim() };
    if (data.get("api_key")) body.api_key = String(data.get("api_key"));
    out.textContent = "Saving…";
    try {
      await api(`/api/v1/models/endpoints/${encodeURIComponent(name)}`, { method: "PUT", body: JSON.stringify(body) });
      form.reset();
      out.textContent = `Saved ${name}. Loading its models…`;
      await refresh();
      await loadModels(name, out);
      if (loaded.has(name)) {
        out.textContent = `Saved ${name}: pick one of its models below.`;
        root.querySelector(`#endpoint-model-${CSS.escape(name)}`)?.focus();
      }
    } catch (error) {
      renderProblem(out, error, `Could not save ${name}:`);
    }
  });
}

if (root) {
  bindEndpointForm(root.querySelector('[data-form="endpoint"]'));
  refresh().catch((error) => renderProblem(part("check-result"), error, "Could not load your models:"));
}
