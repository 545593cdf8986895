// The Library page's merged duplicates: list them (what matched, and what tells the two
// sides apart), split one, find more, merge the selected records by hand.

import { api } from "/static/app/shared/api.js";
import { el, renderProblem, renderStatus } from "/static/app/shared/dom.js";

const MERGES_SHOWN = 50;
const FEW = 5;
const MAX_MERGED = 51; // the record kept and the 50 copies one merge takes
const ID_LABELS = { doi: "DOI", pmid: "PMID", pmcid: "PMCID", arxiv_id: "arXiv" };

function titleKey(title) {
  return (title ?? "").toLowerCase().replace(/[^\p{L}\p{N}]+/gu, " ").trim();
}

/** The identifiers of ``side``; with ``unlike``, only those that differ from its. */
function identifiers(side, unlike = null) {
  const shown = [];
  for (const [name, label] of Object.entries(ID_LABELS)) {
    const value = side.identifiers?.[name];
    if (!value) {
      if (unlike?.identifiers?.[name]) shown.push(`no ${label}`);
      continue;
    }
    if (!unlike || unlike.identifiers?.[name] !== value) shown.push(`${label} ${value}`);
  }
  return shown;
}

/** Where a side came from and what tells it apart: for the copy, only what differs. */
function sideLine(side, unlike = null) {
  const parts = [side.source_file ? `from ${side.source_file}` : "from no file"];
  if (unlike) {
    if (side.year !== unlike.year) parts.push(`year ${side.year ?? "none"}`);
    const ids = identifiers(side, unlike);
    const own = identifiers(side).length ? "the same identifiers" : "no identifiers";
    parts.push(...(ids.length ? ids : [own]));
    if (titleKey(side.title) !== titleKey(unlike.title)) parts.push(`titled “${side.title}”`);
  } else {
    parts.push(...identifiers(side));
  }
  return parts.join(" · ");
}

