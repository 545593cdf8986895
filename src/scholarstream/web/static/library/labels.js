// The Library page's collections, tags and notes: the collections panel (filter by one,
// export, rename, delete), "Add to collection" and tags for the selected records or for
// every result of the search, and the collections, tags and note of the open record.

import { api } from "/static/app/shared/api.js";
import { el, renderProblem, renderStatus } from "/static/app/shared/dom.js";

const count = (n, one, many = `${one}s`) => `${n.toLocaleString()} ${n === 1 ? one : many}`;
const SEARCH_FIELDS = ["q", "year_from", "year_to", "publication_type", "collection", "tag", "has_note"];

/** "Taurine, include" → ["Taurine", "include"]. */
function tagList(text) {
  return String(text ?? "").split(",").map((tag) => tag.trim()).filter(Boolean);
}

/** The API's search body for ``state``: every record it lists (related ones if asked). */
export function searchBody(state, related) {
  const body = { related: Boolean(related) };
  for (const name of SEARCH_FIELDS) {
    const value = String(state[name] ?? "").trim();
    if (!value) continue;
    if (name === "year_from" || name === "year_to") body[name] = Number.parseInt(value, 10);
    else if (name === "has_note") body[name] = value === "true";
    else body[name] = value;
  }
  return body;
}

/** What a result shows of its labels: "In: A, B · Tags: x, y · Note: …". */
export function labelsLine(item) {
  const parts = [];
  if (item.collections?.length) parts.push(`In: ${item.collections.map((c) => c.name).join(", ")}`);
  if (item.tags?.length) parts.push(`Tags: ${item.tags.join(", ")}`);
  if (item.note) parts.push(`Note: ${item.note.length > 80 ? `${item.note.slice(0, 80)}…` : item.note}`);
  return parts.length ? el("p", { class: "meta labels-line", dataset: { role: "labels" } }, parts.join(" · ")) : null;
}

