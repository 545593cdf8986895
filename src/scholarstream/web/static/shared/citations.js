// The audit of an answer's citations (grounding/ on the server), as a line of text: the
// research page and the chat tray both show it.

const VERDICTS = [
  ["supported", "supported"],
  ["contradicted", "contradicted"],
  ["weak", "weak"],
  ["unsupported", "unsupported"],
  ["invalid", "invalid"],
];
export const MARK_LEGEND = "Citations are marked: ✓ supported by the cited record, ≠ contradicted, "
  + "~ weakly supported, ✗ not addressed by it.";

export function countsOf(audit) {
  const counts = Object.fromEntries(VERDICTS.map(([name]) => [name, 0]));
  for (const check of audit.checks) counts[check.verdict] += 1;
  return counts;
}

/** "12 citations: 9 supported, 2 weak, 1 unsupported, 0 invalid; 1 unverified reference". */
export function auditSummary(audit) {
  const counts = countsOf(audit);
  const shown = VERDICTS.filter(([name]) => name !== "contradicted" || counts.contradicted);
  const total = audit.checks.length;
  let text = `${total} citation${total === 1 ? "" : "s"}: `
    + shown.map(([name, label]) => `${counts[name]} ${label}`).join(", ");
  const unverified = audit.unverified.length;
  if (unverified) text += `; ${unverified} unverified reference${unverified === 1 ? "" : "s"}`;
  if (!total && !unverified) text = "No citations of the evidence pack.";
  return text;
}

