// The contract between a page and the chat tray (seed 002, "Page Context System").
// A page module registers what the chat needs from it; the tray only talks to this
// registry, never to a page's internals:
//   - registerChatContext(fn): fn() returns the page's part of ChatContext (form values,
//     pagination, sort, selection, viewer, result counts, item summaries). Called each time
//     the user sends a message, so it always describes what is on screen now.
//   - registerAcceptHandler(type, fn): what Accept does for a payload type on this page
//     (fn(data) may be async and may return a short confirmation text).
//   - registerClientAction(action, fn): a suggested action with handler "client".

const contextProviders = [];
const acceptHandlers = new Map();
const clientActions = new Map();

export function registerChatContext(provider) {
  contextProviders.push(provider);
}

export function registerAcceptHandler(type, handler) {
  acceptHandlers.set(type, handler);
}

export function registerClientAction(action, handler) {
  clientActions.set(action, handler);
}

// The page's key for the chat: <body data-chat-page="..."> set by the template.
export function currentPage() {
  return document.body.dataset.chatPage || "home";
}

export function collectContext() {
  const context = { current_page: currentPage() };
  for (const provider of contextProviders) {
    Object.assign(context, provider() || {});
  }
  return context;
}

export function canAccept(type) {
  return acceptHandlers.has(type);
}

export async function acceptPayload(type, data) {
  const handler = acceptHandlers.get(type);
  if (!handler) throw new Error("This page cannot apply that suggestion.");
  return handler(data);
}

export function hasClientAction(action) {
  return clientActions.has(action);
}

export async function runClientAction(action, params) {
  const handler = clientActions.get(action);
  if (!handler) throw new Error(`This page cannot do "${action}".`);
  return handler(params || {});
}