export function attachLabels(root, { readState, go, selection, relatedTaken, onChange }) {
  const panel = root.querySelector('[data-testid="collections"]');
  const panelList = panel.querySelector('[data-testid="collection-list"]');
  const panelStatus = panel.querySelector('[data-testid="collections-status"]');
  const searchForm = root.querySelector('[data-form="search"]');
  const organize = root.querySelector('[data-testid="organize"]');
  const organizeStatus = organize.querySelector('[data-testid="organize-status"]');
  const collectForm = organize.querySelector('[data-form="collect"]');
  const tagForm = organize.querySelector('[data-form="tag"]');
  const whichSelection = organize.querySelector('[data-role="which-selection"]');
  const whichResults = organize.querySelector('[data-role="which-results"]');
  const confirmDelete = root.querySelector('[data-testid="confirm-delete-collection"]');
  let collections = [];
  let results = 0; // records "all the results" takes
  let lastSelected = 0; // records selected when the choice was last shown

  // --- what the page offers to type or pick ------------------------------------------------

  function fillDatalist(id, values) {
    root.querySelector(`#${id}`).replaceChildren(...values.map((value) => el("option", { value })));
  }

  async function loadCollections() {
    try {
      collections = await api("/api/v1/library/collections");
    } catch (error) {
      renderProblem(panelStatus, error, "The collections could not be loaded.");
      return;
    }
    renderPanel();
    fillDatalist("library-collections", collections.map((c) => c.name));
    const select = searchForm.elements.collection;
    const chosen = select.value || readState().collection;
    select.replaceChildren(el("option", { value: "" }, "Any"),
      ...collections.map((c) => el("option", { value: c.id }, c.name)));
    if (chosen && !collections.some((c) => c.id === chosen)) {
      select.append(el("option", { value: chosen }, "(a collection no longer there)"));
    }
    select.value = chosen ?? "";
  }

  async function loadTags() {
    try {
      fillDatalist("library-tags", (await api("/api/v1/library/tags")).map((tag) => tag.value));
    } catch {
      // A courtesy: tags can still be typed.
    }
  }

  /** The publication types the library holds, each with its count: a choice, not free
   *  text (a type no record has would only be refused). */
  async function loadTypes() {
    let facets;
    try {
      facets = await api("/api/v1/library/facets");
    } catch {
      return; // A courtesy: the facets under the search offer the types too.
    }
    const select = searchForm.elements.publication_type;
    const chosen = select.value || readState().publication_type;
    select.replaceChildren(el("option", { value: "" }, "Any"),
      ...facets.publication_types.map((facet) => el("option", { value: facet.value },
        `${facet.value.charAt(0).toUpperCase() + facet.value.slice(1)} (${facet.count.toLocaleString()})`)));
    if (chosen && ![...select.options].some((option) => option.value === chosen)) {
      select.append(el("option", { value: chosen }, chosen));
    }
    select.value = chosen ?? "";
  }

  function refreshChoices() {
    loadCollections();
    loadTags();
    loadTypes();
  }

  // --- the collections panel -----------------------------------------------------------------

  function exportLink(collection) {
    const params = new URLSearchParams({ format: "ris", collection: collection.id });
    return el("a", { href: `/api/v1/library/export?${params}`, download: true,
      "aria-label": `Export “${collection.name}” as RIS` }, "Export (RIS)");
  }

  function collectionItem(collection) {
    const show = el("a", { href: `/library?collection=${encodeURIComponent(collection.id)}` }, collection.name);
    show.addEventListener("click", (event) => {
      if (event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
      event.preventDefault();
      go({ ...emptySearch(readState()), collection: collection.id });
    });
    const rename = el("button", { type: "button", class: "link", "aria-label": `Rename “${collection.name}”` }, "Rename");
    const remove = el("button", { type: "button", class: "link danger-link",
      "aria-label": `Delete the collection “${collection.name}”` }, "Delete…");
    const item = el("li", { dataset: { collectionId: collection.id } },
      el("span", { class: "collection-name" }, show),
      el("span", { class: "muted" }, count(collection.records, "record")),
      el("span", { class: "collection-actions" }, exportLink(collection), rename, remove));
    rename.addEventListener("click", () => item.replaceChildren(renameForm(collection)));
    remove.addEventListener("click", () => askDelete(collection));
    return item;
  }

  function renameForm(collection) {
    const input = el("input", { name: "name", value: collection.name, required: true, autocomplete: "off" });
    const form = el("form", { class: "form inline" },
      el("label", {}, `New name for “${collection.name}”`, input),
      el("button", { type: "submit" }, "Save"),
      el("button", { type: "button", class: "secondary", dataset: { action: "cancel" } }, "Cancel"));
    form.querySelector('[data-action="cancel"]').addEventListener("click", renderPanel);
    form.addEventListener("submit", async (event) => {
      event.preventDefault();
      try {
        const renamed = await api(`/api/v1/library/collections/${encodeURIComponent(collection.id)}`,
          { method: "PATCH", body: JSON.stringify({ name: input.value }) });
        renderStatus(panelStatus, `Renamed to “${renamed.name}”.`, "done");
      } catch (error) {
        renderProblem(panelStatus, error, "The collection was not renamed.");
        return;
      }
      await loadCollections();
      onChange();
    });
    queueMicrotask(() => input.select());
    return form;
  }

  function askDelete(collection) {
    confirmDelete.querySelector('[data-role="title"]').textContent =
      `“${collection.name}” (${count(collection.records, "record")})`;
    confirmDelete.returnValue = "";
    confirmDelete.onclose = async () => {
      if (confirmDelete.returnValue !== "delete") return;
      try {
        await api(`/api/v1/library/collections/${encodeURIComponent(collection.id)}`, { method: "DELETE" });
      } catch (error) {
        renderProblem(panelStatus, error, "The collection was not deleted.");
        return;
      }
      renderStatus(panelStatus,
        `Deleted the collection “${collection.name}”; its records stay in your library.`, "done");
      const state = readState();
      await loadCollections();
      if (state.collection === collection.id) go({ ...state, collection: "", offset: 0, record: "" });
      else onChange();
    };
    confirmDelete.showModal();
  }

  function renderPanel() {
    panelList.replaceChildren(...collections.map(collectionItem));
    panelList.hidden = collections.length === 0;
  }

  // --- "Collect or tag": the selected records, or every result of the search ------------------

  function setChoices({ selected, total }) {
    whichSelection.disabled = selected === 0;
    organize.querySelector('[data-role="which-selection-label"]').textContent = selected
      ? `the ${selected === 1 ? "selected record" : `${selected.toLocaleString()} selected records`}`
      : "the selected records (none yet)";
    // The choice follows the selection: ticking the first record makes it "the selected
    // records", clearing the selection makes it all the results again.
    if (selected > 0 && lastSelected === 0) whichSelection.checked = true;
    if (selected === 0 && whichSelection.checked) whichResults.checked = true;
    lastSelected = selected;
    if (total !== undefined) results = total;
    whichResults.disabled = results === 0;
    organize.querySelector('[data-role="which-results-label"]').textContent = results
      ? `all ${count(results, "record")} of this search`
      : "all the results of this search (none)";
  }

  /** The records the forms act on: ``{ids}`` or ``{search}``, and how to say them. */
  function named() {
    if (whichSelection.checked && !whichSelection.disabled) {
      const ids = [...selection()];
      return { body: { ids }, what: count(ids.length, "selected record") };
    }
    return { body: { search: searchBody(readState(), relatedTaken()) }, what: "the results of the search" };
  }

  async function addToCollection(name, body) {
    // As the server compares names: spaces collapsed, case ignored.
    const key = (text) => text.trim().replace(/\s+/g, " ").toLowerCase();
    const existing = collections.find((c) => key(c.name) === key(name));
    if (existing) {
      return { made: false, change: await api(
        `/api/v1/library/collections/${encodeURIComponent(existing.id)}/records`,
        { method: "POST", body: JSON.stringify(body) }) };
    }
    return { made: true, change: await api("/api/v1/library/collections",
      { method: "POST", body: JSON.stringify({ name, ...body }) }) };
  }

  function collectedText({ made, change }) {
    const info = change.collection;
    const already = change.already ? ` (${count(change.already, "was", "were")} in it already)` : "";
    return made
      ? `Made the collection “${info.name}” with ${count(change.added, "record")}.`
      : `Added ${count(change.added, "record")} to “${info.name}”${already}; it holds ${count(info.records, "record")}.`;
  }

  collectForm.addEventListener("submit", async (event) => {
    event.preventDefault();
    const name = collectForm.elements.collection.value;
    const { body } = named();
    const button = collectForm.querySelector("button");
    button.disabled = true;
    try {
      renderStatus(organizeStatus, collectedText(await addToCollection(name, body)), "done");
      collectForm.reset();
    } catch (error) {
      renderProblem(organizeStatus, error, "Nothing was added to the collection.");
      return;
    } finally {
      button.disabled = false;
    }
    await loadCollections();
    onChange();
  });

  tagForm.addEventListener("submit", async (event) => {
    event.preventDefault();
    const removing = event.submitter?.value === "remove";
    const tags = tagList(tagForm.elements.tags.value);
    const { body } = named();
    let change;
    try {
      change = await api("/api/v1/library/tags", { method: "POST",
        body: JSON.stringify({ ...body, [removing ? "remove" : "add"]: tags }) });
    } catch (error) {
      renderProblem(organizeStatus, error, removing ? "No tag was removed." : "No record was tagged.");
      return;
    }
    const quoted = tags.map((tag) => `“${tag}”`).join(", ");
    renderStatus(organizeStatus, removing
      ? `Removed ${quoted} from ${count(change.records, "record")} (${count(change.removed, "tag")} taken off).`
      : `Tagged ${count(change.records, "record")} with ${quoted} (${count(change.added, "tag")} added).`, "done");
    tagForm.reset();
    await loadTags();
    onChange();
  });

  // --- the open record's collections, tags and note -----------------------------------------

  const box = root.querySelector('[data-testid="record-labels"]');
  const boxStatus = box.querySelector('[data-testid="record-labels-status"]');
  let open = null; // the record shown: {id, title}

  function chip(text, label, onRemove, href = null) {
    const remove = el("button", { type: "button", class: "chip-remove", "aria-label": label }, "×");
    remove.addEventListener("click", onRemove);
    const name = href ? el("a", { href }, text) : el("span", {}, text);
    return el("li", { class: "chip" }, name, remove);
  }

  async function reload() {
    const item = await api(`/api/v1/library/records/${encodeURIComponent(open.id)}`);
    showRecord(item);
  }

  async function act(work, failed) {
    try {
      const said = await work();
      if (said) renderStatus(boxStatus, said, "done");
      await reload();
    } catch (error) {
      renderProblem(boxStatus, error, failed);
    }
  }

  function showRecord(item) {
    open = { id: item.id, title: item.record.title };
    box.hidden = false;
    box.querySelector('[data-role="record-collections"]').replaceChildren(...(item.collections ?? []).map((c) =>
      chip(c.name, `Remove from “${c.name}”`, () => act(async () => {
        await api(`/api/v1/library/collections/${encodeURIComponent(c.id)}/records/remove`,
          { method: "POST", body: JSON.stringify({ ids: [item.id] }) });
        await loadCollections();
        return `Removed from “${c.name}” (the record stays in your library).`;
      }, "The record was not removed from the collection."),
      `/library?collection=${encodeURIComponent(c.id)}`)));
    box.querySelector('[data-role="record-tags"]').replaceChildren(...(item.tags ?? []).map((tag) =>
      chip(tag, `Remove the tag “${tag}”`, () => act(async () => {
        await api("/api/v1/library/tags", { method: "POST",
          body: JSON.stringify({ ids: [item.id], remove: [tag] }) });
        await loadTags();
        return `Removed the tag “${tag}”.`;
      }, "The tag was not removed."))));
    box.querySelector('[data-form="note"]').elements.text.value = item.note ?? "";
  }

  function hideRecord() {
    open = null;
    box.hidden = true;
    boxStatus.replaceChildren();
  }

  box.querySelector('[data-form="record-collection"]').addEventListener("submit", (event) => {
    event.preventDefault();
    const form = event.currentTarget;
    const name = form.elements.collection.value;
    act(async () => {
      const done = await addToCollection(name, { ids: [open.id] });
      form.reset();
      await loadCollections();
      return done.made ? `Made the collection “${done.change.collection.name}” with this record.`
        : `Added to “${done.change.collection.name}”.`;
    }, "The record was not added to the collection.");
  });
  box.querySelector('[data-form="record-tag"]').addEventListener("submit", (event) => {
    event.preventDefault();
    const form = event.currentTarget;
    const tags = tagList(form.elements.tags.value);
    act(async () => {
      await api("/api/v1/library/tags", { method: "POST", body: JSON.stringify({ ids: [open.id], add: tags }) });
      form.reset();
      await loadTags();
      return `Tagged with ${tags.map((tag) => `“${tag}”`).join(", ")}.`;
    }, "The record was not tagged.");
  });
  box.querySelector('[data-form="note"]').addEventListener("submit", (event) => {
    event.preventDefault();
    const text = event.currentTarget.elements.text.value;
    act(async () => {
      await api(`/api/v1/library/records/${encodeURIComponent(open.id)}/note`,
        { method: "PUT", body: JSON.stringify({ text }) });
      return text.trim() ? "Saved the note." : "Deleted the note.";
    }, "The note was not saved.");
  });

  refreshChoices();
  return { refreshChoices, loadCollections, setChoices, showRecord, hideRecord,
    collectionName: (id) => collections.find((c) => c.id === id)?.name ?? null };
}

/** ``state`` with every filter and the words cleared (the page size kept). */
export function emptySearch(state) {
  const cleared = { ...state, offset: 0, record: "" };
  for (const name of SEARCH_FIELDS) cleared[name] = "";
  return cleared;
}