export function attachMerges(root, { onChange, selection, onMerged }) {
  const duplicates = root.querySelector('[data-testid="duplicates"]');
  const status = duplicates.querySelector('[data-testid="duplicates-status"]');
  const mergeCount = duplicates.querySelector('[data-testid="merge-count"]');
  const details = duplicates.querySelector('[data-testid="merge-details"]');
  let opened = false; // the person's own choice wins once made
  const mergeList = duplicates.querySelector('[data-testid="merges"]');
  const findButton = duplicates.querySelector('[data-action="find-duplicates"]');

  function mergeItem(merge) {
    const button = el("button", { type: "button", class: "secondary", dataset: { action: "split" } }, "Split");
    button.setAttribute("aria-label", `Split “${merge.absorbed.title}” from the record it was merged into`);
    button.addEventListener("click", () => splitMerge(merge, button));
    const year = merge.kept.year ? ` (${merge.kept.year})` : "";
    return el("li", { class: "record-item", dataset: { mergeId: merge.id } },
      el("p", { class: "merge-title" }, `${merge.kept.title}${year}`),
      el("p", { class: "meta" }, `Matched on: ${merge.evidence}`),
      el("div", { class: "merge-side" },
        el("p", { class: "meta muted", dataset: { side: "kept" } },
          el("span", { class: "side-label" }, "Kept: "), sideLine(merge.kept)),
        el("p", { class: "meta muted", dataset: { side: "copy" } },
          el("span", { class: "side-label" }, "Merged copy: "), sideLine(merge.absorbed, merge.kept))),
      button);
  }

  async function refresh() {
    let page;
    try {
      page = await api(`/api/v1/library/merges?limit=${MERGES_SHOWN}`);
    } catch (error) {
      renderProblem(status, error, "The merged duplicates could not be loaded.");
      return;
    }
    mergeList.replaceChildren(...page.items.map(mergeItem));
    // A few merges are shown at once; a long list waits to be opened.
    if (!opened) details.open = page.total > 0 && page.total <= FEW;
    if (page.total === 0) mergeCount.textContent = "No merged duplicates.";
    else if (page.total <= page.items.length) {
      mergeCount.textContent = page.total === 1 ? "1 merged duplicate." : `${page.total} merged duplicates.`;
    } else {
      mergeCount.textContent = `The newest ${page.items.length} of ${page.total} merged duplicates.`;
    }
  }

  async function splitMerge(merge, button) {
    button.disabled = true;
    try {
      await api(`/api/v1/library/merges/${encodeURIComponent(merge.id)}/split`, { method: "POST" });
    } catch (error) {
      button.disabled = false;
      renderProblem(status, error, "The merge was not split.");
      return;
    }
    renderStatus(status,
      `Split: “${merge.absorbed.title}” is its own record again; the two will not be merged again.`, "done");
    await refresh();
    onChange();
    findButton.focus();
  }

  details.querySelector("summary").addEventListener("click", () => { opened = true; });

  // --- merging the selected records by hand ------------------------------------------------

  const mergeButton = duplicates.querySelector('[data-action="merge-selected"]');
  const mergeDialog = root.querySelector('[data-testid="confirm-merge"]');
  const choices = mergeDialog.querySelector('[data-role="merge-choices"]');
  let chosen = [];

  mergeButton.addEventListener("click", () => {
    chosen = selection();
    if (chosen.length < 2) {
      renderStatus(status, "Select two or more records of one work in the results first "
        + "(the box before each title), then merge them.", "warning");
      return;
    }
    if (chosen.length > MAX_MERGED) {
      renderStatus(status, `${chosen.length} records are selected; one merge takes at most `
        + `${MAX_MERGED}. Select the records of one work.`, "warning");
      return;
    }
    choices.replaceChildren(...chosen.map((record, index) => el("label", { class: "choice" },
      el("input", { type: "radio", name: "kept", value: record.id, checked: index === 0 }),
      ` ${record.title || "(no title)"}`)));
    mergeDialog.returnValue = "";
    mergeDialog.showModal();
  });

  mergeDialog.addEventListener("close", async () => {
    if (mergeDialog.returnValue !== "merge") {
      mergeButton.focus();
      return;
    }
    const kept = choices.querySelector("input:checked")?.value ?? chosen[0].id;
    const copies = chosen.map((record) => record.id).filter((id) => id !== kept);
    mergeButton.disabled = true;
    try {
      await api("/api/v1/library/merges", {
        method: "POST",
        body: JSON.stringify({ kept, copies }),
      });
    } catch (error) {
      renderProblem(status, error, "The records were not merged.");
      return;
    } finally {
      mergeButton.disabled = false;
    }
    const title = chosen.find((record) => record.id === kept)?.title ?? "";
    const merged = copies.length === 1 ? "1 record" : `${copies.length} records`;
    renderStatus(status, `Merged ${merged} into “${title}”. Split it below if that was wrong.`, "done");
    opened = true;
    details.open = true;
    onMerged();
    await refresh();
    onChange();
    mergeButton.focus();
  });

  findButton.addEventListener("click", async () => {
    findButton.disabled = true;
    duplicates.setAttribute("aria-busy", "true");
    renderStatus(status, "Comparing the records of your library…", "loading");
    try {
      const scan = await api("/api/v1/library/find-duplicates", { method: "POST" });
      const noun = scan.checked === 1 ? "record" : "records";
      renderStatus(status, scan.merged
        ? `Compared ${scan.checked} ${noun}: merged ${scan.merged} duplicate${scan.merged === 1 ? "" : "s"} `
          + `of ${scan.groups} work${scan.groups === 1 ? "" : "s"}.`
        : `Compared ${scan.checked} ${noun}: no duplicates found.`, "done");
      await refresh();
      if (scan.merged) onChange();
    } catch (error) {
      renderProblem(status, error, "Finding duplicates failed.");
    } finally {
      findButton.disabled = false;
      duplicates.removeAttribute("aria-busy");
    }
  });

  return { refresh };
}
