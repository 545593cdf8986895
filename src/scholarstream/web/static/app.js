// The shell's behaviour: main menu, server status card, provider-key form, logout. Feature
// pages add modules; what they share (API client, DOM helpers, SSE reader, Markdown) is in
// shared/.

import { api } from "/static/app/shared/api.js";

const HEALTH_TEXT = {
  status: { ok: "Up and answering" },
  database: { sqlite: "SQLite", postgresql: "PostgreSQL" },
  engine: {
    running: "Running",
    "not running": "Not running in this process: scheduled streams and background work need a worker (scholarstream worker)",
  },
};

async function showHealth(container) {
  const set = (field, text) => {
    const el = container.querySelector(`[data-field="${field}"]`);
    if (el) el.textContent = text;
  };
  const say = (field, value) => set(field, HEALTH_TEXT[field]?.[value] ?? value);
  try {
    const health = await api("/health");
    say("status", health.status);
    say("database", health.database);
    say("engine", health.engine);
    set("offline", health.offline ? "Offline mode: none configured" : "Configured");
  } catch (error) {
    set("status", `Not answering: ${error.message}`);
  }
}

// The main menu up to 1180 px wide: the Menu button shows and hides it (app.css); Escape closes
// it and gives the focus back to the button.
function bindMenu(button) {
  const menu = document.getElementById(button.getAttribute("aria-controls"));
  const setOpen = (open) => button.setAttribute("aria-expanded", String(open));
  button.addEventListener("click", () => setOpen(button.getAttribute("aria-expanded") !== "true"));
  menu?.addEventListener("keydown", (event) => {
    if (event.key === "Escape" && button.getAttribute("aria-expanded") === "true") {
      setOpen(false);
      button.focus();
    }
  });
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
document.querySelectorAll('[data-action="menu"]').forEach(bindMenu);
