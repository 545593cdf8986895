// The home dashboard (home.html): its times in the reader's own date and time, as every page
// shows them, and what the chat tray sees of it: the dashboard as the page shows it
// (web/_dashboard.py, chat_view), each time as the page writes it.

import { registerChatContext } from "/static/app/chat/page-context.js";
import { dateTime, showTimes } from "/static/app/shared/dates.js";

const root = document.querySelector('[data-page="home"]');
showTimes(root);

const data = root.querySelector('script[data-role="dashboard"]');
const dashboard = data ? JSON.parse(data.textContent) : null;

/** ``value`` with every ``when`` (an ISO time) as the page shows it. */
function asShown(value) {
  if (Array.isArray(value)) return value.map(asShown);
  if (value === null || typeof value !== "object") return value;
  return Object.fromEntries(Object.entries(value).map(([key, inner]) =>
    [key, key === "when" && typeof inner === "string" ? dateTime(inner) || inner : asShown(inner)]));
}

if (dashboard) {
  const shown = asShown(dashboard);
  registerChatContext(() => ({ dashboard: shown }));
}
