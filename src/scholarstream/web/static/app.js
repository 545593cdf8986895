// The shell's behaviour: status card, provider-key form, logout. Feature pages add modules;
// what they share (API client, DOM helpers, SSE reader, Markdown) is in shared/.

import { api } from "/static/app/shared/api.js";

async function showHealth(container) {
  const set = (field, text) => {
    const el = container.querySelector(`[data-field="${field}"]`);
    if (el) el.textContent = text;
  };
  try {
    const health = await api("/health");
    set("status", health.status);
    set("database", health.database);
    set("engine", health.engine);
    set("offline", health.offline ? "offline mode (none configured)" : "configured");
  } catch (error) {
    set("status", `unavailable: ${error.message}`);
  }
}

function bindProviderKeyForm(form) {
  const message = form.querySelector('[data-role="message"]');
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const data = new FormData(form);
    try {
      await api(`/api/v1/me/provider-keys/${encodeURIComponent(data.get("provider"))}`, {
        method: "PUT",
        body: JSON.stringify({ api_key: data.get("api_key") }),
      });
      window.location.reload();
    } catch (error) {
      message.textContent = error.message;
    }
  });
}

function bindKeyRemoval(button) {
  button.addEventListener("click", async () => {
    try {
      await api(`/api/v1/me/provider-keys/${encodeURIComponent(button.dataset.deleteKey)}`, { method: "DELETE" });
      window.location.reload();
    } catch (error) {
      const message = document.querySelector('[data-form="provider-key"] [data-role="message"]');
      if (message) message.textContent = error.message;
    }
  });
}

function bindLogout(button) {
  button.addEventListener("click", async () => {
    await api("/api/v1/auth/logout", { method: "POST" });
    window.location.assign("/login");
  });
}

const health = document.querySelector('[data-testid="health"]');
if (health) showHealth(health);
document.querySelectorAll('[data-form="provider-key"]').forEach(bindProviderKeyForm);
document.querySelectorAll("[data-delete-key]").forEach(bindKeyRemoval);
document.querySelectorAll('[data-action="logout"]').forEach(bindLogout);
